/**
 * The unknown-key check against the advertised schema, where it has unions (`anyOf` / `oneOf`):
 * a key is unknown when the branch the payload matches does not declare it, not when some other
 * branch does not. And an array where the advertised schema requires an object is refused (ArkType
 * accepts `[]` for an object whose keys are all optional), while other type mismatches are left
 * to the tool's own validator (`z.coerce.number()` accepts "5" on purpose).
 */
import { describe, expect, it } from "vitest";
import { type } from "arktype";
import { z } from "zod";
import type { StandardSchemaV1 } from "@standard-schema/spec";
import { createGate, defineTool } from "../../src/index.js";

/** One read tool around `input`; `seen` records each input execute received. */
function gateWith(input: StandardSchemaV1) {
  const seen: unknown[] = [];
  const tool = defineTool({ name: "t", version: "1", description: "d", input, output: type("unknown"), effect: "read", execute: (i) => (seen.push(i), null) });
  return { gate: createGate({ tools: [tool] }), seen };
}

/** The issues of a refused call (`null` when the call succeeded). */
async function issuesOf(input: StandardSchemaV1, args: unknown) {
  const r = await gateWith(input).gate.call("t", args);
  return r.ok ? null : { code: r.code, issues: r.issues };
}

const unknownAt = (...paths: string[]) => ({ code: "INVALID_INPUT", issues: paths.map((path) => ({ path, code: "unrecognized_key", message: "Unknown field" })) });
const arrayAt = (path: string) => ({ code: "INVALID_INPUT", issues: [{ path, code: "invalid_type", message: "Expected an object, received an array" }] });

const ZA = z.object({ kind: z.literal("a"), x: z.number() });
const ZB = z.object({ kind: z.literal("b"), y: z.string() });
const AA = type({ kind: "'a'", x: "number" });
const AB = type({ kind: "'b'", y: "string" });

/** The same union, from each validator. */
const unions: [string, StandardSchemaV1][] = [
  ["zod discriminatedUnion", z.discriminatedUnion("kind", [ZA, ZB])],
  ["zod union", z.union([ZA, ZB])],
  ["ArkType union", AA.or(AB)],
];

