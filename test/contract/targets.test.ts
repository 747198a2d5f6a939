import { describe, it, expect } from "vitest";
import { z } from "zod";
import { createGate, defineTool } from "../../src/index.js";
import { fromOpenAIStrictArgs, targetContract, toAnthropicInputSchema, toOpenAIStrict } from "../../src/testing/index.js";
import { makeOrderTools, createFakeOrders } from "../../examples/orders/index.js";

const advertised = (s: z.ZodType) => {
  const gate = createGate({ tools: [defineTool({ name: "t", version: "1", description: "d", input: s, output: z.unknown(), effect: "read", execute: () => null })] });
  return gate.list()[0]!.inputSchema;
};

describe("toOpenAIStrict", () => {
  it("makes every property required, optional ones nullable, every object closed", () => {
    const r = toOpenAIStrict(advertised(z.object({ id: z.string(), note: z.string().optional(), n: z.number().int().default(1), tags: z.array(z.object({ k: z.enum(["a", "b"]).optional() })) })));
    expect(r.schema).toEqual({
      type: "object",
      properties: {
        id: { type: "string" },
        note: { type: ["string", "null"] },
        n: { type: ["integer", "null"], minimum: -9007199254740991, maximum: 9007199254740991 },
        tags: {
          type: "array",
          items: { type: "object", properties: { k: { type: ["string", "null"], enum: ["a", "b", null] } }, required: ["k"], additionalProperties: false },
        },
      },
      required: ["id", "note", "n", "tags"],
      additionalProperties: false,
    });
    expect(r.nullable).toEqual(["note", "n", "tags.*.k"]);
    expect(r.problems).toEqual([]);
  });

  it("removes unsupported keywords and formats, and lists each in problems", () => {
    const r = toOpenAIStrict({
      type: "object",
      properties: { u: { type: "string", format: "uri" }, s: { type: "array", items: { type: "string" }, uniqueItems: true }, e: { type: "string", format: "email" } },
      required: ["u", "s", "e"],
      additionalProperties: false,
    });
    expect(r.problems).toEqual([
      'u: format "uri" removed (not supported in strict mode); the runtime still enforces it',
      "s: `uniqueItems` removed (not supported in strict mode); the runtime still enforces it",
    ]);
    expect(r.schema.properties).toEqual({ u: { type: "string" }, s: { type: "array", items: { type: "string" } }, e: { type: "string", format: "email" } });
  });

  it("reports what it cannot express instead of emitting {} silently", () => {
    const r = toOpenAIStrict({ type: "object", properties: { any: {}, rec: { type: "object", additionalProperties: { type: "number" } } }, required: ["any", "rec"] });
    expect(r.problems).toContain("any: accepts any value; strict mode needs a type there");
    expect(r.problems).toContain("rec: extra keys (a record or an open object) cannot be expressed in strict mode; advertised closed");
    expect(toOpenAIStrict({ type: "string" }).problems).toContain("(root): strict mode needs a root object schema without a union");
  });

  it("keeps a nullable optional field nullable and says absent cannot be expressed", () => {
    const r = toOpenAIStrict(advertised(z.object({ c: z.string().nullish() })));
    expect(r.nullable).toEqual([]);
    expect(r.optional).toEqual(["c"]);
    expect(r.notes).toEqual(['c: optional and nullable; strict mode cannot express "absent", so a null is passed on as null']);
  });
});

