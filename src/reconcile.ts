/**
 * The state check after an unknown write outcome: run the tool's `reconcile` (with the same
 * timeout and cancellation as an attempt) and read its verdict. Anything but a well-formed
 * `applied` or `none` (a throw, a timeout, a malformed answer) means `unknown`.
 * @module
 */
import type { AnyTool } from "./tool.js";
import { runInContext, type CallScope } from "./attempt.js";

/** What the gate learned from the state check. */
export type ReconcileOutcome =
  | { readonly status: "applied"; readonly output: unknown }
  | { readonly status: "none" }
  | { readonly status: "unknown" };

/** Run `tool.reconcile`, or answer `undefined` when the tool has none. Never throws. */
export async function reconcileWrite(
  tool: AnyTool,
  input: unknown,
  scope: CallScope,
  attempt: number,
  timeoutMs: number,
): Promise<ReconcileOutcome | undefined> {
  const check = tool.reconcile;
  if (check === undefined) return undefined;
  const r = await runInContext((i, ctx) => check.call(tool, i, ctx), input, scope, attempt, timeoutMs);
  if (r.kind !== "value" || typeof r.value !== "object" || r.value === null) return { status: "unknown" };
  const v = r.value as { status?: unknown; output?: unknown };
  if (v.status === "applied" && "output" in v) return { status: "applied", output: v.output };
  if (v.status === "none") return { status: "none" };
  return { status: "unknown" };
}

/** Does this write have a guarantee that makes running it again safe? */
export function writeRetryIsSafe(tool: AnyTool, scope: CallScope): boolean {
  return (tool.idempotentDownstream === true && scope.idempotencyKey !== undefined) || tool.reconcile !== undefined;
}
