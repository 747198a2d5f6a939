/**
 * Errors a tool throws (or a check returns) to tell the gate what happened, and the
 * configuration error thrown for programmer misuse.
 * @module
 */
import type { Effect } from "./result.js";

const BRAND = Symbol.for("toolgate.ToolError");

/** How a failure is classified: the executor decides retries from this, never the model. */
export type FailureKind = "transient" | "denied" | "rejected" | "permanent";

/** Options for {@link reject}. */
export interface RejectOptions {
  /**
   * Whether an effect happened before the rule said no: `"none"` (default), `"applied"`, or
   * `"unknown"` when the service refused without saying whether it changed anything. Only a
   * write's effect is reported; a read's is always `"none"`.
   */
  readonly effect?: Effect;
}

/** Options for {@link transient}. */
export interface TransientOptions {
  /** The dependency asked to wait this long (e.g. from `Retry-After`). */
  readonly retryAfterMs?: number;
}

/**
 * A classified tool failure. Create one with {@link reject}, {@link transient} or {@link denied};
 * check with {@link isToolError} (works across two copies of the package).
 */
export class ToolError extends Error {
  /** Brand that survives duplicate package copies. */
  readonly [BRAND] = true;
  override readonly name = "ToolError";
  constructor(
    readonly kind: FailureKind,
    message: string,
    readonly retryAfterMs?: number,
    readonly effect: Effect = "none",
  ) {
    super(message);
  }
}

/**
 * True for any {@link ToolError}, even one from another copy of toolgate.
 * @example if (isToolError(e) && e.kind === "transient") ...
 */
export function isToolError(e: unknown): e is ToolError {
  if (typeof e !== "object" || e === null) return false;
  try {
    return (e as Record<symbol, unknown>)[BRAND] === true;
  } catch {
    return false; // a Proxy whose trap throws is no ToolError
  }
}

/**
 * A business rule says no. The message is shown to the model: keep it short and free of secrets.
 * Throw it from `execute`, or return it from `check`.
 * @example if (order.refunded) throw reject("order already refunded");
 */
export function reject(message: string, options: RejectOptions = {}): ToolError {
  return new ToolError("rejected", message, undefined, options.effect ?? "none");
}

/**
 * A failure worth retrying later (a timeout, a 503). Reads are retried locally within the caps.
 * @example throw transient("upstream busy", { retryAfterMs: 500 });
 */
export function transient(message = "transient failure", options: TransientOptions = {}): ToolError {
  return new ToolError("transient", message, options.retryAfterMs);
}

/**
 * The service refused the caller (permission, scope, expired credential). Never retried. The
 * message is shown to the model (redacted, at most 200 characters); without one, the gate's own
 * "The service denied the call", as for a 401 or 403 the default classifier reads.
 * @example if (res.status === 403) throw denied("missing scope orders:read");
 */
export function denied(message = "The service denied the call"): ToolError {
  return new ToolError("denied", message);
}

/**
 * What `onHookError` hears, and `request.signal` aborts with, when `authorize` or `approve` did not
 * answer in time (`authorizeTimeoutMs`, `approvalTimeoutMs`): the call was refused (DENIED), and
 * an answer that comes later is ignored.
 * @example
 * createGate({ tools, approve, onHookError: (hook, e) => { if (e instanceof HookTimeoutError) log(`${hook}: no answer in ${e.timeoutMs} ms`); } });
 */
export class HookTimeoutError extends Error {
  override readonly name = "HookTimeoutError";
  constructor(
    /** The hook that did not answer. */
    readonly hook: "authorize" | "approve",
    /** How long the gate waited, ms. */
    readonly timeoutMs: number,
  ) {
    super(`${hook} did not answer within ${timeoutMs} ms; the call was refused`);
  }
}

const CONFIG_BRAND = Symbol.for("toolgate.ConfigError");

/**
 * Thrown synchronously by `defineTool` and `createGate` for programmer misuse (bad configuration).
 * Calls never throw it: they return envelopes.
 */
export class ToolgateConfigError extends Error {
  readonly [CONFIG_BRAND] = true;
  override readonly name = "ToolgateConfigError";
  constructor(
    /** Stable code, e.g. `E_TOOL_NAME`. */
    readonly code: string,
    message: string,
    /** `{ cause }`: the underlying error, when there is one (e.g. a driver that failed to load). */
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** True for a {@link ToolgateConfigError} from any copy of toolgate. */
export function isToolgateConfigError(e: unknown): e is ToolgateConfigError {
  return typeof e === "object" && e !== null && (e as Record<symbol, unknown>)[CONFIG_BRAND] === true;
}