describe("unknown keys in a union: the matching branch decides", () => {
  for (const [name, u] of unions) {
    describe(name, () => {
      const input = name.startsWith("zod") ? z.object({ u: u as typeof ZA }) : type({ u: u as typeof AA });

      it("a key the matching branch declares is not reported, one it does not is", async () => {
        expect(await issuesOf(input, { u: { kind: "a", x: 1, y: "s" } })).toEqual(unknownAt("u.y"));
        expect(await issuesOf(input, { u: { kind: "b", y: "s", x: 1 } })).toEqual(unknownAt("u.x"));
      });

      it("a payload without unknown keys passes, and the tool runs", async () => {
        const { gate, seen } = gateWith(input);
        expect((await gate.call("t", { u: { kind: "a", x: 1 } })).ok).toBe(true);
        expect((await gate.call("t", { u: { kind: "b", y: "s" } })).ok).toBe(true);
        expect(seen).toEqual([{ u: { kind: "a", x: 1 } }, { u: { kind: "b", y: "s" } }]);
      });

      it("a key no branch declares is reported (once), with the matching branch's other extras", async () => {
        expect(await issuesOf(input, { u: { kind: "a", x: 1, z: true } })).toEqual(unknownAt("u.z"));
        expect(await issuesOf(input, { u: { kind: "a", x: 1, y: "s", z: true } })).toEqual(unknownAt("u.y", "u.z"));
      });

      it("the tool never runs when a key is unknown", async () => {
        const { gate, seen } = gateWith(input);
        expect((await gate.call("t", { u: { kind: "a", x: 1, z: true } })).ok).toBe(false);
        expect(seen).toEqual([]);
      });
    });
  }

  it("a union inside an array: each element is judged against its own branch", async () => {
    const payload = { items: [{ kind: "a", x: 1 }, { kind: "b", y: "s", z: 1 }, { kind: "a", x: 2 }] };
    expect(await issuesOf(z.object({ items: z.array(z.discriminatedUnion("kind", [ZA, ZB])) }), payload)).toEqual(unknownAt("items.1.z"));
    expect(await issuesOf(type({ items: AA.or(AB).array() }), payload)).toEqual(unknownAt("items.1.z"));
    const ok = { items: [{ kind: "a", x: 1 }, { kind: "b", y: "s" }] };
    expect(await issuesOf(z.object({ items: z.array(z.union([ZA, ZB])) }), ok)).toBeNull();
    expect(await issuesOf(type({ items: AA.or(AB).array() }), ok)).toBeNull();
  });

  it("a union inside a union branch", async () => {
    const zInner = z.discriminatedUnion("t", [z.object({ t: z.literal("p"), p: z.number() }), z.object({ t: z.literal("q"), q: z.number() })]);
    const zod = z.object({ u: z.discriminatedUnion("kind", [z.object({ kind: z.literal("a"), inner: zInner }), ZB]) });
    const aInner = type({ t: "'p'", p: "number" }).or({ t: "'q'", q: "number" });
    const ark = type({ u: type({ kind: "'a'", inner: aInner }).or(AB) });
    for (const input of [zod, ark]) {
      expect(await issuesOf(input, { u: { kind: "a", inner: { t: "p", p: 1, q: 2 } } })).toEqual(unknownAt("u.inner.q"));
      expect(await issuesOf(input, { u: { kind: "a", inner: { t: "q", q: 2, p: 1 } } })).toEqual(unknownAt("u.inner.p"));
      expect(await issuesOf(input, { u: { kind: "a", inner: { t: "q", q: 2 }, y: "s" } })).toEqual(unknownAt("u.y"));
      expect(await issuesOf(input, { u: { kind: "a", inner: { t: "p", p: 1 } } })).toBeNull();
    }
  });

  it("branches behind $ref (zod schemas with an id) and a recursive schema", async () => {
    const Cat = z.object({ kind: z.literal("cat"), meow: z.boolean() }).meta({ id: "UnknownKeysBranchesCat" });
    const Dog = z.object({ kind: z.literal("dog"), bark: z.boolean() }).meta({ id: "UnknownKeysBranchesDog" });
    expect(await issuesOf(z.object({ pet: z.union([Cat, Dog]) }), { pet: { kind: "cat", meow: true, bark: true } })).toEqual(unknownAt("pet.bark"));
    const Leaf = z.object({ leaf: z.number() });
    const Tree = z.object({
      name: z.string(),
      get kids(): z.ZodArray<z.ZodUnion<[typeof Tree, typeof Leaf]>> {
        return z.array(z.union([Tree, Leaf]));
      },
    });
    const payload = { t: { name: "r", kids: [{ name: "n", kids: [{ leaf: 1, z: 1 }], q: 1 }, { leaf: 2 }] } };
    expect(await issuesOf(z.object({ t: Tree }), payload)).toEqual(unknownAt("t.kids.0.q", "t.kids.0.kids.0.z"));
  });
});

