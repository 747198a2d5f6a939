/**
 * Run several sets of gate hooks as one: a call log and OpenTelemetry, or either plus your own.
 * @module
 */
import type { CallRecord } from "../hooks.js";
import type { AttemptEvent } from "../execute.js";
import type { BreakerState } from "../policy/breaker.js";
import type { ObserverHooks } from "./_observe.js";

/** Any subset of the observation hooks of `createGate`. */
export interface HookSet {
  onCall?(record: CallRecord): unknown;
  onAttempt?(event: AttemptEvent): unknown;
  onBreakerChange?(event: { readonly tool: string; readonly state: BreakerState }): unknown;
}

/**
 * Combine hook sets: each hook calls every set's hook in order. One set that throws does not stop
 * the others; the first error is rethrown after all ran, so the gate reports it via `onHookError`.
 * @example
 * const log = createCallLog(), otel = createGateTelemetry();
 * const gate = otel.instrument(log.instrument(createGate({ tools, ...composeHooks(log.hooks, otel.hooks) })));
 */
export function composeHooks(...sets: readonly HookSet[]): ObserverHooks {
  const fan =
    <K extends keyof HookSet>(key: K) =>
    (arg: Parameters<NonNullable<HookSet[K]>>[0]): void => {
      let failure: { error: unknown } | undefined;
      for (const s of sets) {
        const fn = s[key] as ((a: unknown) => unknown) | undefined;
        if (fn === undefined) continue;
        try {
          fn.call(s, arg);
        } catch (error) {
          failure ??= { error };
        }
      }
      if (failure !== undefined) throw failure.error;
    };
  return { onCall: fan("onCall"), onAttempt: fan("onAttempt"), onBreakerChange: fan("onBreakerChange") };
}
