import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createGate, defineTool } from "../../src/index.js";

function gateWith(input: z.ZodType) {
  const seen: unknown[] = [];
  const t = defineTool({ name: "t", version: "1", description: "d", input, output: z.object({}), effect: "read", execute: (i) => (seen.push(i), {}) });
  return { gate: createGate({ tools: [t] }), seen };
}

describe("unknown keys are decided against the advertised schema", () => {
  it("a union branch that declares the key: allowed, as advertised, when no earlier branch takes the payload", async () => {
    const { gate, seen } = gateWith(z.object({ x: z.union([z.object({ a: z.string(), c: z.boolean() }), z.object({ a: z.string(), b: z.number() })]) }));
    expect((await gate.call("t", { x: { a: "", b: 0 } })).ok).toBe(true);
    expect(seen).toEqual([{ x: { a: "", b: 0 } }]);
    // `{ a } | { a, b }`: zod's z.union takes `{ a }` first, which strips b (test/gate/unknown-keys-first-match.test.ts).
    const first = gateWith(z.object({ x: z.union([z.object({ a: z.string() }), z.object({ a: z.string(), b: z.number() })]) }));
    const dropped = await first.gate.call("t", { x: { a: "", b: 0 } });
    expect(dropped.ok ? null : dropped.issues?.map((i) => i.path)).toEqual(["x.b"]);
    const r = await first.gate.call("t", { x: { a: "", c: 0 } });
    expect(r.ok ? null : r.issues?.map((i) => i.path)).toEqual(["x.c"]);
    expect(first.seen).toEqual([]);
  });

  it("a transform that renames keys: the input side decides", async () => {
    const { gate, seen } = gateWith(z.object({ o: z.object({ a: z.string() }).transform((o) => ({ b: o.a })) }));
    expect((await gate.call("t", { o: { a: "x" } })).ok).toBe(true);
    expect(seen).toEqual([{ o: { b: "x" } }]);
    const r = await gate.call("t", { o: { a: "x", z: 1 } });
    expect(r.ok ? null : r.issues).toEqual([{ path: "o.z", code: "unrecognized_key", message: "Unknown field" }]);
  });

  it("an intersection refuses what neither side declares, and the listing says so", async () => {
    const { gate } = gateWith(z.object({ x: z.intersection(z.object({ a: z.string() }), z.object({ b: z.number() })) }));
    expect((await gate.call("t", { x: { a: "", b: 1 } })).ok).toBe(true);
    const r = await gate.call("t", { x: { a: "", b: 1, c: 2 } });
    expect(r.ok ? null : r.issues?.map((i) => i.path)).toEqual(["x.c"]);
  });

  it("loose objects and records keep their extra keys", async () => {
    const { gate, seen } = gateWith(z.object({ l: z.looseObject({ a: z.string() }), r: z.record(z.string(), z.number()) }));
    expect((await gate.call("t", { l: { a: "", extra: true }, r: { k: 1 } })).ok).toBe(true);
    expect(seen).toEqual([{ l: { a: "", extra: true }, r: { k: 1 } }]);
  });

  it("keys with slashes and tildes keep their names in the path", async () => {
    const { gate } = gateWith(z.object({ m: z.object({ a: z.string() }) }));
    const r = await gate.call("t", { m: { a: "", "x/y~z": 1 } });
    expect(r.ok ? null : r.issues?.map((i) => i.path)).toEqual(["m.x/y~z"]);
  });
});
