/**
 * The output side of a proxied tool: the upstream's whole `CallToolResult` passes through the
 * gate's output step, which checks it is a valid MCP tool result (the SDK's CallToolResultSchema) and, when the upstream advertises an
 * `outputSchema`, that `structuredContent` is present and valid against it.
 * @module
 */
import type { StandardSchemaV1 } from "@standard-schema/spec";
import { CallToolResultSchema, type Tool as SdkTool } from "@modelcontextprotocol/sdk/types.js";
import { ajvStandardSchema, type AjvCompilers, type AjvStandardSchema } from "./ajv.js";
import { isRecord } from "../../_record.js";

type Selected = { ok: true; part: unknown; prefix?: readonly string[] } | { ok: false; issue: StandardSchemaV1.Issue };

function shapeProblem(v: unknown): StandardSchemaV1.Issue | undefined {
  if (!isRecord(v)) return { message: "The upstream result is not an object", path: [] };
  if (!Array.isArray(v.content)) return { message: "The upstream result has no content array", path: ["content"] };
  for (let i = 0; i < v.content.length; i++) {
    const c: unknown = v.content[i];
    if (!isRecord(c) || typeof c.type !== "string") return { message: "Content block without a type", path: ["content", String(i)] };
  }
  if (v.structuredContent !== undefined && !isRecord(v.structuredContent)) return { message: "structuredContent must be an object", path: ["structuredContent"] };
  // Every content block must be one the spec defines, or the client would refuse the whole answer.
  if (isPlainTextResult(v)) return undefined;
  const r = CallToolResultSchema.safeParse(v);
  if (!r.success) {
    const first = r.error.issues[0];
    return { message: "The upstream result is not a valid MCP tool result", path: (first?.path ?? []).map(String) };
  }
  return undefined;
}

/**
 * True for the result most tools answer: only `content` (blocks of exactly `type: "text"` and a
 * string `text`), `structuredContent` (an object) and a boolean `isError`. The SDK's
 * `CallToolResultSchema` accepts every such value, so its zod pass is skipped; anything else
 * (`_meta`, annotations, other block types or fields) still takes it.
 */
export function isPlainTextResult(v: Record<string, unknown>): boolean {
  for (const k in v) {
    if (!Object.hasOwn(v, k)) continue;
    if (k === "content") continue;
    if (k === "structuredContent" ? !isRecord(v.structuredContent) : k !== "isError" || typeof v.isError !== "boolean") return false;
  }
  const content = v.content;
  if (!Array.isArray(content)) return false;
  for (const c of content as unknown[]) {
    if (!isRecord(c) || c.type !== "text" || typeof c.text !== "string") return false;
    for (const k in c) if (Object.hasOwn(c, k) && k !== "type" && k !== "text") return false;
  }
  return true;
}

/** Build the output Standard Schema of one upstream tool. */
export function outputSchemaFor(t: SdkTool, ajv: AjvCompilers): { ok: true; schema: AjvStandardSchema } | { ok: false; reason: string } {
  const out = t.outputSchema as Record<string, unknown> | undefined;
  if (out === undefined) {
    const anyResult = Object.assign((_v: unknown) => true, { errors: null });
    return {
      ok: true,
      schema: ajvStandardSchema({}, anyResult as never, (v): Selected => {
        const p = shapeProblem(v);
        return p === undefined ? { ok: true, part: v } : { ok: false, issue: p };
      }),
    };
  }
  const compiled = ajv.compile(out);
  if (!compiled.ok) return { ok: false, reason: `its outputSchema does not compile (${compiled.reason})` };
  return {
    ok: true,
    schema: ajvStandardSchema(out, compiled.validate, (v): Selected => {
      const p = shapeProblem(v);
      if (p !== undefined) return { ok: false, issue: p };
      const sc = (v as Record<string, unknown>).structuredContent;
      if (sc === undefined) return { ok: false, issue: { message: "structuredContent is required by the tool's outputSchema", path: ["structuredContent"] } };
      return { ok: true, part: sc, prefix: ["structuredContent"] };
    }),
  };
}
