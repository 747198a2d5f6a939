import { describe, it, expect } from "vitest";
import * as v from "valibot";
import { toStandardJsonSchema } from "@valibot/to-json-schema";
import type { StandardSchemaV1 } from "@standard-schema/spec";
import { all, runCase, toolOf, type CorpusCase } from "./_corpus.js";

/** Valibot 1.5 schemas implement Standard Schema only; @valibot/to-json-schema adds Standard JSON Schema. */
const json = (s: v.GenericSchema): StandardSchemaV1 => toStandardJsonSchema(s) as unknown as StandardSchemaV1;
const plain = v.object({ a: v.string() });
const plainHasJsonSchema = typeof (plain["~standard"] as { jsonSchema?: unknown }).jsonSchema === "object";

const cases: CorpusCase[] = [
  {
    name: "vb_optional_nullable_default",
    tool: toolOf("vb_optional_nullable_default", json(v.object({ a: v.string(), n: v.optional(v.number(), 3), o: v.optional(v.string()), nl: v.nullable(v.string()) }))),
    expect: [],
    why: "defaults optional, nullable as anyOf null; strict mode maps nulls back",
  },
  { name: "vb_strict_object", tool: toolOf("vb_strict_object", json(v.strictObject({ a: v.string() }))), expect: [], why: "closed on both sides" },
  { name: "vb_object_strips", tool: toolOf("vb_object_strips", json(v.object({ a: v.string() }))), expect: [], why: "valibot strips, the gate refuses the dropped key and advertises it closed" },
  {
    name: "vb_loose_object",
    tool: toolOf("vb_loose_object", json(v.looseObject({ a: v.string() }))),
    // The converter emits no additionalProperties for a loose object, so the gate advertises it closed and, deciding
    // unknown keys on what it advertises, refuses extra keys too: consistent, but stricter than valibot's own
    // looseObject (use `unknownKeys: "strip"` on such a tool to keep them). Documented in docs/contract.md.
    expect: [],
    why: "a loose object the converter leaves unmarked: advertised closed and enforced closed",
  },
  {
    name: "vb_bounds",
    tool: toolOf("vb_bounds", json(v.object({ n: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(10)), s: v.pipe(v.string(), v.minLength(1), v.maxLength(5)) }))),
    expect: [],
    why: "integer and length bounds agree",
  },
  {
    name: "vb_union_variant",
    tool: toolOf("vb_union_variant", json(v.object({ u: v.union([v.string(), v.number()]), d: v.variant("k", [v.object({ k: v.literal("a") }), v.object({ k: v.literal("b"), x: v.number() })]) }))),
    expect: [],
    why: "a union and a discriminated variant",
  },
  {
    name: "vb_record_tuple_picklist",
    tool: toolOf("vb_record_tuple_picklist", json(v.object({ r: v.record(v.string(), v.number()), t: v.tuple([v.string(), v.number()]), p: v.picklist(["x", "y"]) }))),
    // valibot's record accepts an array (`[]`) where the advertised schema says object: the gate
    // refuses it (src/unknown-keys.ts), so no target sees that drift any more.
    expect: ["openai unrepresentable input r", "openai unrepresentable input t"],
    allow: ["openai drift runtime r", "openai drift advertised t.0", "openai drift advertised t.1", "openai drift runtime t.2"],
    why: "records and tuples are not expressible in strict mode (valibot's record accepts arrays; the gate refuses them)",
  },
  {
    name: "vb_check",
    tool: toolOf("vb_check", json(v.object({ a: v.pipe(v.string(), v.check((s) => !s.includes("x"))) }))),
    expect: all("unrepresentable input -"),
    why: "the converter refuses custom checks: reported per target",
  },
  { name: "vb_transform", tool: toolOf("vb_transform", json(v.object({ a: v.pipe(v.string(), v.transform((s) => s.length)) }))), expect: [], why: "a transform's input side is its input type" },
  {
    name: "vb_intersect",
    tool: toolOf("vb_intersect", json(v.object({ x: v.intersect([v.object({ a: v.string() }), v.object({ b: v.number() })]) }))),
    // The converter emits allOf; the gate closes the intersection with unevaluatedProperties (2020-12), which
    // draft-07 lacks, so only that target is advertised open; strict mode cannot express it at all.
    expect: ["draft-07 drift advertised x.unexpectedField", "openai unrepresentable input x"],
    why: "an intersection: closed for 2020-12 (MCP, Anthropic), open in draft-07, unrepresentable in strict mode",
  },
  { name: "vb_date", tool: toolOf("vb_date", json(v.object({ d: v.date() }))), expect: all("unrepresentable input -"), why: "dates cannot be represented" },
  {
    name: "vb_nested_arrays",
    tool: toolOf("vb_nested_arrays", json(v.object({ lines: v.pipe(v.array(v.object({ sku: v.pipe(v.string(), v.minLength(1)), qty: v.pipe(v.number(), v.integer(), v.minValue(1)) })), v.minLength(1)) }))),
    expect: [],
    why: "arrays of objects with bounds",
  },
];

describe("valibot corpus", () => {
  it("plain valibot schemas lack Standard JSON Schema: the checker reports it per target, never advertises {}", async () => {
    expect(plainHasJsonSchema).toBe(false);
    const { got } = await runCase({ name: "vb_plain", tool: toolOf("vb_plain", plain), expect: [], why: "" });
    expect([...got].sort()).toEqual(all("unrepresentable input -").sort());
  });

  describe("through @valibot/to-json-schema (Standard JSON Schema)", () => {
    for (const c of cases) {
      it(`${c.name}: ${c.why}`, async () => {
        const { got } = await runCase(c);
        for (const e of c.expect) expect(got, `missing finding "${e}"`).toContain(e);
        const extra = [...got].filter((g) => !c.expect.includes(g) && !(c.allow ?? []).includes(g));
        expect(extra, "unexpected findings").toEqual([]);
      });
    }
  });
});
