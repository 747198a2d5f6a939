import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { CreateRefundInput, GetOrderInput } from "../../examples/orders/schemas.js";
import { ordersGate } from "./helpers.js";

const NUM_RUNS = 1000;

/** Anything JSON-like, biased toward near-misses of the example schemas. */
const jsonish = fc.jsonValue({ maxDepth: 3 });
const nearGetOrder = fc.record(
  {
    customerId: fc.oneof(fc.constant(""), fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string()), fc.string()),
    includeHistory: fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.boolean()),
    extra: jsonish,
  },
  { requiredKeys: [] },
);
const nearRefund = fc.record(
  {
    orderId: fc.oneof(fc.constant(""), fc.integer(), fc.string()),
    amountCents: fc.oneof(fc.double(), fc.integer({ min: -10, max: 2_000_000 }), fc.string(), fc.constant(null)),
    reason: fc.oneof(fc.string({ maxLength: 300 }), fc.integer()),
    other: jsonish,
  },
  { requiredKeys: [] },
);

describe("property: invalid payloads never reach the service", () => {
  it("get_order: random invalid payloads (values and JSON text)", async () => {
    const { gate, service } = ordersGate();
    let invalid = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(nearGetOrder, jsonish), fc.boolean(), async (payload, asText) => {
        if (GetOrderInput.strict().safeParse(payload).success) return; // valid: not this property
        invalid++;
        const before = service.calls.findOrders;
        const r = await gate.call("get_order", asText ? JSON.stringify(payload) : payload);
        expect(r.ok).toBe(false);
        expect(r.ok ? null : r.code).toBe("INVALID_INPUT");
        expect(service.calls.findOrders).toBe(before);
      }),
      { numRuns: NUM_RUNS, seed: 42 },
    );
    expect(invalid).toBeGreaterThan(NUM_RUNS * 0.9);
    expect(service.calls.findOrders).toBe(0);
  });

  it("create_refund: random invalid payloads", async () => {
    const { gate, service } = ordersGate();
    let invalid = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(nearRefund, jsonish), async (payload) => {
        if (CreateRefundInput.strict().safeParse(payload).success) return;
        invalid++;
        const r = await gate.call("create_refund", payload);
        expect(r.ok ? null : r.code).toBe("INVALID_INPUT");
      }),
      { numRuns: NUM_RUNS, seed: 7 },
    );
    expect(invalid).toBeGreaterThan(NUM_RUNS * 0.9);
    expect(service.calls.createRefund).toBe(0);
  });
});

describe("property: valid payloads all reach the service", () => {
  it("get_order", async () => {
    const { gate, service } = ordersGate();
    await fc.assert(
      fc.asyncProperty(
        fc.record({ customerId: fc.string({ minLength: 1 }).filter((s) => s.isWellFormed()), includeHistory: fc.boolean() }, { requiredKeys: ["customerId"] }),
        fc.boolean(),
        async (payload, asText) => {
          const r = await gate.call("get_order", asText ? JSON.stringify(payload) : payload);
          expect(r.ok).toBe(true);
        },
      ),
      { numRuns: NUM_RUNS, seed: 1 },
    );
    expect(service.calls.findOrders).toBe(NUM_RUNS);
  });

  it("create_refund", async () => {
    const { gate, service } = ordersGate();
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          { orderId: fc.constantFrom("o_100", "o_200", "o_999", "x"), amountCents: fc.integer({ min: 1, max: 1_000_000 }), reason: fc.string({ maxLength: 200 }).filter((s) => s.isWellFormed()) },
          { requiredKeys: ["orderId", "amountCents"] },
        ),
        async (payload) => {
          const r = await gate.call("create_refund", payload);
          // accepted or declined by the business check: either way the service was reached
          expect(r.ok || r.code === "REJECTED").toBe(true);
        },
      ),
      { numRuns: NUM_RUNS, seed: 2 },
    );
    expect(service.calls.createRefund).toBe(NUM_RUNS);
  });
});
