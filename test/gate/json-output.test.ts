/**
 * A success's data is JSON the agent can receive: a validated output that JSON cannot carry whole
 * (a cycle, a bigint, too deep, a Map, NaN, a function, undefined in an array) is INVALID_OUTPUT
 * with the path, never a success that throws where it is serialized or arrives changed.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { z } from "zod";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { createGate, defineTool, type CallRecord } from "../../src/index.js";
import { MAX_OUTPUT_DEPTH, MAX_OUTPUT_VALUES, notJsonData } from "../../src/json-data.js";
import { createMcpServer, RESULT_META_KEY } from "../../src/mcp/index.js";

const cyclic = (): Record<string, unknown> => {
  const o: Record<string, unknown> = { a: 1 };
  o.self = { back: o };
  return o;
};
const nested = (levels: number): unknown => {
  let v: unknown = {};
  for (let i = 0; i < levels; i++) v = { d: v };
  return v;
};
class Money {
  constructor(readonly cents: number) {}
  toJSON(): string {
    return `${this.cents / 100} EUR`;
  }
}
class Row {
  readonly id = "r1";
  readonly total = 3;
}

describe("notJsonData", () => {
  it.each([
    ["a cycle", () => cyclic(), "cycle", ["self", "back"]],
    ["a bigint", () => ({ id: 10n }), "non_json", ["id"]],
    ["a function", () => ({ list: [{ f: () => 1 }] }), "non_json", ["list", 0, "f"]],
    ["a symbol", () => [Symbol("s")], "non_json", [0]],
    ["undefined in an array", () => ({ xs: [1, undefined] }), "non_json", ["xs", 1]],
    ["a hole in an array", () => ({ xs: [1, , 3] }), "non_json", ["xs", 1]], // eslint-disable-line no-sparse-arrays
    ["NaN", () => ({ n: NaN }), "non_finite", ["n"]],
    ["Infinity", () => [-Infinity], "non_finite", [0]],
    ["a Map", () => ({ m: new Map([["a", 1]]) }), "non_plain_object", ["m"]],
    ["a Set", () => ({ s: new Set([1]) }), "non_plain_object", ["s"]],
    ["an Error", () => ({ e: new Error("x") }), "non_plain_object", ["e"]],
    ["a typed array", () => ({ b: new Uint8Array(2) }), "non_plain_object", ["b"]],
    ["a boxed string", () => ({ s: Object("x") as object }), "non_plain_object", ["s"]],
    ["a toJSON that throws", () => ({ t: { toJSON: () => { throw new Error("no"); } } }), "non_json", ["t"]],
    ["a getter that throws", () => ({ get g(): never { throw new Error("no"); } }), "non_json", ["g"]],
    ["a toJSON answering a bigint", () => ({ t: { toJSON: () => 1n } }), "non_json", ["t"]],
    ["nesting past the cap", () => nested(MAX_OUTPUT_DEPTH), "too_deep", Array(MAX_OUTPUT_DEPTH).fill("d")],
    ["fetch's Headers", () => ({ h: new Headers({ etag: "W/1" }) }), "non_plain_object", ["h"]],
    ["a URLSearchParams", () => ({ q: new URLSearchParams("a=1") }), "non_plain_object", ["q"]],
    ["a Blob", () => [new Blob(["x"])], "non_plain_object", [0]],
    ["a WeakRef", () => ({ r: new WeakRef({}) }), "non_plain_object", ["r"]],
    ["a Proxy around a Map", () => ({ m: new Proxy(new Map([["a", 1]]), {}) }), "non_plain_object", ["m"]],
    ["a Proxy whose ownKeys trap throws, with its path", () => ({ deep: { p: new Proxy({}, { ownKeys: () => { throw new Error("trap"); } }) } }), "non_json", ["deep", "p"]],
    ["a revoked Proxy, with its path", () => { const r = Proxy.revocable({}, {}); r.revoke(); return { x: [r.proxy] }; }, "non_json", ["x", 0]],
    ["undefined from a toJSON in an array", () => ({ xs: [{ toJSON: () => undefined }] }), "non_json", ["xs", 0]],
  ])("refuses %s, naming its path", (_label, make, code, path) => {
    const bad = notJsonData(make());
    expect(bad).toMatchObject({ code, path });
    expect(bad?.message.length).toBeGreaterThan(0);
  });

  it.each([
    ["plain data", { a: [1, "x", true, null, { b: 2.5 }] }],
    ["undefined object values (absent in JSON)", { a: undefined, b: 1 }],
    ["no data at all (a tool that returns nothing)", undefined],
    ["a Date (its toJSON)", { at: new Date(0) }],
    ["a class with toJSON", { price: new Money(250) }],
    ["a class instance (its own properties)", { row: new Row() }],
    ["a null-prototype object", Object.assign(Object.create(null) as object, { a: 1 })],
    ["a shared, acyclic reference", (() => { const s = { x: 1 }; return { a: s, b: [s, s] }; })()],
    ["nesting at the cap", nested(MAX_OUTPUT_DEPTH - 1)],
    ["large integers and lone surrogates (JSON writes them)", { n: 2 ** 60, s: "\ud800" }],
    ["undefined from a toJSON in an object (absent in JSON)", { id: "u1", hidden: { toJSON: () => undefined } }],
    ["an object whose own toJSON returns itself (the method is not data)", { o: { a: 1, toJSON(this: object) { return this; } } }],
    ["a URL (its toJSON)", { u: new URL("https://example.com/a") }],
    ["a class instance that names itself with Symbol.toStringTag", { order: new (class Order { readonly id = "o_1"; get [Symbol.toStringTag](): string { return "Order"; } })() }],
    ["an Error subclass with a toJSON", { e: Object.assign(new Error("x"), { toJSON: () => ({ kind: "x" }) }) }],
  ])("accepts %s", (_label, value) => {
    expect(notJsonData(value)).toBeUndefined();
    expect(() => JSON.stringify(value)).not.toThrow();
  });

  it("calls toJSON with the property's key, as JSON.stringify does", () => {
    const keys: string[] = [];
    const spy = { toJSON: (k: string) => (keys.push(k), "x") };
    notJsonData({ a: spy, list: [spy] });
    JSON.stringify({ a: spy, list: [spy] });
    expect(keys).toEqual(["a", "0", "a", "0"]);
  });

  it("a bigint with a toJSON of its own is JSON (the application chose its form)", () => {
    const proto = BigInt.prototype as { toJSON?: () => string };
    proto.toJSON = function (this: bigint) {
      return this.toString();
    };
    try {
      expect(notJsonData({ id: 10n })).toBeUndefined();
    } finally {
      delete proto.toJSON;
    }
  });
});

function toolReturning(value: () => unknown, output: z.ZodType, effect: "read" | "write" = "read") {
  return defineTool({ name: "t", version: "3", description: "d", input: z.object({}), output, effect, execute: async () => value() });
}

describe("the walk is bounded", () => {
  it("data that reuses one object many times is refused past MAX_OUTPUT_VALUES, in bounded time (JSON would write every use)", () => {
    let v: unknown = { leaf: "x" };
    for (let i = 0; i < 24; i++) v = { a: v, b: v }; // 2^24 leaves as JSON writes it
    expect(notJsonData(v)).toMatchObject({ code: "too_large", message: `Output holds more than ${MAX_OUTPUT_VALUES} values` });
  });

  it("a long chain's cycle is found (ancestors past the first 64 are looked up in a set)", () => {
    const root: Record<string, unknown> = {};
    let cur = root;
    for (let i = 0; i < 500; i++) cur = (cur.d = {}) as Record<string, unknown>;
    cur.back = root.d;
    expect(notJsonData(root)).toMatchObject({ code: "cycle", path: [...Array(500).fill("d"), "back"] });
  });
});

describe("the gate answers INVALID_OUTPUT for data JSON cannot carry", () => {
  it.each([
    ["z.any()", z.any()],
    ["z.unknown()", z.unknown()],
    ["a record of unknowns", z.record(z.string(), z.unknown())],
    ["a loose object's extra keys", z.looseObject({ a: z.number() })],
  ])("%s holding a cycle", async (_label, output) => {
    const records: CallRecord[] = [];
    const gate = createGate({ tools: [toolReturning(cyclic, output)], onCall: (r) => void records.push(r) });
    const r = await gate.call("t", {});
    expect(r).toMatchObject({ ok: false, code: "INVALID_OUTPUT", retryable: false, effect: "none", issues: [{ path: expect.stringMatching(/^self\.back/), code: "cycle" }] }); // zod copies a record's root: the cycle closes one step later
    expect(records).toMatchObject([{ code: "INVALID_OUTPUT", ok: false }]);
  });

  it("a write whose data JSON cannot carry ran: the effect is applied", async () => {
    const gate = createGate({ tools: [toolReturning(() => ({ refundId: 7n }), z.object({ refundId: z.any() }), "write")] });
    expect(await gate.call("t", {})).toMatchObject({ ok: false, code: "INVALID_OUTPUT", effect: "applied", issues: [{ path: "refundId", code: "non_json" }] });
  });

  it("a schema whose own output is not JSON (z.bigint(), z.map()) is refused at run time, not handed on", async () => {
    const big = createGate({ tools: [toolReturning(() => 5n, z.bigint())] });
    expect(await big.call("t", {})).toMatchObject({ ok: false, code: "INVALID_OUTPUT", issues: [{ path: "", code: "non_json" }] });
    const map = createGate({ tools: [toolReturning(() => new Map(), z.map(z.string(), z.number()))] });
    expect(await map.call("t", {})).toMatchObject({ ok: false, code: "INVALID_OUTPUT", issues: [{ path: "", code: "non_plain_object" }] });
  });

  it("data with a JSON form is handed on as the schema returned it (a Date stays a Date for a TypeScript caller)", async () => {
    const at = new Date(0);
    const gate = createGate({ tools: [toolReturning(() => ({ at, extra: { when: at } }), z.looseObject({ at: z.date() }))] });
    const r = await gate.call("t", {});
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.data).toEqual({ at, extra: { when: at } });
  });

  it("a business check never sees data JSON cannot carry", async () => {
    let checked = 0;
    const t = defineTool({ name: "t", version: "1", description: "d", input: z.object({}), output: z.any(), effect: "read", execute: () => ({ n: NaN }), check: () => void checked++ });
    expect(await createGate({ tools: [t] }).call("t", {})).toMatchObject({ code: "INVALID_OUTPUT", issues: [{ path: "n", code: "non_finite" }] });
    expect(checked).toBe(0);
  });
});

describe("the compiled output check agrees", () => {
  it.each([
    ["Infinity", () => Infinity, "non_finite"],
    ["NaN", () => NaN, "non_finite"],
    ["a bigint", () => 10n as unknown as number, "non_json"],
  ])("a default of %s is refused as on the schema path, not handed on", async (_label, value, code) => {
    const output = z.object({ user: z.string(), limit: z.number().default(value) });
    const fast = createGate({ tools: [toolReturning(() => ({ user: "u1" }), output)] });
    const slow = createGate({ tools: [toolReturning(() => ({ user: "u1" }), output.refine(() => true))] }); // outside the compiled subset
    const expected = { ok: false, code: "INVALID_OUTPUT", issues: [{ path: "limit", code }] };
    expect(await fast.call("t", {})).toMatchObject(expected);
    expect(await slow.call("t", {})).toMatchObject(expected);
  });

  it("a finite default is still compiled and handed on", async () => {
    const gate = createGate({ tools: [toolReturning(() => ({ user: "u1" }), z.object({ user: z.string(), limit: z.number().default(10) }))] });
    expect(await gate.call("t", {})).toMatchObject({ ok: true, data: { user: "u1", limit: 10 } });
  });
});

describe("over MCP", () => {
  it("a cyclic output is an INVALID_OUTPUT envelope, not a JSON-RPC internal error", async () => {
    const gate = createGate({ tools: [toolReturning(() => cyclic(), z.any())] });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await createMcpServer(gate, { name: "s", version: "1" }).connect(a);
    const client = new Client({ name: "c", version: "1" });
    await client.connect(b);
    try {
      const r = await client.callTool({ name: "t", arguments: {} });
      expect(r.isError).toBe(true);
      expect(r._meta?.[RESULT_META_KEY]).toMatchObject({ code: "INVALID_OUTPUT", issues: [{ path: "self.back", code: "cycle" }] });
    } finally {
      await client.close();
    }
  });
});

describe("notJsonData agrees with JSON.stringify (fast-check)", () => {
  /** What JSON writes back for plain data by design: a Date's toJSON, -0 as 0, undefined object values absent; anything else it would change is marked. */
  const NOT_PLAIN = Symbol("JSON would change this");
  const normal = (x: unknown): unknown => {
    if (x instanceof Date) return x.toJSON();
    if (Object.is(x, -0)) return 0;
    if (Array.isArray(x)) return Object.getPrototypeOf(x) === Array.prototype ? Array.from(x, normal) : NOT_PLAIN;
    if (typeof x === "object" && x !== null) {
      const p: unknown = Object.getPrototypeOf(x);
      if (p !== Object.prototype && p !== null) return NOT_PLAIN;
      return Object.fromEntries(Object.entries(x).filter(([, y]) => y !== undefined).map(([k, y]) => [k, normal(y)]));
    }
    return x;
  };
  const writesBack = (v: unknown): boolean => {
    try {
      const text = JSON.stringify(v);
      if (text === undefined) return v === undefined;
      expect(JSON.parse(text)).toEqual(normal(v));
      return true;
    } catch {
      return false;
    }
  };

  const LEAVES = [fc.boolean(), fc.integer(), fc.double(), fc.constantFrom(NaN, Infinity, -Infinity, -0), fc.string(), fc.constant(null), fc.constant(undefined), fc.bigInt()];

  it("accepts exactly what JSON writes back as it was (2,000 values of every kind fast-check makes)", () => {
    // nulls, numbers (NaN, ±Infinity, -0), bigints, strings, arrays with holes, null-prototype
    // objects, Maps, Sets, Dates, boxed values, typed arrays, "__proto__" keys…
    fc.assert(
      fc.property(fc.anything({ values: LEAVES, withBigInt: true, withMap: true, withSet: true, withDate: true, withBoxedValues: true, withNullPrototype: true, withSparseArray: true, withTypedArray: true }), (v) => {
        expect(notJsonData(v) === undefined).toBe(writesBack(v));
      }),
      { numRuns: 2_000, seed: 11 },
    );
  });
});
