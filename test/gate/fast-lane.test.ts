/**
 * The gate's compiled fast path must not change a single envelope. Two gates run the same tool:
 * one with schemas the fast path compiles, one with the same schemas behind a no-op refinement
 * (outside the fast path's subset, so every call takes the normal path). On random payloads —
 * values and JSON text, valid and near-miss — and random tool outputs, their envelopes agree.
 */
import { describe, expect, it, vi } from "vitest";
import fc from "fast-check";
import { z } from "zod";
import { createGate, defineTool, type ToolResult } from "../../src/index.js";

const NUM_RUNS = 1500;

const Status = z.enum(["pending", "paid", "cancelled"]);
const input = () =>
  z.object({
    customerId: z.string().min(1).max(40),
    includeHistory: z.boolean().default(false),
    limit: z.number().int().positive().max(100).optional(),
  });
const output = () =>
  z.object({
    found: z.boolean(),
    customerId: z.string(),
    orders: z.array(z.object({ id: z.string(), status: Status })),
  });

/** What the tool returns is chosen by the input, so outputs vary too (some break the contract). */
function answer(i: { customerId: string; includeHistory: boolean; limit?: number | undefined }): unknown {
  const orders = [{ id: "o_1", status: "paid" }];
  const seen = JSON.stringify(i); // the validated input, keys in order: any difference shows in the envelope
  switch (i.customerId.charCodeAt(0) % 5) {
    case 0:
      return { found: true, customerId: seen, orders };
    case 1:
      return { found: false, customerId: seen, orders: [], extra: 1 }; // stripped by z.object
    case 2:
      return { found: true, customerId: seen, orders: [{ id: "o_2", status: "lost" }] }; // INVALID_OUTPUT
    case 3:
      return { found: "yes", customerId: seen, orders }; // INVALID_OUTPUT
    default:
      return { customerId: seen, orders, found: i.includeHistory }; // other key order
  }
}

function gates() {
  const fastIn = input();
  const fastOut = output();
  const make = (i: z.ZodType<z.output<ReturnType<typeof input>>, z.input<ReturnType<typeof input>>>, o: z.ZodType) =>
    createGate({
      tools: [defineTool({ name: "get", version: "1", description: "d", input: i, output: o, effect: "read", execute: (x) => Promise.resolve(answer(x)) })],
    });
  return {
    fast: make(fastIn, fastOut),
    slow: make(
      input().refine(() => true),
      output().refine(() => true),
    ),
    fastIn,
    fastOut,
  };
}

const strip = (r: ToolResult) => ({ ...r, meta: { ...r.meta, durationMs: 0, callId: "" } });

const nearMiss = fc.record(
  {
    customerId: fc.oneof(fc.string({ maxLength: 45 }), fc.constant(""), fc.integer(), fc.constant(null), fc.constant("\ud800x"), fc.constant("😀")),
    includeHistory: fc.oneof(fc.boolean(), fc.constant(undefined), fc.string(), fc.constant(null)),
    limit: fc.oneof(fc.integer({ min: -3, max: 120 }), fc.double(), fc.constant(2 ** 60), fc.constant(Number.NaN), fc.constant(undefined)),
    extra: fc.jsonValue({ maxDepth: 2 }),
    _meta: fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 2 }),
  },
  { requiredKeys: [] },
);

const validish = fc.record(
  {
    customerId: fc.string({ minLength: 1, maxLength: 40 }),
    includeHistory: fc.boolean(),
    limit: fc.integer({ min: 1, max: 100 }),
  },
  { requiredKeys: ["customerId"] },
);

describe("the compiled fast path changes no envelope", () => {
  it("agrees with the normal path on random values and JSON text, inputs and outputs", async () => {
    const { fast, slow } = gates();
    let ok = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(validish, validish, nearMiss, nearMiss, fc.jsonValue({ maxDepth: 3 })), fc.boolean(), async (payload, asText) => {
        const args = asText ? JSON.stringify(payload) : payload;
        if (args === undefined) return;
        const [a, b] = await Promise.all([fast.call("get", args), slow.call("get", args)]);
        expect(strip(a)).toStrictEqual(strip(b));
        if (a.ok) ok++;
      }),
      { numRuns: NUM_RUNS },
    );
    expect(ok).toBeGreaterThan(NUM_RUNS / 20); // not vacuous: many calls succeed through both paths
  });

  it("is what runs for a plain valid call: the schemas' own validators are not called", async () => {
    const { fast, fastIn, fastOut } = gates();
    const inSpy = vi.spyOn(fastIn["~standard"], "validate");
    const outSpy = vi.spyOn(fastOut["~standard"], "validate");
    // "d" (100 % 5 = 0): a valid answer.
    expect(await fast.call("get", { customerId: "d1" })).toMatchObject({
      ok: true,
      data: { found: true, customerId: '{"customerId":"d1","includeHistory":false}', orders: [{ id: "o_1", status: "paid" }] },
    });
    expect(await fast.call("get", '{"customerId":"d2","includeHistory":true}')).toMatchObject({ ok: true });
    expect(inSpy).not.toHaveBeenCalled();
    expect(outSpy).not.toHaveBeenCalled();
    // Anything the fast path cannot vouch for goes to the schema itself, which reports it.
    expect(await fast.call("get", { customerId: 42 })).toMatchObject({ ok: false, code: "INVALID_INPUT", issues: [{ path: "customerId" }] });
    expect(inSpy).toHaveBeenCalledTimes(1);
  });

  // Both paths then read the inherited key (zod reads `input[key]`); what matters here is that the
  // fast path does not differ. (Refusing inherited keys altogether is a hardening change of its own.)
  it("agrees with the normal path under a polluted Object.prototype", async () => {
    const { fast, slow } = gates();
    const proto = Object.prototype as Record<string, unknown>;
    proto.limit = 7; // enumerable, inherited by every object
    try {
      const [a, b] = await Promise.all([fast.call("get", { customerId: "d1" }), slow.call("get", { customerId: "d1" })]);
      expect(strip(a)).toStrictEqual(strip(b));
    } finally {
      delete proto.limit;
    }
  });
});
