/**
 * The attempts of one call, for the wrapper that made it. `instrument(gate)` (the call log,
 * OpenTelemetry) puts each call's attempts on its line or span; they came only from the gate's
 * `onAttempt` hook, which is fixed when `createGate` runs, so a wrapper of a gate it did not create
 * (a module's default export, the proxy's) recorded none. Through this seam a wrapper passes, with
 * the call's options, a listener that hears that call's attempt events and no other's: nothing is
 * registered on the gate, so nothing outlives the call.
 *
 * The listener travels under a symbol key of the call options (an enumerable one, so a wrapper in
 * between that copies the options with `{ ...opts }` keeps it), which `createGate`'s gate reads with
 * the other options; a gate that does not know it ignores it. Attempt events carry no payload:
 * the same fields `onAttempt` receives.
 * @module
 */
import type { AttemptEvent } from "./execute.js";
import type { CallOptions } from "./gate.js";

/** @internal The call options' key of the call's attempt listener. */
export const ATTEMPT_LISTENER: unique symbol = Symbol.for("toolgate.attemptListener");

/** @internal Call options that may carry an attempt listener. */
export interface ListenedOptions extends CallOptions {
  /** Hears each attempt of this call, after the gate's `onAttempt`; what it throws goes to `onHookError`. */
  readonly [ATTEMPT_LISTENER]?: (event: AttemptEvent) => void;
}

/**
 * @internal The caller's options as a plain object, with `listener` added after any listener they
 * carry (a wrapper inside another). Each option is read once, here; the gate reads the copy.
 * Options that are not an object, or cannot be read, are passed on as they are: the gate refuses
 * them, and no attempt runs.
 */
export function _withAttemptListener(opts: CallOptions | undefined, listener: (event: AttemptEvent) => void): CallOptions | undefined {
  if (opts === undefined) return { [ATTEMPT_LISTENER]: listener } as ListenedOptions;
  if (typeof opts !== "object" || opts === null) return opts;
  try {
    const { callId, idempotencyKey, principal, signal } = opts;
    return { callId, idempotencyKey, principal, signal, [ATTEMPT_LISTENER]: _inTurn(attemptListenerIn(opts), listener) } as ListenedOptions;
  } catch {
    return opts;
  }
}

/**
 * @internal Options without an attempt listener: for a wrapper that makes a call of its own with
 * its caller's options (the proxy's argument check), whose attempts are not the caller's.
 */
export function _withoutAttemptListener(opts: CallOptions): CallOptions {
  return attemptListenerIn(opts) === undefined ? opts : ({ ...opts, [ATTEMPT_LISTENER]: undefined } as CallOptions);
}

/** @internal `first`, then `then`, for each event (just `then` without a first). */
export function _inTurn(first: ((e: AttemptEvent) => void) | undefined, then: (e: AttemptEvent) => void): (e: AttemptEvent) => void {
  if (first === undefined) return then;
  return (e) => {
    first(e);
    then(e);
  };
}

function attemptListenerIn(opts: object): ((e: AttemptEvent) => void) | undefined {
  const l: unknown = (opts as ListenedOptions)[ATTEMPT_LISTENER];
  return typeof l === "function" ? (l as (e: AttemptEvent) => void) : undefined;
}
