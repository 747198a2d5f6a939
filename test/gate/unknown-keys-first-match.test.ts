/**
 * A union whose branches overlap, run as the validator runs it: zod's `z.union` (and valibot's
 * `union`) take the first branch that passes, and a plain object branch passes by dropping the keys
 * it does not declare. Such a key is refused, even where a later branch declares it and the
 * advertised `anyOf` allows it, unless the validated value shows the key was kept (a strict branch
 * failed and a later one took it; ArkType keeps extra keys).
 */
import { describe, expect, it } from "vitest";
import { type } from "arktype";
import * as v from "valibot";
import { toStandardJsonSchema } from "@valibot/to-json-schema";
import { z } from "zod";
import type { StandardSchemaV1 } from "@standard-schema/spec";
import { createGate, defineTool } from "../../src/index.js";
import { listingFor } from "../../src/json-schema.js";
import { compileUnknownKeyCheck } from "../../src/unknown-keys.js";

/** One read tool around `input`; `seen` records each input execute received. */
function gateWith(input: StandardSchemaV1) {
  const seen: unknown[] = [];
  const tool = defineTool({ name: "t", version: "1", description: "d", input, output: type("unknown"), effect: "read", execute: (i) => (seen.push(i), null) });
  return { gate: createGate({ tools: [tool] }), seen };
}

/** The unknown-key check of `input`, asked with the value its validator returned (`validated: true`) or without it. */
function checkOf(input: StandardSchemaV1) {
  const tool = defineTool({ name: "t", version: "1", description: "d", input, output: type("unknown"), effect: "read", execute: () => null });
  const l = listingFor(tool);
  if (!l.ok) throw new Error(l.reason);
  const check = compileUnknownKeyCheck(l.listing.inputSchema);
  return (payload: unknown, withValue: boolean) => {
    const r = input["~standard"].validate(payload) as StandardSchemaV1.Result<unknown>;
    if (r.issues !== undefined) throw new Error("the validator refused the payload");
    return check(payload, (s) => s, ...(withValue ? [r.value] : [])).map((i) => i.path);
  };
}

const unknownAt = (...paths: string[]) => ({ code: "INVALID_INPUT", issues: paths.map((path) => ({ path, code: "unrecognized_key", message: "Unknown field" })) });
const refusal = (r: Awaited<ReturnType<ReturnType<typeof gateWith>["gate"]["call"]>>) => (r.ok ? null : { code: r.code, issues: r.issues });

const Order = z.object({ orderId: z.string() });
const Refund = z.object({ orderId: z.string(), amountCents: z.number() });

describe("a subset branch first (z.object, which strips): the key it would drop is refused", () => {
  it("at the root, as a value and as JSON text, and the tool never runs", async () => {
    const { gate, seen } = gateWith(z.union([Order, Refund]));
    expect(gate.list()[0]?.inputSchema.anyOf).toHaveLength(2); // the advertised schema allows amountCents
    for (const args of [{ orderId: "o_1", amountCents: 500 }, '{"orderId":"o_1","amountCents":500}']) expect(refusal(await gate.call("t", args))).toEqual(unknownAt("amountCents"));
    expect(seen).toEqual([]);
    expect((await gate.call("t", { orderId: "o_1" })).ok).toBe(true);
    expect(seen).toEqual([{ orderId: "o_1" }]);
  });

  it("nested, with an optional key in the first branch, and next to a key no branch declares", async () => {
    const input = z.object({ u: z.union([z.object({ a: z.string(), b: z.number().optional() }), z.object({ a: z.string(), c: z.string() })]) });
    const { gate, seen } = gateWith(input);
    expect(refusal(await gate.call("t", { u: { a: "x", c: "y" } }))).toEqual(unknownAt("u.c"));
    expect(refusal(await gate.call("t", { u: { a: "x", c: "y", z: 1 } }))).toEqual(unknownAt("u.z", "u.c"));
    expect((await gate.call("t", { u: { a: "x", b: 1 } })).ok).toBe(true);
    expect(seen).toEqual([{ u: { a: "x", b: 1 } }]);
  });

  it("a key the first branch drops deeper down", async () => {
    const input = z.object({ u: z.union([z.object({ a: z.object({ x: z.number() }) }), z.object({ a: z.object({ x: z.number(), y: z.number() }) })]) });
    expect(refusal(await gateWith(input).gate.call("t", { u: { a: { x: 1, y: 2 } } }))).toEqual(unknownAt("u.a.y"));
  });

  it("valibot's union takes the first branch too, and its object strips", async () => {
    const input = toStandardJsonSchema(v.union([v.object({ orderId: v.string() }), v.object({ orderId: v.string(), amountCents: v.number() })])) as unknown as StandardSchemaV1;
    const { gate, seen } = gateWith(input);
    expect(refusal(await gate.call("t", { orderId: "o_1", amountCents: 500 }))).toEqual(unknownAt("amountCents"));
    expect(seen).toEqual([]);
  });

  it("a { id } | { name } payload with both still names name only", async () => {
    expect(refusal(await gateWith(z.union([z.object({ id: z.string() }), z.object({ name: z.string() })])).gate.call("t", { id: "1", name: "n" }))).toEqual(unknownAt("name"));
  });
});