describe("an array where the advertised schema requires an object", () => {
  it("is refused at the root, as a value and as JSON text, and the tool never runs", async () => {
    const { gate, seen } = gateWith(type({ "query?": "string" }));
    expect(gate.list()[0]?.inputSchema.type).toBe("object");
    for (const args of [[], "[]"]) {
      const r = await gate.call("t", args);
      expect(r.ok ? null : { code: r.code, issues: r.issues }).toEqual(arrayAt(""));
    }
    expect(seen).toEqual([]);
    expect((await gate.call("t", { query: "x" })).ok).toBe(true);
    expect(seen).toEqual([{ query: "x" }]);
  });

  it("is refused where it is nested, and the tool never runs", async () => {
    const { gate, seen } = gateWith(type({ filter: { "q?": "string" }, "list?": type({ "o?": { "p?": "number" } }).array() }));
    const nested = await gate.call("t", { filter: [] });
    expect(nested.ok ? null : { code: nested.code, issues: nested.issues }).toEqual(arrayAt("filter"));
    const inArray = await gate.call("t", { filter: {}, list: [{}, { o: [] }] });
    expect(inArray.ok ? null : { code: inArray.code, issues: inArray.issues }).toEqual(arrayAt("list.1.o"));
    expect(seen).toEqual([]);
  });

  it("inside a union: refused when no branch allows an array, reported at the matching branch", async () => {
    expect(await issuesOf(type({ u: type({ "p?": "string" }).or({ "q?": "number" }) }), { u: [] })).toEqual(arrayAt("u"));
    // Branch "a" declares o (an object): the array is the problem, not the key.
    expect(await issuesOf(type({ u: type({ kind: "'a'", "o?": { "p?": "string" } }).or({ kind: "'b'" }) }), { u: { kind: "a", o: [] } })).toEqual(arrayAt("u.o"));
  });

  it("is allowed where a union branch allows an array", async () => {
    const { gate, seen } = gateWith(type({ a: type({ "b?": "string" }).or("string[]") }));
    expect((await gate.call("t", { a: [] })).ok).toBe(true);
    expect((await gate.call("t", { a: ["x"] })).ok).toBe(true);
    expect(seen).toEqual([{ a: [] }, { a: ["x"] }]);
  });

  it("other type mismatches are left to the tool's validator: z.coerce.number() still accepts '5'", async () => {
    const { gate, seen } = gateWith(z.object({ n: z.coerce.number() }));
    expect(gate.list()[0]?.inputSchema).toMatchObject({ properties: { n: { type: "number" } } });
    expect((await gate.call("t", { n: "5" })).ok).toBe(true);
    const inUnion = gateWith(z.object({ u: z.union([z.object({ a: z.coerce.number() }), z.object({ b: z.string() })]) }));
    expect((await inUnion.gate.call("t", { u: { a: "5" } })).ok).toBe(true);
    expect(seen).toEqual([{ n: 5 }]);
    expect(inUnion.seen).toEqual([{ u: { a: 5 } }]);
  });
});

describe("a payload built to be refused", () => {
  it("past 1,000 errors, unknown keys are taken as Ajv reports them: still refused, the first 20 named, the tool never runs", async () => {
    const { gate, seen } = gateWith(z.object({ u: z.discriminatedUnion("kind", [ZA, ZB]) }));
    const u: Record<string, unknown> = { kind: "a", x: 1 };
    for (let i = 0; i < 2_000; i++) u[`k${i}`] = i;
    const r = await gate.call("t", { u });
    expect(r.ok ? null : r.code).toBe("INVALID_INPUT");
    const issues = r.ok ? [] : (r.issues ?? []);
    expect(issues).toHaveLength(20);
    expect(issues.slice(0, 19).every((i) => i.code === "unrecognized_key" && /^u\.k\d+$/.test(i.path))).toBe(true);
    expect(seen).toEqual([]);
  });
});

describe("overlapping branches", () => {
  it("a key only another branch declares is still unknown: { id } | { name } refuses { id, name }, as the advertised schema does", async () => {
    for (const input of [type({ id: "string" }).or({ name: "string" }), z.union([z.object({ id: z.string() }), z.object({ name: z.string() })])]) {
      const { gate, seen } = gateWith(input);
      const r = await gate.call("t", { id: "1", name: "n" });
      expect(r.ok ? null : { code: r.code, issues: r.issues }).toEqual(unknownAt("name"));
      expect(seen).toEqual([]);
      expect((await gate.call("t", { id: "1" })).ok).toBe(true);
    }
  });
});
