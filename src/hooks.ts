/**
 * Observability and decision hooks: the record a reviewer needs, and safe invocation so a hook
 * that throws (or rejects) never changes a call's result.
 * @module
 */
import type { Effect, ToolErrorCode } from "./result.js";
import { isPromiseLike } from "./standard.js";
import { HookTimeoutError } from "./errors.js";

/** One record per call, for `onCall`. Never contains the payload. */
export interface CallRecord {
  readonly tool: string;
  readonly version: string;
  readonly callId: string;
  readonly ok: boolean;
  /** The envelope code, or `"OK"` on success. */
  readonly code: ToolErrorCode | "OK";
  readonly attempts: number;
  readonly durationMs: number;
  /** For a success: `applied` for writes, `none` for reads. */
  readonly effect: Effect;
  readonly retryable: boolean;
  /** True when the result came from the ledger, not an execution. */
  readonly replayed: boolean;
  /**
   * Epoch ms when the call started: its monotonic start time on the wall clock (the offset between
   * the two is read again at most once a second, so a wall-clock step shows within a second; under
   * fake timers the fake clocks are read each time, so a test's `setSystemTime` shows at once).
   */
  readonly startedAt: number;
  /**
   * Paths of the issues, when the failure had any (never values): a segment the tool's schema does
   * not declare (a record's key, an unknown key) is `*`, since such keys are the caller's data.
   * The envelope keeps the full paths for the model.
   */
  readonly issuePaths?: readonly string[];
}

/** Where a hook failure is reported. */
export type HookErrorHandler = (hook: string, error: unknown) => void;

const warned = new Set<string>();

/** Default: one process warning per hook name, so a broken hook is visible but not noisy. */
export const warnOnceOnHookError: HookErrorHandler = (hook, error) => {
  const late = error instanceof HookTimeoutError;
  const key = late ? `${hook} (timeout)` : hook;
  if (warned.has(key)) return;
  warned.add(key);
  const what = late ? `did not answer within ${error.timeoutMs} ms; the call was refused` : "threw; its result was ignored";
  process.emitWarning(`toolgate: the ${hook} hook ${what}`, { code: "TOOLGATE_HOOK" });
};

/**
 * The user's error handler, made safe to call anywhere: it is the last resort, so what it throws
 * or rejects with is dropped (nothing is left to report it to), and a call's result never depends on it.
 */
export function guardHandler(handler: HookErrorHandler): HookErrorHandler {
  return (hook, error) => {
    try {
      const r: unknown = handler(hook, error);
      if (isPromiseLike(r)) r.then(undefined, () => undefined);
    } catch {
      // dropped: see above
    }
  };
}

/** Wrap a fire-and-forget hook so it never throws and rejections are reported. */
export function safeHook<A>(name: string, fn: ((a: A) => unknown) | undefined, handler: HookErrorHandler): ((a: A) => void) | undefined {
  if (fn === undefined) return undefined;
  const onError = guardHandler(handler);
  return (a: A) => {
    try {
      const r = fn(a);
      if (isPromiseLike(r)) r.then(undefined, (e: unknown) => onError(name, e));
    } catch (e) {
      onError(name, e);
    }
  };
}
