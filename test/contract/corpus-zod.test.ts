import { describe, it, expect } from "vitest";
import { z } from "zod";
import { all, runCase, toolOf, type CorpusCase } from "./_corpus.js";

const cases: CorpusCase[] = [
  { name: "defaults", tool: toolOf("defaults", z.object({ a: z.string(), n: z.number().int().default(3) })), expect: [], why: "input side: a defaulted field is optional, as the runtime treats it" },
  {
    name: "optional_vs_nullable",
    tool: toolOf("optional_vs_nullable", z.object({ a: z.string().optional(), b: z.string().nullable(), c: z.string().nullish() })),
    expect: [],
    why: "optional, nullable and nullish each advertised as enforced; strict mode maps a's null back",
  },
  { name: "union", tool: toolOf("union", z.object({ v: z.union([z.string(), z.number().int()]) })), expect: [], why: "a union is a type list, not {}" },
  {
    name: "discriminated_union",
    tool: toolOf("discriminated_union", z.object({ pay: z.discriminatedUnion("kind", [z.object({ kind: z.literal("card"), last4: z.string().length(4) }), z.object({ kind: z.literal("bank"), iban: z.string().min(5) })]) })),
    expect: [],
    why: "oneOf branches closed one by one; strict mode writes it as anyOf (exclusive by the discriminator)",
  },
  {
    name: "record",
    tool: toolOf("record", z.object({ tags: z.record(z.string(), z.number()) })),
    expect: ["openai unrepresentable input tags"],
    why: "strict mode has no records: reported, not silently closed",
  },
  {
    name: "tuple",
    tool: toolOf("tuple", z.object({ p: z.tuple([z.number(), z.string()]) })),
    expect: ["openai unrepresentable input p", "openai drift advertised p.0"],
    why: "strict mode has no tuples: the loosened array lets a string into slot 0",
  },
  {
    name: "shared_definition_optional_field",
    tool: toolOf(
      "shared_definition_optional_field",
      (() => {
        const Addr = z.object({ city: z.string(), note: z.string().optional() }).meta({ id: "Addr" });
        return z.object({ ship: Addr, bill: Addr });
      })(),
    ),
    expect: [],
    why: "an optional field inside a $defs definition: strict mode sends it (null for absent), so omitting it is no call a strict model makes",
  },
  { name: "enum_literal", tool: toolOf("enum_literal", z.object({ e: z.enum(["a", "b"]), l: z.literal(5) })), expect: [], why: "enum neighbours refused on both sides" },
  { name: "strict_object", tool: toolOf("strict_object", z.strictObject({ a: z.string() })), expect: [], why: "closed on both sides" },
  { name: "strip_object", tool: toolOf("strip_object", z.object({ a: z.string() })), expect: [], why: "the gate refuses unknown keys and advertises additionalProperties: false" },
  {
    name: "strip_tool",
    tool: toolOf("strip_tool", z.object({ a: z.string() }), { unknownKeys: "strip" }),
    expect: [],
    why: "unknownKeys: strip: advertised open, extra keys dropped at run time",
  },
  {
    name: "loose_object",
    tool: toolOf("loose_object", z.looseObject({ a: z.string() })),
    expect: ["openai unrepresentable input -", "openai drift runtime unexpectedField"],
    why: "strict mode must close the object, the runtime keeps extra keys",
  },
  {
    name: "refinement",
    tool: toolOf("refinement", z.object({ a: z.string().refine((s) => !s.includes("x")) })),
    expect: [...all("unrepresentable input a"), ...all("drift advertised a")],
    why: "refinements vanish from JSON Schema: reported statically, and a counterexample found",
  },
  {
    name: "overwrite",
    tool: toolOf("overwrite", z.object({ a: z.string().trim().min(1) })),
    expect: [...all("unrepresentable input a")],
    allow: [...all("drift advertised a")],
    why: "trim() runs before min(1): \" \" is advertised as valid and refused; reported statically (the probe finds it only with luck)",
  },
  {
    name: "overwrite_piped",
    tool: toolOf("overwrite_piped", z.object({ a: z.string().trim().pipe(z.string().min(1)) })),
    expect: [...all("unrepresentable input a")],
    allow: [...all("drift advertised a")],
    why: "the checks of a pipe after trim() see the trimmed value, and the input side advertises the pipe's input only",
  },
  {
    name: "overwrite_alone",
    tool: toolOf("overwrite_alone", z.object({ a: z.string().trim(), b: z.string().max(5).toLowerCase(), c: z.string().trim().transform((s) => s.length), d: z.string().trim().pipe(z.string()) })),
    expect: [],
    why: "an overwrite with no check after it (alone, before a transform, piped into a bare string) changes no verdict",
  },
  { name: "transform", tool: toolOf("transform", z.object({ a: z.string().transform((s) => s.length) })), expect: [], why: "input side of a transform is its input type" },
  {
    name: "object_transform",
    tool: toolOf("object_transform", z.object({ o: z.object({ a: z.string() }).transform((o) => ({ b: o.a })) })),
    expect: [],
    why: "a transform that renames keys: unknown keys are decided on the advertised input side, so `o.a` is known",
  },
  {
    name: "pipe",
    tool: toolOf("pipe", z.object({ a: z.string().pipe(z.string().min(2)) })),
    expect: [...all("unrepresentable input a"), ...all("drift advertised a")],
    why: "the input side of a pipe shows only its first stage; min(2) of the second is lost (reported by the probe, and found)",
  },
  {
    name: "pipe_found_only_by_the_probe",
    tool: toolOf("pipe_found_only_by_the_probe", z.object({ t: z.string().pipe(z.string().max(20)) })),
    expect: all("unrepresentable input t"),
    why: "generated strings are short: only the probe sees that max(20) of the second stage is not advertised",
  },
  {
    name: "transform_with_ctx",
    tool: toolOf("transform_with_ctx", z.object({ user: z.string().transform((s, ctx) => (s === "admin" ? (ctx.addIssue({ code: "custom", message: "reserved" }), s) : s)) })),
    expect: all("unrepresentable input user"),
    why: "a transform that takes ctx can refuse a value the schema accepts ('admin' is never generated)",
  },
  {
    name: "regex_flags",
    tool: toolOf("regex_flags", z.object({ tag: z.string().regex(/^[a-z]+$/i) })),
    expect: all("unrepresentable input tag"),
    allow: all("drift runtime tag"),
    why: "a JSON Schema pattern takes no flags: /i is lost from the advertised pattern",
  },
  {
    name: "nested_arrays_of_objects",
    tool: toolOf("nested_arrays_of_objects", z.object({ lines: z.array(z.object({ sku: z.string().min(1), qty: z.number().int().min(1).max(99), note: z.string().optional() })).min(1).max(5) })),
    expect: [],
    why: "bounds on items and lengths agree; nested optional nulls mapped back in strict mode",
  },
  {
    name: "email_format",
    tool: toolOf("email_format", z.object({ e: z.email() })),
    expect: ["mcp drift runtime e", "draft-07 drift runtime e", "anthropic drift runtime e"],
    allow: ["openai drift runtime e"],
    why: "ajv-formats' email is stricter than zod's email pattern",
  },
  {
    name: "uri_format",
    tool: toolOf("uri_format", z.object({ u: z.url() })),
    expect: ["openai unrepresentable input u", "openai drift advertised u"],
    why: "strict mode has no uri format: removed, reported, and the runtime still refuses non-URLs",
  },
  { name: "uuid_datetime", tool: toolOf("uuid_datetime", z.object({ id: z.uuid(), at: z.iso.datetime() })), expect: [], why: "patterns and formats agree" },
  {
    name: "integer_bounds",
    tool: toolOf("integer_bounds", z.object({ n: z.number().int().gt(0).lte(100), m: z.number().multipleOf(5), f: z.number().gt(0.5).lt(2) })),
    expect: [],
    why: "exclusive and inclusive bounds, multipleOf: boundary values agree",
  },
  {
    name: "union_overlapping_objects",
    tool: toolOf("union_overlapping_objects", z.object({ x: z.union([z.object({ a: z.string() }), z.object({ a: z.string(), b: z.number() })]) })),
    expect: all("drift advertised x.b"),
    why: "a union whose first branch strips a key the second declares: the advertised anyOf allows { a, b }, but zod's first branch would drop b, so the gate refuses it (drift the check reports)",
  },
  { name: "intersection", tool: toolOf("intersection", z.object({ x: z.intersection(z.object({ a: z.string() }), z.object({ b: z.number() })) })), expect: [], why: "zod merges the intersection into one closed object" },
  { name: "catchall", tool: toolOf("catchall", z.object({ a: z.string() }).catchall(z.number())), expect: ["openai unrepresentable input -"], why: "typed extra keys: fine in JSON Schema, not in strict mode" },
  {
    name: "preprocess",
    tool: toolOf("preprocess", z.object({ a: z.preprocess((x) => (typeof x === "number" ? String(x) : x), z.string()) })),
    expect: [...all("unrepresentable input a"), ...all("drift runtime a")],
    why: "preprocess accepts what the schema says is refused",
  },
  {
    name: "date",
    tool: toolOf("date", z.object({ when: z.date() })),
    expect: all("unrepresentable input -"),
    why: "dates cannot be represented: reported per target, never advertised as {}",
  },
  {
    name: "output_transform",
    tool: toolOf("output_transform", z.object({ a: z.string() }), { output: z.object({ at: z.string().transform((s) => s.length) }) }),
    expect: ["mcp unrepresentable output -", "draft-07 unrepresentable output -"],
    why: "an output transform cannot be advertised as outputSchema",
  },
];

describe("zod corpus: expected verdicts per target", () => {
  it("has at least 15 tricky schemas", () => {
    expect(cases.length).toBeGreaterThanOrEqual(15);
  });
  for (const c of cases) {
    it(`${c.name}: ${c.why}`, async () => {
      const { got } = await runCase(c);
      for (const e of c.expect) expect(got, `missing finding "${e}"`).toContain(e);
      const extra = [...got].filter((g) => !c.expect.includes(g) && !(c.allow ?? []).includes(g));
      expect(extra, "unexpected findings").toEqual([]);
    });
  }
});