describe("the validated value shows the key was kept: allowed", () => {
  it("a strict branch first fails on the extra key, and zod takes the branch that declares it", () => {
    const check = checkOf(z.union([z.strictObject({ orderId: z.string() }), Refund]));
    expect(check({ orderId: "o_1", amountCents: 500 }, true)).toEqual([]);
    // Without the value the gate cannot tell a strict branch from a stripping one: refused.
    expect(check({ orderId: "o_1", amountCents: 500 }, false)).toEqual(["amountCents"]);
    expect(check({ orderId: "o_1" }, false)).toEqual([]);
  });

  it("a stripping branch first: the value lacks the key, refused with or without it", () => {
    const check = checkOf(z.union([Order, Refund]));
    expect(check({ orderId: "o_1", amountCents: 500 }, true)).toEqual(["amountCents"]);
  });

  it("ArkType lists the fuller branch first, so its unions pass whole even without the validated value (a guard)", () => {
    const input = type({ a: "string", "x?": "string" }).or({ a: "string", b: "number" });
    const l = listingFor(defineTool({ name: "t", version: "1", description: "d", input, output: type("unknown"), effect: "read", execute: () => null }));
    expect(l.ok && (l.listing.inputSchema.anyOf as { required: string[] }[])[0]?.required).toEqual(["a", "b"]);
    const check = checkOf(input);
    expect(check({ a: "x", b: 1 }, false)).toEqual([]);
    expect(check({ a: "x", b: 1 }, true)).toEqual([]);
  });

  it("a transform or a coercion in the branch taken, or an outer transform that moves the union: the check fails open", async () => {
    const byLegacy = z.union([
      z.object({ orderId: z.string() }).refine((o) => o.orderId.startsWith("ord_"), "orderId must start with ord_"),
      z.object({ orderId: z.string(), legacyNumber: z.number() }).transform((o) => ({ orderId: `ord_${o.legacyNumber}` })),
    ]);
    const a = gateWith(byLegacy);
    expect((await a.gate.call("t", { orderId: "X-17", legacyNumber: 17 })).ok).toBe(true);
    expect(a.seen).toEqual([{ orderId: "ord_17" }]);
    const unwrapped = z.object({ target: z.union([z.object({ id: z.string() }).refine((o) => o.id.startsWith("u_")), z.object({ id: z.string(), name: z.string() })]) }).transform((o) => o.target);
    const b = gateWith(unwrapped);
    expect((await b.gate.call("t", { target: { id: "x", name: "Ann" } })).ok).toBe(true);
    expect(b.seen).toEqual([{ id: "x", name: "Ann" }]);
    // The review's case still refuses: the value shows a plain copy without the key.
    expect(refusal(await gateWith(z.union([Order, Refund])).gate.call("t", { orderId: "o_1", amountCents: 5 }))).toEqual(unknownAt("amountCents"));
  });

  it("nested unions: an inner strict branch first is kept, an inner stripping one is not", () => {
    const outer = (inner: z.ZodType) => z.object({ u: z.union([z.object({ kind: z.literal("a"), inner }), z.object({ kind: z.literal("b"), y: z.string() })]) });
    const strictFirst = checkOf(outer(z.union([z.strictObject({ p: z.number() }), z.object({ p: z.number(), q: z.number() })])));
    expect(strictFirst({ u: { kind: "a", inner: { p: 1, q: 2 } } }, true)).toEqual([]);
    const stripFirst = checkOf(outer(z.union([z.object({ p: z.number() }), z.object({ p: z.number(), q: z.number() })])));
    expect(stripFirst({ u: { kind: "a", inner: { p: 1, q: 2 } } }, true)).toEqual(["u.inner.q"]);
  });
});

describe("discriminated unions: only the branch the discriminator names fits", () => {
  const A = z.object({ kind: z.literal("a"), x: z.number(), note: z.string().optional() });
  const B = z.object({ kind: z.literal("b"), x: z.number(), y: z.string() });

  it("a payload of the second branch passes whole, a key of the other branch is refused", async () => {
    const { gate, seen } = gateWith(z.object({ u: z.discriminatedUnion("kind", [A, B]) }));
    expect((await gate.call("t", { u: { kind: "b", x: 1, y: "s" } })).ok).toBe(true);
    expect(seen).toEqual([{ u: { kind: "b", x: 1, y: "s" } }]);
    expect(refusal(await gate.call("t", { u: { kind: "a", x: 1, y: "s" } }))).toEqual(unknownAt("u.y"));
  });

  it("a stripping union inside a discriminated branch", async () => {
    const inner = z.union([z.object({ p: z.number() }), z.object({ p: z.number(), q: z.number() })]);
    const { gate, seen } = gateWith(z.object({ u: z.discriminatedUnion("kind", [A.extend({ inner }), B]) }));
    expect(refusal(await gate.call("t", { u: { kind: "a", x: 1, inner: { p: 1, q: 2 } } }))).toEqual(unknownAt("u.inner.q"));
    expect((await gate.call("t", { u: { kind: "a", x: 1, inner: { p: 1 } } })).ok).toBe(true);
    expect(seen).toEqual([{ u: { kind: "a", x: 1, inner: { p: 1 } } }]);
  });
});