describe("fromOpenAIStrictArgs", () => {
  const schema = advertised(
    z.object({
      id: z.string(),
      note: z.string().optional(),
      keep: z.string().nullable(),
      maybe: z.string().nullish(),
      lines: z.array(z.object({ sku: z.string(), gift: z.boolean().optional() })),
      pay: z.discriminatedUnion("kind", [z.object({ kind: z.literal("card"), last4: z.string().optional() }), z.object({ kind: z.literal("bank"), iban: z.string().nullable() })]).optional(),
    }),
  );

  it("drops a null for an optional, non-nullable field; keeps nulls the original accepts", () => {
    const args = { id: "1", note: null, keep: null, maybe: null, lines: [{ sku: "a", gift: null }], pay: { kind: "bank", iban: null } };
    expect(fromOpenAIStrictArgs(args, schema)).toEqual({ id: "1", keep: null, maybe: null, lines: [{ sku: "a" }], pay: { kind: "bank", iban: null } });
    expect(fromOpenAIStrictArgs({ ...args, pay: { kind: "card", last4: null } }, schema)).toMatchObject({ pay: { kind: "card" } });
    expect(fromOpenAIStrictArgs({ ...args, pay: null }, schema)).not.toHaveProperty("pay");
  });

  it("maps JSON text, and returns text it need not change (or cannot parse) untouched", () => {
    expect(fromOpenAIStrictArgs('{"id":"1","note":null,"keep":null,"lines":[]}', schema)).toEqual({ id: "1", keep: null, lines: [] });
    const unchanged = '{"id":"1","keep":null,"lines":[]}';
    expect(fromOpenAIStrictArgs(unchanged, schema)).toBe(unchanged);
    const dup = '{"id":"1","note":null,"note":null}';
    expect(fromOpenAIStrictArgs(dup, schema)).toBe(dup);
    expect(fromOpenAIStrictArgs("{not json null", schema)).toBe("{not json null");
  });

  it("never throws, and leaves the input object unchanged", () => {
    const input = { id: "1", note: null };
    const copy = structuredClone(input);
    fromOpenAIStrictArgs(input, schema);
    expect(input).toEqual(copy);
    for (const weird of [undefined, null, 42, [], [null], { lines: "x" }, { lines: [null] }]) expect(() => fromOpenAIStrictArgs(weird, schema)).not.toThrow();
    const cyclic: Record<string, unknown> = { id: "1" };
    cyclic.self = cyclic;
    expect(() => fromOpenAIStrictArgs(cyclic, { type: "object", properties: { self: { $ref: "#" } } })).not.toThrow();
  });

  it("makes a strict-mode call with nulls pass the real gate", async () => {
    const [, createRefund] = makeOrderTools(createFakeOrders());
    const gate = createGate({ tools: [createRefund] });
    const listing = gate.list()[0]!;
    const call = '{"orderId":"o_100","amountCents":500,"reason":null}';
    expect((await gate.call("create_refund", call)).ok).toBe(false);
    const r = await gate.call("create_refund", fromOpenAIStrictArgs(call, listing.inputSchema));
    expect(r.ok).toBe(true);
  });
});

