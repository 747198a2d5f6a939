/**
 * The proxy's two shortcuts past a zod pass (the line reader's plain result answer, the output
 * step's plain text result) accept only what the SDK's schema accepts; the line reader's also
 * hands on the value zod would have.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { CallToolResultSchema, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { isPlainResultAnswer } from "../../src/mcp/proxy/line-buffer.js";
import { isPlainTextResult } from "../../src/mcp/proxy/output.js";

/** JSON values, with the keys these checks look at mixed into objects. */
const keys = fc.constantFrom("jsonrpc", "id", "result", "method", "error", "_meta", "__proto__", "content", "structuredContent", "isError", "type", "text", "annotations", "x");
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constantFrom<unknown>("2.0", "text", "image", "toolgate:1", 1, 1.5, true, false, null),
    fc.string(),
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(fc.oneof(keys, fc.string()), tie("value"), { maxKeys: 5 }),
  ),
})).value;

/** Values near the shortcuts' shapes, so that both sides of each check are reached. */
const block = fc.oneof(
  fc.record({ type: fc.constant("text"), text: fc.string() }),
  fc.record({ type: fc.constantFrom("text", "image"), text: json }),
  fc.record({ type: fc.constant("text"), text: fc.string(), annotations: json, _meta: json, x: json }, { requiredKeys: ["type", "text"] }),
  fc.dictionary(keys, json, { maxKeys: 3 }),
  json,
);
const result = fc.oneof(
  fc.record({ content: fc.array(block, { maxLength: 3 }) }),
  fc.record({ content: fc.array(block, { maxLength: 3 }), structuredContent: json, isError: json }, { requiredKeys: ["content"] }),
  fc.dictionary(keys, json, { maxKeys: 4 }),
);
const answer = fc.oneof(
  fc.record({ jsonrpc: fc.constant("2.0"), id: fc.oneof(fc.constant("toolgate:7"), fc.string(), fc.integer()), result }),
  fc.record({ jsonrpc: fc.constantFrom("2.0", "1.0"), id: json, result: json, method: json }, { requiredKeys: ["jsonrpc"] }),
  fc.dictionary(keys, json, { maxKeys: 4 }),
);

describe("the proxy's shortcuts past the SDK's zod schemas", () => {
  it("a plain result answer is one JSONRPCMessageSchema accepts, unchanged", () => {
    let taken = 0;
    fc.assert(
      fc.property(answer, (v) => {
        const parsed = JSON.parse(JSON.stringify(v)) as unknown; // what the reader sees: parsed JSON
        if (!isPlainResultAnswer(parsed)) return;
        taken++;
        const r = JSONRPCMessageSchema.safeParse(parsed);
        expect(r.success).toBe(true);
        expect(r.data).toEqual(parsed);
      }),
      { numRuns: 2_000 },
    );
    expect(taken).toBeGreaterThan(100); // the property was not vacuous
  });

  it("a plain text result is one CallToolResultSchema accepts", () => {
    let taken = 0;
    fc.assert(
      fc.property(result, (v) => {
        const parsed = JSON.parse(JSON.stringify(v)) as Record<string, unknown>;
        if (!isPlainTextResult(parsed)) return;
        taken++;
        // Only acceptance matters here: the output step hands on the value it was given, never zod's copy.
        expect(CallToolResultSchema.safeParse(parsed).success).toBe(true);
      }),
      { numRuns: 2_000 },
    );
    expect(taken).toBeGreaterThan(100);
  });

  it("leaves to zod what it cannot vouch for: _meta, other fields, other blocks, a number id", () => {
    expect(isPlainResultAnswer({ jsonrpc: "2.0", id: "toolgate:1", result: {} })).toBe(true);
    expect(isPlainResultAnswer({ jsonrpc: "2.0", id: "toolgate:1", result: { _meta: 5 } })).toBe(false);
    expect(isPlainResultAnswer({ jsonrpc: "2.0", id: "toolgate:1", result: {}, extra: 1 })).toBe(false);
    expect(isPlainResultAnswer({ jsonrpc: "2.0", id: 1, result: {} })).toBe(false);
    expect(isPlainResultAnswer({ jsonrpc: "2.0", id: "toolgate:1", result: [] })).toBe(false);
    // JSON.parse makes `__proto__` an own key; zod's copy drops it, so it must not pass unchecked.
    expect(isPlainResultAnswer(JSON.parse('{"jsonrpc":"2.0","id":"toolgate:1","result":{"content":[],"__proto__":{"isError":true}}}'))).toBe(false);
    expect(isPlainTextResult({ content: [{ type: "text", text: "a" }], structuredContent: { a: 1 }, isError: false })).toBe(true);
    expect(isPlainTextResult({ content: [{ type: "text", text: "a", annotations: { priority: 9 } }] })).toBe(false);
    expect(isPlainTextResult({ content: [{ type: "image", data: "", mimeType: "image/png" }] })).toBe(false);
    expect(isPlainTextResult({ content: [], _meta: {} })).toBe(false);
    expect(isPlainTextResult({ content: [], structuredContent: [] })).toBe(false);
    expect(isPlainTextResult({ content: [], isError: "no" })).toBe(false);
  });
});
