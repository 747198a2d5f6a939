/**
 * The advertised inputSchema accepts exactly what the gate accepts: Ajv on the schema a client
 * receives from tools/list vs. gate.call, on generated payloads for the example tools.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { createGate } from "../../src/index.js";
import { createMcpServer } from "../../src/mcp/index.js";
import { createFakeOrders, makeOrderTools } from "../../examples/orders/index.js";

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

async function advertised(): Promise<Record<string, Record<string, unknown>>> {
  const gate = createGate({ tools: makeOrderTools(createFakeOrders()) });
  const [a, b] = InMemoryTransport.createLinkedPair();
  const server = createMcpServer(gate, { name: "t", version: "1" });
  await server.connect(a);
  const client = new Client({ name: "c", version: "1" });
  await client.connect(b);
  const { tools } = await client.listTools();
  await client.close();
  return Object.fromEntries(tools.map((t) => [t.name, t.inputSchema as Record<string, unknown>]));
}

// JSON values the gate's hardening allows (well-formed strings, safe numbers): the schema is what differs.
const leaf = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.string({ unit: "grapheme", maxLength: 220 }),
  fc.constantFrom("", "o_100", "c_1", "c_2"),
  fc.integer({ min: -2_000_000, max: 2_000_000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -2e6, max: 2e6 }),
  fc.boolean(),
  fc.constant(null),
);
const value = fc.oneof({ weight: 4, arbitrary: leaf }, { weight: 1, arbitrary: fc.array(leaf, { maxLength: 3 }) }, { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 4 }), leaf, { maxKeys: 2 }) });

/** Near-valid payloads: each field is often of the right type (near its limits), sometimes anything, sometimes absent; sometimes an extra key. */
function payloads(fields: Record<string, fc.Arbitrary<unknown>>) {
  const spec = Object.fromEntries(Object.entries(fields).map(([k, good]) => [k, fc.oneof({ weight: 4, arbitrary: good }, { weight: 1, arbitrary: value })]));
  const extra = fc.option(fc.tuple(fc.string({ minLength: 1, maxLength: 6 }), value), { freq: 5 });
  return fc.tuple(fc.record(spec, { requiredKeys: [] }), extra).map(([rec, ex]) => (ex === null ? rec : { ...rec, [ex[0]]: ex[1] }));
}

const FIELDS = {
  get_order: { customerId: fc.string({ unit: "grapheme", maxLength: 4 }), includeHistory: fc.boolean() },
  create_refund: {
    orderId: fc.string({ unit: "grapheme", maxLength: 4 }),
    amountCents: fc.oneof(fc.integer({ min: -5, max: 1_000_005 }), fc.double({ noNaN: true, noDefaultInfinity: true, min: -5, max: 1_000_005 })),
    reason: fc.string({ unit: "grapheme", maxLength: 210 }),
  },
} as const;

describe("advertised inputSchema vs gate", () => {
  it.each(["get_order", "create_refund"] as const)("%s: Ajv (2020-12) and the gate agree on every generated payload", async (name) => {
    const schemas = await advertised();
    const ajv = addFormats(new Ajv2020({ strict: false, allErrors: false }));
    const validate = ajv.compile(schemas[name]!);
    const gate = createGate({ tools: makeOrderTools(createFakeOrders()), breaker: false });
    let accepted = 0;
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(payloads(FIELDS[name]), async (payload) => {
        const byAjv = validate(payload);
        const r = await gate.call(name, payload);
        const byGate = r.ok || r.code !== "INVALID_INPUT";
        if (byAjv) accepted++;
        else refused++;
        expect({ payload, byGate }).toEqual({ payload, byGate: byAjv });
      }),
      { numRuns: 1_500, seed: 4242 },
    );
    // the generator reaches both sides of the contract
    expect(accepted).toBeGreaterThan(50);
    expect(refused).toBeGreaterThan(50);
  });
});