describe("toAnthropicInputSchema", () => {
  it("passes an object schema through unchanged", () => {
    const s = advertised(z.object({ a: z.string() }));
    expect(toAnthropicInputSchema(s)).toEqual({ schema: s, problems: [] });
  });

  it("flattens a root union into one object and reports it", () => {
    const s = advertised(z.discriminatedUnion("k", [z.object({ k: z.literal("a"), x: z.number() }), z.object({ k: z.literal("b") })]));
    const r = toAnthropicInputSchema(s);
    expect(r.schema.type).toBe("object");
    expect(r.schema.oneOf).toBeUndefined();
    expect(r.schema.required).toEqual(["k"]);
    expect(r.schema.additionalProperties).toBe(false);
    expect(r.problems).toEqual(["(root): top-level `oneOf` flattened into one object with every branch's fields optional; the runtime still enforces the union"]);
  });

  it("reports a root that is not an object", () => {
    expect(toAnthropicInputSchema({ type: "string" }).problems).toEqual(["(root): input_schema must describe an object; this tool's input is not one"]);
  });

  it("flattens a union nested in a union, at any depth, and reports it as one flattening", () => {
    const a = z.object({ a: z.string(), k: z.string() }), b = z.object({ b: z.number(), k: z.string() }), c = z.object({ c: z.boolean(), k: z.string() });
    const s = advertised(z.union([a.or(b).or(c), z.object({ d: z.null(), k: z.string() })]));
    const r = toAnthropicInputSchema(s);
    expect(r.schema).toMatchObject({ type: "object", required: ["k"], additionalProperties: false });
    expect(Object.keys(r.schema.properties as object)).toEqual(["a", "k", "b", "c", "d"]);
    expect(r.schema.anyOf).toBeUndefined();
    expect(r.problems).toEqual(["(root): top-level `anyOf` flattened into one object with every branch's fields optional; the runtime still enforces the union"]);
  });

  it("replaces a root $ref into its own $defs with the target, exactly: $defs kept, the outer description kept, nothing reported", () => {
    const s = advertised(z.object({ a: z.string() }).meta({ id: "Thing", description: "inner" }).describe("outer"));
    expect(s.$ref).toBe("#/$defs/Thing");
    const r = toAnthropicInputSchema(s);
    expect(r).toEqual({
      schema: { ...(s.$defs as { Thing: object }).Thing, description: "outer", $schema: s.$schema, $defs: s.$defs },
      problems: [],
    });
    expect(toAnthropicInputSchema({ $ref: "#/definitions/T", definitions: { T: { type: "object" } } }).problems).toEqual([]);
    expect(toAnthropicInputSchema({ $ref: "#/$defs/A", required: ["x"], $defs: { A: { type: "object", required: ["a"] } } }).problems).toEqual([
      "(root): `required` beside the root `$ref` differs from the referenced schema's; the referenced one is sent, the runtime still enforces both",
    ]);
  });

  it("follows a root $ref to a union of objects and flattens it", () => {
    const s = advertised(z.union([z.object({ a: z.string() }), z.object({ b: z.string() })]).meta({ id: "U" }));
    const r = toAnthropicInputSchema(s);
    expect(r.schema).toMatchObject({ type: "object", properties: { a: { type: "string" }, b: { type: "string" } } });
    expect(r.problems).toEqual(["(root): top-level `anyOf` flattened into one object with every branch's fields optional; the runtime still enforces the union"]);
  });

  it("names the cause when no object can be made: a $ref cycle, an external or dangling $ref, a non-object leaf of a nested union", () => {
    const cause = (s: Record<string, unknown>) => toAnthropicInputSchema(s).problems;
    expect(cause({ $ref: "#/$defs/A", $defs: { A: { $ref: "#/$defs/B" }, B: { $ref: "#/$defs/A" } } })).toEqual([
      "(root): input_schema must describe an object; this tool's input has a `$ref` cycle (#/$defs/A → #/$defs/B → #/$defs/A)",
    ]);
    expect(cause({ $ref: "https://example.com/thing.json" })).toEqual([
      "(root): input_schema must describe an object; this tool's input has a `$ref` \"https://example.com/thing.json\" outside this schema's own `$defs`/`definitions` (an external or named reference cannot be followed)",
    ]);
    expect(cause({ $ref: "#/$defs/Nope", $defs: {} })).toEqual([
      "(root): input_schema must describe an object; this tool's input has a `$ref` \"#/$defs/Nope\" that points at nothing in this schema",
    ]);
    expect(cause({ anyOf: [{ type: "object" }, { $ref: "#" }] })).toEqual(["(root): top-level `anyOf` over a branch with a `$ref` cycle (# → #) cannot be an input_schema"]);
    expect(cause(advertised(z.object({ a: z.string() }).or(z.object({ b: z.number() }).nullable())))).toEqual([
      "(root): top-level `anyOf` over a non-object branch (type null) cannot be an input_schema",
    ]);
  });
});

describe("targetContract", () => {
  it("builds each target from the gate's advertised schema; only openai maps calls", () => {
    const [getOrder] = makeOrderTools(createFakeOrders());
    for (const target of ["mcp", "draft-07", "openai", "anthropic"] as const) {
      const c = targetContract(getOrder, target);
      expect(c.ok).toBe(true);
      if (!c.ok) continue;
      expect(c.contract.schema.type).toBe("object");
      const mapped = c.contract.mapArgs('{"customerId":"c_1","includeHistory":null}');
      expect(mapped).toEqual(target === "openai" ? { customerId: "c_1" } : '{"customerId":"c_1","includeHistory":null}');
    }
    const d7 = targetContract(getOrder, "draft-07");
    expect(d7.ok && d7.contract.schema.$schema).toBe("http://json-schema.org/draft-07/schema#");
  });
});
