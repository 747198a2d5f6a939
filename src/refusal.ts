/**
 * Refusals decided in front of the gate — by an MCP server (arguments that carry the reserved
 * `_meta` key, a `principal` hook that threw) or a proxy (a tool whose pinned definition changed) —
 * recorded as the gate records a call: one `onCall` record, and through any wrapper that forwards
 * this seam (the call log and OpenTelemetry `instrument`, the proxy's admission), one log line and span.
 *
 * The seam is a symbol-keyed function on the gate object, so a wrapper made with `{ ...gate, call }`
 * keeps it. A gate without it (a hand-made wrapper) still refuses: the failure is answered as it
 * is, only unrecorded. Nothing here can make a refused call run.
 * @module
 */
import type { ToolFailure } from "./result.js";

/** @internal The seam's key. */
export const RECORD_REFUSAL: unique symbol = Symbol.for("toolgate.recordRefusal");

/** @internal Records a refusal (attempts 0, effect as given) and answers the envelope to send. */
export type RefusalRecorder = (failure: ToolFailure) => Promise<ToolFailure>;

/**
 * @internal Record `failure` through `gate`'s seam when it has one; the envelope to answer
 * either way (never throws, never rejects).
 */
export async function _recordRefusal(gate: object, failure: ToolFailure): Promise<ToolFailure> {
  const seam = (gate as { [RECORD_REFUSAL]?: unknown })[RECORD_REFUSAL];
  if (typeof seam !== "function") return failure;
  try {
    const r: unknown = await (seam as RefusalRecorder).call(gate, failure);
    return isSameRefusal(r, failure) ? r : failure;
  } catch {
    return failure;
  }
}

/** A recorder answers the refusal it was given (its meta may carry a measured duration). */
function isSameRefusal(r: unknown, f: ToolFailure): r is ToolFailure {
  return typeof r === "object" && r !== null && (r as ToolFailure).ok === false && (r as ToolFailure).code === f.code && (r as ToolFailure).message === f.message;
}
