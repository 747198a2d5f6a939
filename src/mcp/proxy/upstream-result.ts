/**
 * What crosses between a proxied tool and its upstream besides the arguments: the request `_meta`
 * forwarded upstream, and an upstream `isError` result as the error the gate classifies.
 * @module
 */
import { reject } from "../../errors.js";
import { fromCallToolResult } from "../result.js";

const UPSTREAM_ERROR = "The upstream tool reported an error";

/**
 * An upstream `isError` result as the error the gate classifies. A toolgate envelope under the
 * upstream's `_meta["toolgate/result"]` that says REJECTED keeps its message and effect. Otherwise
 * the call is REJECTED with the upstream's text: for a read with effect `none`, for a write with
 * effect `unknown` (the upstream said it failed, not that nothing was applied).
 */
export function upstreamToolError(result: Record<string, unknown>, effect: "read" | "write"): Error {
  const env = fromCallToolResult(result);
  if (env !== undefined && !env.ok && env.code === "REJECTED") return reject(env.message, { effect: env.effect });
  // The upstream answered (the service is up: no breaker failure); a write's effect is not known.
  return reject(textOf(result), { effect: effect === "read" ? "none" : "unknown" });
}

/**
 * The first non-empty text block, in a window of 4 KiB: the gate redacts it, then cuts it to 200
 * characters. Cut to 200 here first, a secret straddling the cut lost the part its pattern needs and
 * its head went through (`…sk-live-PLANTED`).
 */
function textOf(result: Record<string, unknown>): string {
  const content = Array.isArray(result.content) ? (result.content as unknown[]) : [];
  for (const c of content) {
    if (typeof c === "object" && c !== null && (c as { type?: unknown }).type === "text" && typeof (c as { text?: unknown }).text === "string") {
      const t = (c as { text: string }).text.trim();
      if (t.length > 0) return t.slice(0, 4 * 1024);
    }
  }
  return UPSTREAM_ERROR;
}

/** Request `_meta` forwarded upstream: toolgate's own keys and the client's progress token stay here. */
export function forwardMeta(meta: Readonly<Record<string, unknown>>): Record<string, unknown> | undefined {
  let out: Record<string, unknown> | undefined;
  for (const [k, v] of Object.entries(meta)) {
    if (k === "progressToken" || k.startsWith("toolgate/")) continue;
    (out ??= {})[k] = v;
  }
  return out;
}
