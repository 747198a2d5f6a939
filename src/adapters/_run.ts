/**
 * The one path every adapter takes: optional loop admission, the gate call, the loop's decision,
 * and the model view. Internal.
 * @module
 */
import type { CallOptions, Gate } from "../gate.js";
import { ToolgateConfigError } from "../errors.js";
import type { ToolListing } from "../json-schema.js";
import { _unwritable, type ToolResult, type ToolSuccess } from "../result.js";
import type { LoopDecision } from "../loop/decision.js";
import type { LoopSession } from "../loop/session.js";
import { refusalView, toModelView, type ModelView } from "./model-view.js";
import { CallOptionsError } from "./call-options-error.js";

/** Options every framework adapter takes. */
export interface AdapterOptions {
  /** A loop session (`createLoopPolicy().start()`): refuses repeated failing calls, spends repair budgets, stops. Default: none. */
  readonly session?: LoopSession;
  /** Only these tools, by name. Default: every tool of the gate. */
  readonly tools?: readonly string[];
  /**
   * Extra per-call options for the gate (principal, idempotency key). Default: none. When it
   * throws, the call does not run and the adapter throws a {@link CallOptionsError} (fixed message,
   * the error as its `cause`); a session attached stops.
   */
  callOptions?(call: { readonly tool: string; readonly callId: string }): Omit<CallOptions, "callId" | "signal" | "fromModel">;
}

/** What one call through an adapter produced. */
export interface GatedCall {
  /**
   * The gate's envelope (its data as the tool's schema gave it); absent when the loop refused the
   * call. When the data could not be written as JSON for the model, the INVALID_OUTPUT it was shown.
   */
  readonly result?: ToolResult;
  /** The loop's decision, when a session is attached. */
  readonly decision?: LoopDecision;
  /** What the model is shown. */
  readonly view: ModelView;
}

/** Run one call through the (optional) loop and the gate. Throws only a {@link CallOptionsError}. */
export async function _callThroughGate(
  gate: Gate,
  tool: string,
  args: unknown,
  callId: string,
  signal: AbortSignal | undefined,
  options: AdapterOptions,
): Promise<GatedCall> {
  const session = options.session;
  let id = callId;
  if (session !== undefined) {
    const adm = session.admit({ tool, args, callId });
    if (!adm.ok) return { decision: adm.decision, view: refusalView(adm.decision) };
    id = adm.call.callId;
  }
  let extra: Omit<CallOptions, "callId" | "signal" | "fromModel">;
  try {
    extra = options.callOptions?.({ tool, callId: id }) ?? {};
  } catch (e) {
    session?.observe({ tool, args, callId: id }, e); // not an envelope: the session stops
    throw new CallOptionsError(tool, e);
  }
  // An empty id (a framework that gave none) lets the gate generate one. The arguments are the
  // model's: a `_meta` in them is refused, never taken for the host's metadata (src/meta.ts).
  const opts: CallOptions = { ...extra, ...(id.length > 0 ? { callId: id } : {}), ...(signal !== undefined ? { signal } : {}), fromModel: true };
  const answered = await gate.call(tool, args, opts);
  // The model is shown the data as JSON writes it; the caller keeps the gate's own envelope (a Date
  // stays a Date), unless the data could not be written: then both, and the session, have that failure.
  const shown = answered.ok ? asWritten(answered, gate.tool(tool)?.effect) : answered;
  const result = shown.ok ? answered : shown;
  if (id.length === 0) id = result.meta.callId;
  const decision = session?.observe({ tool, args, callId: id }, result);
  return { result, ...(decision !== undefined ? { decision } : {}), view: toModelView(shown, decision) };
}

/**
 * A success as the model receives it: its data as JSON writes it (a Date as its ISO string), so
 * every provider format — and a framework that checks its messages, as the AI SDK does — gets
 * plain JSON; the session observes that same answer. Data that cannot be written (src/result.ts
 * `_unwritable`) is an INVALID_OUTPUT envelope instead.
 */
function asWritten(r: ToolSuccess<unknown>, effect: "read" | "write" | undefined): ToolResult {
  try {
    const text = JSON.stringify(r.data);
    return { ...r, data: text === undefined ? undefined : (JSON.parse(text) as unknown) }; // undefined: nothing written (a toJSON may answer so)
  } catch {
    return _unwritable(r.meta, effect);
  }
}

/** The listings an adapter exposes; an unknown name in `options.tools` throws ToolgateConfigError. */
export function _selected(gate: Gate, options: AdapterOptions, where: string): readonly ToolListing[] {
  const all = gate.list();
  if (options.tools === undefined) return all;
  const known = new Set(all.map((l) => l.name));
  for (const name of options.tools) {
    if (!known.has(name)) throw new ToolgateConfigError("E_ADAPTER_TOOLS", `${where}: the gate has no tool named ${JSON.stringify(name)}`);
  }
  const want = new Set(options.tools);
  return all.filter((l) => want.has(l.name));
}
