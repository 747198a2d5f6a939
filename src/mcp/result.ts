/**
 * The envelope over MCP: a gate result becomes a `CallToolResult` (success: `structuredContent`
 * plus the same JSON as text; failure: `isError`, a text block, the envelope under `_meta`), and
 * back again on the client side.
 * @module
 */
import type { CallMeta, ToolFailure, ToolResult, ToolSuccess } from "../result.js";
import { TOOL_ERROR_CODES, _unwritable } from "../result.js";
import { isRecord } from "../_record.js";

/** `_meta` key that carries the whole failure envelope of a failed call. */
export const RESULT_META_KEY = "toolgate/result";
/** `_meta` key that carries the {@link CallMeta} of a successful call. */
export const CALL_META_KEY = "toolgate/meta";
/** Request `_meta` key a client sets to give a write its idempotency key. */
export const IDEMPOTENCY_META_KEY = "toolgate/idempotencyKey";
/** Tool listing `_meta` key: `{ version, effect, approval }` of the toolgate tool. */
export const TOOL_META_KEY = "toolgate/tool";
/**
 * `_meta` key (value `true`) on a proxied tool's successful result: its data is the upstream's own
 * `CallToolResult`, passed through, not JSON that toolgate wrote in the text.
 */
export const PROXIED_META_KEY = "toolgate/proxied";

/** The MCP `CallToolResult` shape toolgate answers (a subset of the SDK's type). */
export interface McpToolResult {
  [key: string]: unknown;
  content: { type: "text"; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/**
 * Turn a gate result into an MCP tool result. `structured` says whether the tool advertises an
 * object `outputSchema` (then a success carries `structuredContent`). Never throws: a success whose
 * data cannot be written as JSON (or, when `structured`, is not written as a JSON object) answers an
 * INVALID_OUTPUT envelope instead, with the effect the
 * tool's `effect` gives (`"applied"` for a write; `"unknown"` when it is not given).
 * @example
 * const r = await gate.call("get_order", args);
 * return toCallToolResult(r, true, "read");
 */
export function toCallToolResult(r: ToolResult, structured: boolean, effect?: "read" | "write"): McpToolResult {
  if (r.ok) {
    let text: string;
    try {
      text = JSON.stringify(r.data) ?? "null";
    } catch {
      return toCallToolResult(_unwritable(r.meta, effect), false);
    }
    const content: McpToolResult["content"] = [{ type: "text", text }];
    const _meta = { "toolgate/meta": r.meta }; // CALL_META_KEY written out: a literal key is cheaper to build
    if (!structured) return { content, _meta };
    // The text's own JSON, not the tool's value: the transport writes what was read here, never
    // reading the value again (a toJSON or getter can answer differently on a later read, and
    // the HTTP transport drops an answer it cannot write without a word).
    const parsed: unknown = JSON.parse(text);
    // An object the output schema accepted that JSON writes as something else (its own toJSON answers
    // an array, a string): no structuredContent can carry it, and a client would refuse the answer.
    return isRecord(parsed) ? { content, structuredContent: parsed, _meta } : toCallToolResult(_unwritable(r.meta, effect), false);
  }
  return {
    content: [{ type: "text", text: `${r.code}: ${r.message}\n${JSON.stringify(r)}` }],
    isError: true,
    _meta: { [RESULT_META_KEY]: r },
  };
}

/** A proxied result as its upstream answered it: without toolgate's `_meta` keys (and without `_meta` when none other is left). */
function upstreamResult(result: Record<string, unknown>, meta: Record<string, unknown>): Record<string, unknown> {
  const { _meta: _, ...rest } = result;
  const kept = Object.entries(meta).filter(([k]) => !k.startsWith("toolgate/"));
  return kept.length > 0 ? { ...rest, _meta: Object.fromEntries(kept) } : rest;
}

function isCallMeta(v: unknown): v is CallMeta {
  return (
    isRecord(v) &&
    typeof v.tool === "string" &&
    typeof v.version === "string" &&
    typeof v.callId === "string" &&
    typeof v.attempts === "number" &&
    typeof v.durationMs === "number"
  );
}

/** True when `v` has the shape of a failure envelope. */
export function isFailureEnvelope(v: unknown): v is ToolFailure {
  if (!isRecord(v) || v.ok !== false) return false;
  if (typeof v.code !== "string" || !(TOOL_ERROR_CODES as readonly string[]).includes(v.code)) return false;
  if (typeof v.message !== "string" || typeof v.retryable !== "boolean") return false;
  if (v.effect !== "none" && v.effect !== "applied" && v.effect !== "unknown") return false;
  if (v.issues !== undefined && !(Array.isArray(v.issues) && v.issues.every((i) => isRecord(i) && typeof i.path === "string" && typeof i.code === "string" && typeof i.message === "string"))) {
    return false;
  }
  return isCallMeta(v.meta);
}

/**
 * Read the toolgate envelope back from an MCP tool result (client side). Success: `data` is the
 * `structuredContent`, or the parsed text; from a proxy ({@link PROXIED_META_KEY}), the upstream's
 * result as the proxy passed it on (`_meta` keeps only keys outside toolgate's namespace). Returns
 * `undefined` when the result did not come from toolgate (no toolgate `_meta`).
 * @example
 * const res = await client.callTool({ name: "get_order", arguments: { customerId: "c_1" } });
 * const env = fromCallToolResult(res);
 * if (env && !env.ok) console.log(env.code, env.issues);
 */
export function fromCallToolResult(result: unknown): ToolResult | undefined {
  if (!isRecord(result)) return undefined;
  const meta = isRecord(result._meta) ? result._meta : undefined;
  if (meta === undefined) return undefined;
  if (result.isError === true) {
    const env = meta[RESULT_META_KEY];
    return isFailureEnvelope(env) ? env : undefined;
  }
  const callMeta = meta[CALL_META_KEY];
  if (!isCallMeta(callMeta)) return undefined;
  if (meta[PROXIED_META_KEY] === true) return { ok: true, data: upstreamResult(result, meta), meta: callMeta };
  let data: unknown = result.structuredContent;
  if (data === undefined) {
    const first = Array.isArray(result.content) ? (result.content[0] as unknown) : undefined;
    if (!isRecord(first) || first.type !== "text" || typeof first.text !== "string") return undefined;
    try {
      data = JSON.parse(first.text);
    } catch {
      return undefined;
    }
  }
  const ok: ToolSuccess<unknown> = { ok: true, data, meta: callMeta };
  return ok;
}
