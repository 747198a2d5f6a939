import { describe, it, expect } from "vitest";
import "./_prime.js";
import { assertNoPoisoning, restoreGlobals } from "@fast-check/poisoning";
import fc from "fast-check";
import type { z } from "zod";
import { createGate, TOOL_ERROR_CODES, type ToolResult } from "../../src/index.js";
import { createFakeOrders, makeOrderTools } from "../../examples/orders/index.js";
import { CreateRefundInput, GetOrderInput } from "../../examples/orders/schemas.js";

const IGNORED = /^(__vitest|__VITEST|__vite|\$|__coverage|__tinypool)/;
const RUNS = 10_000;

const dangerousKey = fc.constantFrom("__proto__", "constructor", "prototype", "_meta", "toString", "valueOf", "hasOwnProperty");
const key = fc.oneof({ weight: 4, arbitrary: fc.string({ maxLength: 8 }) }, { weight: 1, arbitrary: dangerousKey });
const anything = fc.anything({
  key,
  maxDepth: 4,
  maxKeys: 5,
  withBigInt: true,
  withBoxedValues: true,
  withDate: true,
  withMap: true,
  withSet: true,
  withNullPrototype: true,
  withObjectString: true,
  withSparseArray: true,
  withTypedArray: true,
});
const json = fc.jsonValue({ maxDepth: 4 });

/** Argument values and texts around a tool's (JSON-safe) shape: valid, near-valid, poisoned, garbage. */
function argumentsFor(valid: fc.Arbitrary<Record<string, unknown>>): fc.Arbitrary<unknown> {
  const withExtra = fc.tuple(valid, key, anything).map(([v, k, x]) => {
    const o = { ...v };
    Object.defineProperty(o, k, { value: x, enumerable: true, configurable: true, writable: true });
    return o;
  });
  const poisonedText = fc
    .tuple(valid, dangerousKey, json)
    .map(([v, k, x]) => JSON.stringify(v).replace(/^\{/, `{${JSON.stringify(k)}:${JSON.stringify(x)}${Object.keys(v).length > 0 ? "," : ""}`));
  const duplicateText = valid
    .filter((v) => Object.keys(v).length > 0)
    .map((v) => {
      const k = Object.keys(v)[0]!;
      return JSON.stringify(v).replace(/\}$/, `,${JSON.stringify(k)}:${JSON.stringify(v[k])}}`);
    });
  return fc.oneof(
    { weight: 3, arbitrary: valid },
    { weight: 2, arbitrary: valid.map((v) => JSON.stringify(v)) },
    { weight: 2, arbitrary: withExtra },
    { weight: 2, arbitrary: poisonedText },
    { weight: 1, arbitrary: duplicateText },
    { weight: 2, arbitrary: anything },
    { weight: 1, arbitrary: fc.json({ maxDepth: 4 }) },
    { weight: 1, arbitrary: fc.string() },
  );
}

const getOrderArgs = argumentsFor(
  fc.record(
    { customerId: fc.oneof(fc.constantFrom("c_1", "c_2", "c_9"), fc.string()), includeHistory: fc.oneof(fc.boolean(), json) },
    { requiredKeys: ["customerId"] },
  ),
);
const refundArgs = argumentsFor(
  fc.record(
    {
      orderId: fc.oneof(fc.constantFrom("o_100", "o_200", "o_x"), fc.string()),
      amountCents: fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1, max: 1_000_000 }) }, fc.integer({ min: -10, max: 2_000_000 }), fc.double(), fc.maxSafeInteger()),
      reason: fc.oneof({ weight: 4, arbitrary: fc.string({ maxLength: 250 }) }, json),
    },
    { requiredKeys: ["orderId", "amountCents"] },
  ),
);

/** What the schema should see: the JSON meaning of the arguments, without the reserved top-level `_meta`. */
function asInput(args: unknown): unknown {
  let v: unknown;
  try {
    v = JSON.parse(typeof args === "string" ? args : (JSON.stringify(args) ?? "null"));
  } catch {
    return undefined;
  }
  if (typeof v !== "object" || v === null || Array.isArray(v) || !Object.hasOwn(v, "_meta")) return v;
  return Object.fromEntries(Object.entries(v).filter(([k]) => k !== "_meta"));
}

function checkEnvelope(r: ToolResult): void {
  expect(typeof r).toBe("object");
  if (r.ok) return;
  expect(TOOL_ERROR_CODES).toContain(r.code);
  expect(r.message.length).toBeLessThanOrEqual(200);
  expect((r.issues ?? []).length).toBeLessThanOrEqual(20);
  expect(typeof r.retryable).toBe("boolean");
}

function noPollution(): void {
  expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(PROTO_KEYS);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
}
const PROTO_KEYS = Object.getOwnPropertyNames(Object.prototype).sort();

describe.each([
  { tool: "get_order", args: getOrderArgs, schema: GetOrderInput.strict(), calls: (c: { findOrders: number; createRefund: number }) => c.findOrders },
  { tool: "create_refund", args: refundArgs, schema: CreateRefundInput.strict(), calls: (c: { findOrders: number; createRefund: number }) => c.createRefund },
] as const)("fast-check: $tool", ({ tool, args, schema, calls }) => {
  it(`${RUNS} runs: never throws, valid envelopes, the service runs only on valid input, no pollution`, async () => {
    const service = createFakeOrders();
    const gate = createGate({ tools: makeOrderTools(service), breaker: false, retry: { attempts: 1 } });
    let executed = 0;
    let refusedInput = 0;
    await fc.assert(
      fc.asyncProperty(args, async (a) => {
        const before = calls(service.calls);
        let r: ToolResult | undefined;
        let threw = false;
        try {
          r = await gate.call(tool, a);
        } catch {
          threw = true;
        }
        expect(threw).toBe(false);
        checkEnvelope(r!);
        const ran = calls(service.calls) - before;
        if (!r!.ok && r!.code === "INVALID_INPUT") {
          refusedInput++;
          expect(ran).toBe(0);
          expect(r!.meta.attempts).toBe(0);
        }
        if (ran > 0) {
          executed++;
          expect((schema as z.ZodType).safeParse(asInput(a)).success).toBe(true);
        }
        if (r!.ok) expect(ran).toBeGreaterThan(0);
        noPollution();
      }),
      { numRuns: RUNS },
    );
    // the property exercised both sides
    expect(executed).toBeGreaterThan(RUNS / 20);
    expect(refusedInput).toBeGreaterThan(RUNS / 4);
    try {
      assertNoPoisoning({ ignoredRootRegex: IGNORED });
    } finally {
      restoreGlobals({ ignoredRootRegex: IGNORED });
    }
  }, 120_000);
});

describe("the pollution check itself", () => {
  it("detects a poisoned prototype", () => {
    const original = Array.prototype.includes;
    Array.prototype.includes = () => true;
    try {
      expect(() => assertNoPoisoning({ ignoredRootRegex: IGNORED })).toThrow(/Poisoning detected/);
    } finally {
      Array.prototype.includes = original;
    }
    expect(() => assertNoPoisoning({ ignoredRootRegex: IGNORED })).not.toThrow();
  });
});
