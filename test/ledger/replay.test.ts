/** A replay is the first answer's JSON, whatever the tool returned: `toJSON`, boxed values, `undefined`, non-finite numbers. */
import { describe, it, expect } from "vitest";
import fc from "fast-check";
import { z } from "zod";
import { createGate, defineTool, type ToolResult } from "../../src/index.js";
import { memoryLedger } from "../../src/ledger/index.js";

const body = (r: ToolResult) => {
  const { meta: _m, ...rest } = r;
  return JSON.stringify(rest);
};

const withToJSON = fc.oneof(
  fc.date({ noInvalidDate: true }),
  fc.string().map((s) => ({ toJSON: () => s })),
  fc.integer().map((n) => ({ toJSON: (key: string) => ({ key, n }) })), // toJSON gets its key, as in JSON.stringify
);

const value = fc.letrec((tie) => ({
  leaf: fc.oneof(
    fc.anything({ maxDepth: 2, withBoxedValues: true, withNullPrototype: true, withSparseArray: true, withDate: true, withBigInt: false }),
    withToJSON,
    fc.constantFrom(undefined, Number.NaN, Infinity, -0, () => 1),
  ),
  node: fc.oneof({ depthSize: "small" }, tie("leaf"), fc.array(tie("node"), { maxLength: 4 }), fc.dictionary(fc.string(), tie("node"), { maxKeys: 4 })),
})).node;

describe("replay", () => {
  it("stores the output as JSON.stringify writes it, so the replay equals the first answer", async () => {
    let out: unknown;
    const tool = defineTool({
      name: "echo", version: "1", description: "d", effect: "write",
      input: z.object({ n: z.number() }), output: z.unknown(),
      execute: () => out,
    });
    const gate = createGate({ tools: [tool], ledger: memoryLedger(), redact: { patterns: [], replaceDefaults: true } });
    let n = 0;
    await fc.assert(
      fc.asyncProperty(value, async (v) => {
        out = { v };
        const key = `k${++n}`;
        const first = await gate.call("echo", { n }, { idempotencyKey: key });
        const again = await gate.call("echo", { n }, { idempotencyKey: key });
        expect(again.meta.replayed).toBe(true);
        expect(body(again)).toBe(body(first));
      }),
      { numRuns: 300 },
    );
  });
});
