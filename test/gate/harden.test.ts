import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createGate, defineTool, DEFAULT_LIMITS } from "../../src/index.js";

function gateFor(input: z.ZodType = z.looseObject({}), limits = {}) {
  const calls = { n: 0 };
  const t = defineTool({
    name: "t",
    version: "1",
    description: "d",
    input,
    output: z.object({}),
    effect: "read",
    unknownKeys: "strip",
    execute: () => {
      calls.n++;
      return {};
    },
  });
  return { gate: createGate({ tools: [t], limits }), calls };
}

function nest(depth: number): unknown {
  let v: unknown = {};
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

async function firstIssue(args: unknown, input?: z.ZodType, limits = {}) {
  const { gate, calls } = gateFor(input, limits);
  const r = await gate.call("t", args);
  expect(calls.n).toBe(0);
  if (r.ok) throw new Error("expected a failure");
  expect(r.code).toBe("INVALID_INPUT");
  return r.issues?.[0];
}

describe("hardening before any schema runs", () => {
  it("documents its defaults", () => {
    expect(DEFAULT_LIMITS).toEqual({
      maxBytes: 1048576,
      maxDepth: 64,
      forbiddenKeys: ["__proto__", "constructor", "prototype"],
      allowUnsafeIntegers: false,
    });
  });

  it("size: JSON text and values over 1 MiB", async () => {
    const big = "x".repeat(1024 * 1024);
    expect(await firstIssue(JSON.stringify({ s: big }))).toMatchObject({ path: "", code: "too_large" });
    expect(await firstIssue({ s: big })).toMatchObject({ path: "s", code: "too_large" });
    expect(await firstIssue({ a: new Array(1_000_000).fill(0) })).toMatchObject({ code: "too_large" });
    expect(await firstIssue({ s: "x".repeat(100) }, undefined, { maxBytes: 50 })).toMatchObject({ code: "too_large" });
  });

  it("multi-byte text is measured in UTF-8 bytes", async () => {
    const text = JSON.stringify({ s: "é".repeat(400_000) }); // 800 KB of UTF-8, 400k chars
    expect(await firstIssue(text, undefined, { maxBytes: 500_000 })).toMatchObject({ code: "too_large" });
  });

  it("depth: text and values, with the path where it was exceeded", async () => {
    expect(await firstIssue(JSON.stringify(nest(65)))).toMatchObject({ code: "too_deep" });
    expect(await firstIssue(nest(65))).toMatchObject({ code: "too_deep" });
    const ok = gateFor();
    expect((await ok.gate.call("t", nest(63))).ok).toBe(true);
    expect(await firstIssue("[".repeat(20_000) + "]".repeat(20_000))).toMatchObject({ code: "too_deep" });
    const issue = await firstIssue(nest(100));
    expect(issue?.path.split(".").length).toBe(64);
  });

  it("forbidden keys anywhere, in text and values", async () => {
    expect(await firstIssue('{"a":{"__proto__":{"polluted":true}}}')).toEqual({ path: "a.__proto__", code: "forbidden_key", message: "Key is not allowed" });
    expect(await firstIssue({ b: [{ constructor: { prototype: {} } }] })).toMatchObject({ path: "b.0.constructor", code: "forbidden_key" });
    expect(await firstIssue(JSON.parse('{"__proto__":1}'))).toMatchObject({ path: "__proto__" });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("z.record would silently drop __proto__: the gate refuses it first", async () => {
    const rec = z.record(z.string(), z.number());
    expect(rec.safeParse(JSON.parse('{"__proto__":1,"a":2}')).success).toBe(true); // the fact we guard against
    expect(await firstIssue('{"m":{"__proto__":1,"a":2}}', z.object({ m: rec }))).toMatchObject({ path: "m.__proto__", code: "forbidden_key" });
  });

  it("duplicate keys in JSON text, also when escaped", async () => {
    expect(await firstIssue('{"a":1,"a":2}')).toEqual({ path: "a", code: "duplicate_key", message: "Key appears more than once" });
    expect(await firstIssue('{"x":[{"k":1},{"k":1,"\\u006b":2}]}')).toMatchObject({ path: "x.1.k", code: "duplicate_key" });
    const ok = gateFor();
    expect((await ok.gate.call("t", '{"a":{"k":1},"b":{"k":1},"s":"\\"a\\":1,\\"a\\""}')).ok).toBe(true);
  });

  it("a duplicate key in text that is not JSON is reported as not JSON (one fix, not two turns)", async () => {
    expect(await firstIssue('{"a":1,"a":2')).toMatchObject({ path: "", code: "invalid_json" });
    expect(await firstIssue('{"a":1,"a":2,}')).toMatchObject({ code: "invalid_json" });
    expect(await firstIssue('{"a":1,"a":2}')).toMatchObject({ code: "duplicate_key" });
  });

  it("a duplicate key does not end the depth scan: text that is also too deep is refused as too deep, unparsed", async () => {
    expect(await firstIssue(`{"a":1,"a":${"[".repeat(100_000)}`)).toMatchObject({ code: "too_deep" });
    expect(await firstIssue(`{"a":1,"a":${"[".repeat(100)}${"]".repeat(100)}}`)).toMatchObject({ code: "too_deep" });
    expect(await firstIssue(`{"a":1,"a":${"[".repeat(10)}${"]".repeat(10)}}`)).toMatchObject({ path: "a", code: "duplicate_key" });
  });

  it("lone surrogates in values and keys", async () => {
    expect(await firstIssue('{"s":"\\ud800"}')).toMatchObject({ path: "s", code: "lone_surrogate" });
    expect(await firstIssue({ ["k\udc00"]: 1 })).toMatchObject({ code: "lone_surrogate" });
    const ok = gateFor();
    expect((await ok.gate.call("t", { s: "emoji 😀" })).ok).toBe(true);
  });

  it("non-plain objects and non-JSON values", async () => {
    class Thing {
      x = 1;
    }
    expect(await firstIssue({ d: new Date() })).toMatchObject({ path: "d", code: "non_plain_object" });
    expect(await firstIssue({ t: new Thing() })).toMatchObject({ code: "non_plain_object" });
    expect(await firstIssue({ n: 10n })).toMatchObject({ path: "n", code: "non_json" });
    expect(await firstIssue({ f: () => 1 })).toMatchObject({ code: "non_json" });
    expect(await firstIssue({ s: Symbol("x") })).toMatchObject({ code: "non_json" });
    // eslint-disable-next-line no-sparse-arrays -- a hole is exactly what is under test
    expect(await firstIssue({ a: [1, , 3] })).toMatchObject({ path: "a.1", code: "non_json" });
    expect(await firstIssue({ a: [undefined] })).toMatchObject({ code: "non_json" });
    expect(await firstIssue({ n: Number.NaN })).toMatchObject({ code: "non_finite" });
    expect(await firstIssue(undefined)).toMatchObject({ code: "non_json" });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(await firstIssue(cyclic)).toMatchObject({ path: "self", code: "cycle" });
  });

  it("integers beyond 2^53 lose precision and are refused unless allowed", async () => {
    expect(await firstIssue('{"n":9007199254740993}')).toMatchObject({ path: "n", code: "unsafe_integer" });
    const ok = gateFor(undefined, { allowUnsafeIntegers: true });
    expect((await ok.gate.call("t", '{"n":9007199254740993}')).ok).toBe(true);
  });

  it("a null-prototype object is plain data", async () => {
    const v = Object.assign(Object.create(null) as object, { a: 1 });
    expect((await gateFor().gate.call("t", v)).ok).toBe(true);
  });

  it("bad limits are a configuration error", () => {
    expect(() => gateFor(undefined, { maxDepth: 0 })).toThrow(/maxDepth/);
    expect(() => gateFor(undefined, { maxBytes: -1 })).toThrow(/maxBytes/);
  });

  it("a hardening refusal's path passes the secret patterns, as a schema issue's path does", async () => {
    const { gate } = gateFor(z.looseObject({}));
    const key = "sk_live_abcdefghijklmnop1234";
    const dup = await gate.call("t", `{"${key}":1,"${key}":2}`);
    expect(dup).toMatchObject({ ok: false, code: "INVALID_INPUT", issues: [{ path: "[REDACTED]", code: "duplicate_key" }] });
    const below = await gate.call("t", { [key]: { constructor: 1 } });
    expect(below).toMatchObject({ ok: false, issues: [{ path: "[REDACTED].constructor", code: "forbidden_key" }] });
    expect(JSON.stringify([dup, below])).not.toContain(key);
    // A secret key that crosses the 200-character cut is redacted before the cut, never shown in part.
    const pad = "p".repeat(185);
    const crossing = await gate.call("t", `{"${pad}":{"${key}":1,"${key}":2}}`);
    expect(crossing.ok ? "" : (crossing.issues?.[0]?.path ?? "")).toMatch(/^p{185}\.\[REDACTE/);
    expect(JSON.stringify(crossing)).not.toContain("sk_live");
  });

  it("_meta does not turn an allowed __proto__ key into the input's prototype", async () => {
    let seen: unknown;
    const t = defineTool({
      name: "u",
      version: "1",
      description: "d",
      input: z.object({ user: z.string(), isAdmin: z.boolean().default(false) }),
      output: z.object({}),
      effect: "read",
      execute: (i) => {
        seen = i;
        return {};
      },
    });
    const gate = createGate({ tools: [t], limits: { forbiddenKeys: [] } });
    for (const text of ['{"user":"m","__proto__":{"isAdmin":true}}', '{"user":"m","__proto__":{"isAdmin":true},"_meta":{}}']) {
      expect(await gate.call("u", text)).toMatchObject({ ok: false, code: "INVALID_INPUT", issues: [{ path: "__proto__", code: "unrecognized_key" }] });
    }
    expect(seen).toBeUndefined();
  });
});
