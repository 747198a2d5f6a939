/**
 * The result envelope every gate call resolves to, and its constructors.
 * @module
 */

/** Stable failure codes. See the situation table in the README. */
export type ToolErrorCode =
  | "UNKNOWN_TOOL"
  | "INVALID_INPUT"
  | "DENIED"
  | "CONFLICT"
  | "REJECTED"
  | "RETRYABLE"
  | "INVALID_OUTPUT"
  | "FAILED";

/** Every failure code, in a fixed order (handy for tests and metrics). */
export const TOOL_ERROR_CODES: readonly ToolErrorCode[] = Object.freeze([
  "UNKNOWN_TOOL",
  "INVALID_INPUT",
  "DENIED",
  "CONFLICT",
  "REJECTED",
  "RETRYABLE",
  "INVALID_OUTPUT",
  "FAILED",
]);

/** Whether a side effect happened: `none` (certainly not), `applied` (certainly), `unknown`. */
export type Effect = "none" | "applied" | "unknown";

/**
 * One problem with one field. `path` is dot-joined (`"orders.0.status"`), `""` for the root.
 * `message` never echoes the received value and is at most 200 characters.
 */
export interface Issue {
  readonly path: string;
  readonly code: string;
  readonly message: string;
}

/** What every result carries about the call itself. */
export interface CallMeta {
  /** The tool's name as called. */
  readonly tool: string;
  /** The tool's schema version; `""` when no tool was resolved. */
  readonly version: string;
  /** The call's id: `opts.callId` or a generated unique id. */
  readonly callId: string;
  /** How many times the tool's `execute` ran (0 when it never ran). */
  readonly attempts: number;
  /** Wall time of the whole call in milliseconds. */
  readonly durationMs: number;
  /** True when the result was replayed from the ledger instead of executed. */
  readonly replayed?: boolean;
}

/** A successful call: `data` passed the output schema and the business check. */
export interface ToolSuccess<T> {
  readonly ok: true;
  readonly data: T;
  readonly meta: CallMeta;
  readonly error?: never;
}

/** A failed call, as data the agent loop can act on. */
export interface ToolFailure {
  readonly ok: false;
  readonly code: ToolErrorCode;
  /** Short, fixed per situation, safe to show a model. */
  readonly message: string;
  readonly issues?: readonly Issue[];
  /** Decided by the executor, never by the model. */
  readonly retryable: boolean;
  /** When to try again, if the executor knows. */
  readonly retryAfterMs?: number;
  readonly effect: Effect;
  /** Opaque references of effects a write recorded before failing (never payloads). */
  readonly effects?: readonly EffectRef[];
  readonly meta: CallMeta;
  readonly data?: never;
}

/** A recorded partial effect: what kind of thing was committed and its reference. */
export interface EffectRef {
  readonly kind: string;
  readonly ref: string;
}

/**
 * The envelope: success with typed data, or a failure with a code.
 * @example
 * const r = await gate.call("get_order", '{"customerId":"c1"}');
 * if (r.ok) console.log(r.data.orders);
 * else if (r.code === "INVALID_INPUT") console.log(r.issues);
 */
export type ToolResult<T = unknown> = ToolSuccess<T> | ToolFailure;

/** A failure without its meta: what pipeline steps produce. */
export type Failure = Omit<ToolFailure, "ok" | "meta">;

/** Build a failure (without meta). Internal helper for pipeline steps. */
export function _fail(
  code: ToolErrorCode,
  message: string,
  retryable: boolean,
  effect: Effect,
  extra?: { issues?: readonly Issue[]; retryAfterMs?: number | undefined; effects?: readonly EffectRef[] },
): Failure {
  const f: { -readonly [K in keyof Failure]: Failure[K] } = { code, message, retryable, effect };
  if (extra?.issues !== undefined && extra.issues.length > 0) f.issues = extra.issues;
  if (extra?.retryAfterMs !== undefined) f.retryAfterMs = Math.max(0, Math.ceil(extra.retryAfterMs));
  if (extra?.effects !== undefined && extra.effects.length > 0) f.effects = extra.effects;
  return f;
}

/**
 * Type guard for a failure envelope.
 * @example if (isFailure(r) && r.retryable) schedule(r.retryAfterMs);
 */
export function isFailure(r: ToolResult<unknown>): r is ToolFailure {
  return r.ok === false;
}

/**
 * @internal The answer a transport sends when a success's data cannot be written as JSON where it
 * is sent (a value whose `toJSON` or getter fails on a later read, text past the engine's string
 * limit): the gate checked it (src/json-data.ts), but what leaves the process is what counts.
 * `effect`: the tool's, when the sender knows it (a write ran: applied).
 */
export function _unwritable(meta: CallMeta, effect: "read" | "write" | undefined): ToolFailure {
  const f = _fail("INVALID_OUTPUT", "The tool's result could not be written as JSON", false, effect === "write" ? "applied" : effect === "read" ? "none" : "unknown", {
    issues: [{ path: "", code: "non_json", message: "The result could not be written as JSON where it was sent" }],
  });
  return { ok: false, ...f, meta };
}
