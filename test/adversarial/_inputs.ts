/**
 * The adversarial payloads, shared by the tests (through gate.call, later MCP) and the benchmark.
 * Each case names the tool it targets, the payload (JSON text or a value) and the issue codes
 * the hardening may answer with.
 */
import { z } from "zod";
import { createGate, defineTool, type Gate } from "../../src/index.js";
import { createFakeOrders, makeOrderTools } from "../../examples/orders/index.js";

/** One adversarial payload. */
export interface AdversarialCase {
  readonly name: string;
  readonly tool: string;
  /** Built lazily: some are 10 MB. */
  readonly args: () => unknown;
  /** Acceptable issue codes (any one). */
  readonly codes: readonly string[];
}

/** Nested arrays `depth` deep, built without recursion. */
export function deepArray(depth: number): unknown {
  let v: unknown = [];
  for (let i = 1; i < depth; i++) v = [v];
  return v;
}

/** Nested objects `depth` deep. */
export function deepObject(depth: number, key = "a"): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { [key]: v };
  return v;
}

const MB10 = 10 * 1024 * 1024;

function cyclic(): unknown {
  const a: Record<string, unknown> = { customerId: "c_1" };
  const b: Record<string, unknown> = { a };
  a.b = b;
  return a;
}

const cases: AdversarialCase[] = [];
for (const depth of [5_000, 20_000]) {
  cases.push(
    { name: `depth ${depth} arrays, JSON text`, tool: "get_order", args: () => `{"customerId":${"[".repeat(depth)}${"]".repeat(depth)}}`, codes: ["too_deep"] },
    { name: `depth ${depth} objects, JSON text`, tool: "get_order", args: () => `{"customerId":${'{"a":'.repeat(depth)}1${"}".repeat(depth)}}`, codes: ["too_deep"] },
    { name: `depth ${depth} arrays, value`, tool: "get_order", args: () => ({ customerId: deepArray(depth) }), codes: ["too_deep"] },
    { name: `depth ${depth} objects, value`, tool: "create_refund", args: () => ({ orderId: deepObject(depth), amountCents: 1 }), codes: ["too_deep"] },
  );
}
cases.push(
  { name: "10 MB string, JSON text", tool: "get_order", args: () => `{"customerId":"${"x".repeat(MB10)}"}`, codes: ["too_large"] },
  { name: "10 MB string, value", tool: "get_order", args: () => ({ customerId: "x".repeat(MB10) }), codes: ["too_large"] },
  { name: "10 MB key, value", tool: "get_order", args: () => ({ customerId: "c_1", ["k".repeat(MB10)]: 1 }), codes: ["too_large"] },
  { name: "10^6-element array, JSON text", tool: "get_order", args: () => `{"customerId":"c_1","a":[${new Array(1_000_000).fill("0").join(",")}]}`, codes: ["too_large"] },
  { name: "10^6-element array of numbers, value", tool: "get_order", args: () => ({ customerId: "c_1", a: new Array(1_000_000).fill(0) }), codes: ["too_large"] },
  { name: "10^6-element array of nulls, value", tool: "get_order", args: () => ({ customerId: new Array(1_000_000).fill(null) }), codes: ["too_large"] },
  { name: "10^6-element sparse array, value", tool: "get_order", args: () => ({ customerId: new Array(1_000_000) }), codes: ["non_json"] },
  { name: "__proto__ key at the top, JSON text", tool: "get_order", args: () => '{"customerId":"c_1","__proto__":{"polluted":true}}', codes: ["forbidden_key"] },
  { name: "__proto__ key deep, JSON text", tool: "create_refund", args: () => '{"orderId":"o_100","amountCents":1,"x":[{"y":{"__proto__":{"polluted":true}}}]}', codes: ["forbidden_key"] },
  { name: "constructor.prototype, JSON text", tool: "get_order", args: () => '{"customerId":"c_1","constructor":{"prototype":{"polluted":true}}}', codes: ["forbidden_key"] },
  { name: "__proto__ inside a record, JSON text", tool: "tag", args: () => '{"tags":{"a":"1","__proto__":{"polluted":"yes"}}}', codes: ["forbidden_key"] },
  { name: "constructor.prototype inside a record, JSON text", tool: "tag", args: () => '{"tags":{"constructor":{"prototype":{"polluted":"yes"}}}}', codes: ["forbidden_key"] },
  { name: "__proto__ own key, value", tool: "tag", args: () => ({ tags: JSON.parse('{"__proto__":{"polluted":"yes"}}') as unknown }), codes: ["forbidden_key"] },
  { name: "object with a poisoned prototype, value", tool: "tag", args: () => ({ tags: { __proto__: { polluted: "yes" }, a: "1" } }), codes: ["non_plain_object"] },
  { name: "_meta with __proto__, JSON text", tool: "get_order", args: () => '{"customerId":"c_1","_meta":{"__proto__":{"polluted":true}}}', codes: ["forbidden_key"] },
  { name: "duplicate keys, JSON text", tool: "create_refund", args: () => '{"orderId":"o_100","amountCents":1,"amountCents":999999}', codes: ["duplicate_key"] },
  { name: "duplicate keys deep, JSON text", tool: "tag", args: () => '{"tags":{"k":"a","k":"b"}}', codes: ["duplicate_key"] },
  { name: "duplicate keys via escapes, JSON text", tool: "get_order", args: () => '{"customerId":"c_1","customer\\u0049d":"c_2"}', codes: ["duplicate_key"] },
  { name: "lone surrogate, JSON text", tool: "get_order", args: () => '{"customerId":"\\ud800"}', codes: ["lone_surrogate"] },
  { name: "lone surrogate, value", tool: "get_order", args: () => ({ customerId: "ok\udc00" }), codes: ["lone_surrogate"] },
  { name: "lone surrogate in a key, value", tool: "tag", args: () => ({ tags: { "\ud83d": "x" } }), codes: ["lone_surrogate"] },
  { name: "integer beyond 2^53, JSON text", tool: "create_refund", args: () => '{"orderId":"o_100","amountCents":9007199254740993}', codes: ["unsafe_integer"] },
  { name: "integer beyond 2^53, value", tool: "create_refund", args: () => ({ orderId: "o_100", amountCents: 2 ** 60 }), codes: ["unsafe_integer"] },
  { name: "huge exponent, JSON text", tool: "create_refund", args: () => '{"orderId":"o_100","amountCents":1e400}', codes: ["non_finite"] },
  { name: "function, value", tool: "get_order", args: () => ({ customerId: () => "c_1" }), codes: ["non_json"] },
  { name: "symbol, value", tool: "get_order", args: () => ({ customerId: Symbol("c_1") }), codes: ["non_json"] },
  { name: "BigInt, value", tool: "create_refund", args: () => ({ orderId: "o_100", amountCents: 10n }), codes: ["non_json"] },
  { name: "cycle, value", tool: "get_order", args: cyclic, codes: ["cycle"] },
  { name: "undefined in an array, value", tool: "tag", args: () => ({ tags: {}, list: [undefined] }), codes: ["non_json"] },
  { name: "NaN, value", tool: "create_refund", args: () => ({ orderId: "o_100", amountCents: Number.NaN }), codes: ["non_finite"] },
  { name: "Date, value", tool: "get_order", args: () => ({ customerId: new Date(0) }), codes: ["non_plain_object"] },
  { name: "Map, value", tool: "tag", args: () => ({ tags: new Map([["a", "1"]]) }), codes: ["non_plain_object"] },
  { name: "class instance, value", tool: "get_order", args: () => ({ customerId: new (class Id {})() }), codes: ["non_plain_object"] },
  { name: "throwing getter, value", tool: "get_order", args: () => ({ get customerId(): string { throw new Error("boom"); } }), codes: ["non_json"] },
  { name: "undefined arguments", tool: "get_order", args: () => undefined, codes: ["non_json"] },
  { name: "malformed JSON text", tool: "get_order", args: () => '{"customerId": "c_1",', codes: ["invalid_json"] },
);

/** Every adversarial case. */
export const ADVERSARIAL_CASES: readonly AdversarialCase[] = cases;

/** A gate over the orders example plus a record-shaped tool, with service call counters. */
export function adversarialGate(): { gate: Gate; serviceCalls: () => number } {
  const service = createFakeOrders();
  let tagCalls = 0;
  const tag = defineTool({
    name: "tag",
    version: "1",
    description: "Store tags (a record of strings)",
    input: z.object({ tags: z.record(z.string(), z.string()), list: z.array(z.string()).optional() }),
    output: z.object({ count: z.number() }),
    effect: "write",
    execute: ({ tags }) => {
      tagCalls++;
      return { count: Object.keys(tags).length };
    },
  });
  const gate = createGate({ tools: [...makeOrderTools(service), tag] });
  return { gate, serviceCalls: () => service.calls.findOrders + service.calls.createRefund + tagCalls };
}
