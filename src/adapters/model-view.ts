/**
 * What the model sees for a result: the data on success; on failure the envelope's code, fixed
 * message, issues, retryability and effect (never meta, stacks or received values); for a call the
 * loop refused, the refusal and its reason. Every provider format serializes this one view.
 * @module
 */
import type { ToolFailure, ToolResult } from "../result.js";
import type { LoopDecision, StopReason } from "../loop/decision.js";

/** A success as the model sees it. */
export interface ModelSuccessView {
  readonly ok: true;
  readonly data: unknown;
}

/** A failure as the model sees it: the envelope's fields without meta (and without effect refs). */
export interface ModelFailureView extends Pick<ToolFailure, "ok" | "code" | "message" | "issues" | "retryable" | "retryAfterMs" | "effect"> {
  /** What the loop policy decided, when one is attached (e.g. "Fix only the reported fields and call again"). */
  readonly next?: string;
}

/** A call the loop policy refused to execute. */
export interface ModelRefusalView {
  readonly ok: false;
  readonly refused: true;
  readonly reason: StopReason;
  readonly message: string;
}

/** The one view every adapter sends to a model. */
export type ModelView = ModelSuccessView | ModelFailureView | ModelRefusalView;

/**
 * The model's view of a result, with the loop's decision as `next` when there is one.
 * @example
 * const view = toModelView(await gate.call("get_order", args));
 * messages.push({ role: "tool", tool_call_id: id, content: JSON.stringify(view) });
 */
export function toModelView(result: ToolResult, decision?: LoopDecision): ModelSuccessView | ModelFailureView {
  if (result.ok) return { ok: true, data: result.data };
  const v: { -readonly [K in keyof ModelFailureView]: ModelFailureView[K] } = {
    ok: false,
    code: result.code,
    message: result.message,
    retryable: result.retryable,
    effect: result.effect,
  };
  if (result.issues !== undefined && result.issues.length > 0) v.issues = result.issues.map((i) => ({ path: i.path, code: i.code, message: i.message }));
  if (result.retryAfterMs !== undefined) v.retryAfterMs = result.retryAfterMs;
  if (decision !== undefined && decision.action !== "continue") v.next = decision.message;
  return v;
}

/**
 * The model's view of a call the loop refused (never executed).
 * @example if (!admission.ok) return refusalView(admission.decision);
 */
export function refusalView(decision: LoopDecision): ModelRefusalView {
  return { ok: false, refused: true, reason: decision.action === "stop" ? decision.reason : "stopped", message: decision.message };
}

/**
 * True when the view reports a failure or a refusal (provider formats mark it as an error).
 * @example const block = { type: "tool_result", tool_use_id: id, content: JSON.stringify(view), is_error: isErrorView(view) };
 */
export function isErrorView(view: ModelView): view is ModelFailureView | ModelRefusalView {
  return view.ok === false;
}
