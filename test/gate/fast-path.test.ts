import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { z } from "zod";
import { compileFastInput, compileFastOutput, NO } from "../../src/fast-path.js";
import { compileLimits, DEFAULT_LIMITS, hardenValue, type CompiledLimits } from "../../src/harden.js";
import { CreateRefundInput, CreateRefundOutput, GetOrderInput, GetOrderOutput } from "../../examples/orders/schemas.js";

const NUM_RUNS = 2000;

type Def = Record<string, unknown> & { type: string };
const defOf = (s: unknown): Def => (s as { _zod: { def: Def } })._zod.def;

class Box {
  constructor(public readonly a: unknown) {}
}

/** `[1, <hole>, 2]`. */
function holey(): unknown[] {
  const a: unknown[] = [1];
  a[2] = 2;
  return a;
}

// ---- schema-shaped values, mostly valid, with mutations at every node --------------------------

const pieces = ["a", "é", "😀", "\uD800", "\uDC00", "ab", "😀😀"];
const anyString = fc.oneof(
  { weight: 3, arbitrary: fc.array(fc.constantFrom(...pieces), { maxLength: 6 }).map((p) => p.join("")) },
  { weight: 2, arbitrary: fc.string({ maxLength: 8 }) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 200 }).map((n) => "x".repeat(n)) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 6 }) },
);
const specialNumbers = [-0, 0, NaN, Infinity, -Infinity, 2 ** 53, -(2 ** 53), Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2 ** 53 + 2, 1e300, 0.5, -1.5, 1.5, 10, 5, 1_000_000, 1_000_001];
const anyNumber = fc.oneof(fc.integer({ min: -20, max: 20 }), fc.double(), fc.constantFrom(...specialNumbers), fc.integer());
const wrong = fc.oneof(fc.constant(undefined), fc.constant(null), fc.boolean(), fc.integer(), fc.string({ maxLength: 3 }), fc.constant([]), fc.constant({}), fc.anything({ maxDepth: 2 }));

function numberNear(def: Def): fc.Arbitrary<number> {
  const near: number[] = [];
  for (const c of (def.checks as { _zod: { def: { value?: unknown } } }[] | undefined) ?? []) {
    const v = c._zod.def.value;
    if (typeof v === "number") near.push(v, v + 1, v - 1, v + 1e-9, v - 1e-9);
  }
  return near.length > 0 ? fc.oneof(anyNumber, fc.constantFrom(...near)) : anyNumber;
}

function stringNear(def: Def): fc.Arbitrary<string> {
  const lens: number[] = [];
  for (const c of (def.checks as { _zod: { def: Record<string, unknown> } }[] | undefined) ?? []) {
    for (const k of ["minimum", "maximum", "length"]) if (typeof c._zod.def[k] === "number") lens.push(c._zod.def[k] as number);
  }
  if (lens.length === 0) return anyString;
  const sized = fc
    .tuple(fc.constantFrom(...lens), fc.integer({ min: -1, max: 1 }), fc.constantFrom("a", "😀", "\uD800", "é"))
    .map(([n, d, p]) => p.repeat(Math.max(0, n + d)));
  return fc.oneof(anyString, sized, sized.map((s) => `${s}a`));
}

/** Object mutations: extra key, forbidden key, undefined value, null prototype, class instance, array. */
function mutateObject(o: Record<string, unknown>): fc.Arbitrary<unknown> {
  const keys = Object.keys(o);
  return fc.oneof(
    fc.tuple(fc.constantFrom("extra", "__proto__", "constructor", "toString", "prototype"), wrong).map(([k, v]) => {
      const c: Record<string, unknown> = { ...o };
      Object.defineProperty(c, k, { value: v, enumerable: true, writable: true, configurable: true });
      return c;
    }),
    fc.constant(Object.assign(Object.create(null) as object, o)),
    fc.constant(new Box(o)),
    fc.constant(Object.assign(Object.create({ inherited: 1 }) as object, o)),
    fc.constant(Object.values(o)),
    keys.length === 0 ? fc.constant({ ...o, u: undefined }) : fc.constantFrom(...keys).map((k) => ({ ...o, [k]: undefined })),
  );
}

/** Values shaped like `schema`: mostly valid, mutated with probability about 1/12 per node. */
function arb(schema: unknown, depth = 0): fc.Arbitrary<unknown> {
  const def = defOf(schema);
  const m = (valid: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> => fc.oneof({ weight: 11, arbitrary: valid }, { weight: 1, arbitrary: wrong });
  switch (def.type) {
    case "string":
      return m(stringNear(def));
    case "number":
      return m(numberNear(def));
    case "boolean":
      return m(fc.boolean());
    case "null":
      return m(fc.constant(null));
    case "enum":
    case "literal": {
      const values = [...(schema as { _zod: { values: Set<unknown> } })._zod.values];
      return m(fc.constantFrom(...values));
    }
    case "array": {
      const el = arb(def.element, depth + 1);
      return m(fc.oneof(fc.array(el, { maxLength: 4 }), fc.array(el, { minLength: 3, maxLength: 6 }), fc.constant(holey())));
    }
    case "optional":
      return fc.oneof({ weight: 3, arbitrary: arb(def.innerType, depth) }, { weight: 1, arbitrary: fc.constant(undefined) });
    case "nullable":
      return fc.oneof({ weight: 3, arbitrary: arb(def.innerType, depth) }, { weight: 1, arbitrary: fc.constant(null) });
    case "default":
      return arb(def.innerType, depth);
    case "object": {
      const shape = def.shape as Record<string, unknown>;
      const rec: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, s] of Object.entries(shape)) rec[k] = arb(s, depth + 1);
      const full = fc.record(rec);
      const partial = fc.record(rec, { requiredKeys: [] });
      // a field generated as undefined is left out (absent), as a model's JSON would
      const base = fc.oneof({ weight: 6, arbitrary: full }, { weight: 1, arbitrary: partial }).map((o) => {
        const c: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(o)) if (v !== undefined) c[k] = v;
        return c;
      });
      return fc.oneof({ weight: 10, arbitrary: base }, { weight: 1, arbitrary: base.chain(mutateObject) }, { weight: 1, arbitrary: wrong });
    }
    default:
      throw new Error(`test generator: no arbitrary for ${def.type}`);
  }
}

/** Values that satisfy `schema` (as plain JSON data), so that acceptance is not left to chance. */
function validArb(schema: unknown): fc.Arbitrary<unknown> {
  const def = defOf(schema);
  const checks = ((def.checks as { _zod: { def: Record<string, unknown> } }[] | undefined) ?? []).map((c) => c._zod.def);
  const bound = (k: string, kind: string): number | undefined => checks.find((c) => c.check === kind && typeof c[k] === "number")?.[k] as number | undefined;
  switch (def.type) {
    case "string":
    case "array": {
      const eq = bound("length", "length_equals");
      const min = eq ?? bound("minimum", "min_length") ?? 0;
      const max = eq ?? bound("maximum", "max_length") ?? min + 4;
      if (def.type === "array") return fc.array(validArb(def.element), { minLength: min, maxLength: Math.min(max, min + 3) });
      return fc.array(fc.constantFrom("a", "é", "😀", "_"), { minLength: min, maxLength: max }).map((p) => p.join(""));
    }
    case "number": {
      const int = def.check === "number_format" || checks.some((c) => c.check === "number_format");
      let lo = -1e6;
      let hi = 1e6;
      for (const c of checks) {
        if (c.check === "greater_than") lo = Math.max(lo, (c.value as number) + (c.inclusive ? 0 : int ? 1 : 1e-6));
        if (c.check === "less_than") hi = Math.min(hi, (c.value as number) - (c.inclusive ? 0 : int ? 1 : 1e-6));
      }
      return int ? fc.integer({ min: Math.ceil(lo), max: Math.floor(hi) }) : fc.double({ min: lo, max: hi, noNaN: true });
    }
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "enum":
    case "literal":
      return fc.constantFrom(...[...(schema as { _zod: { values: Set<unknown> } })._zod.values]);
    case "optional":
    case "default":
      return fc.option(validArb(def.innerType), { nil: undefined });
    case "nullable":
      return fc.option(validArb(def.innerType), { nil: null });
    case "object": {
      const rec: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, s] of Object.entries(def.shape as Record<string, unknown>)) rec[k] = validArb(s);
      return fc.record(rec).map((o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)));
    }
    default:
      throw new Error(`test generator: no valid arbitrary for ${def.type}`);
  }
}

/** The mix every property test draws from: valid, mutated, and arbitrary values. */
const sample = (schema: unknown): fc.Arbitrary<unknown> =>
  fc.oneof({ weight: 5, arbitrary: validArb(schema) }, { weight: 4, arbitrary: arb(schema) }, { weight: 1, arbitrary: fc.anything() });

// ---- the reference: what the normal path decides ------------------------------------------------

/** Rule 3: at every object the schema describes, own keys ⊆ shape and no own value is undefined. */
function keysOk(schema: unknown, v: unknown, strip: boolean): boolean {
  const def = defOf(schema);
  switch (def.type) {
    case "optional":
    case "default":
      return v === undefined || keysOk(def.innerType, v, strip);
    case "nullable":
      return v === null || keysOk(def.innerType, v, strip);
    case "array":
      return !Array.isArray(v) || v.every((x) => keysOk(def.element, x, strip));
    case "object": {
      if (typeof v !== "object" || v === null || Array.isArray(v)) return true;
      const shape = def.shape as Record<string, unknown>;
      const own = Object.keys(v);
      // zod's catchall walks `for...in` (inherited keys too); the fast path refuses those as well
      const seen: string[] = [];
      if (strip && def.catchall !== undefined) for (const k in v) seen.push(k);
      for (const k of strip && def.catchall !== undefined ? seen : own) {
        if (!Object.hasOwn(shape, k) && !(strip && def.catchall === undefined)) return false;
        if ((v as Record<string, unknown>)[k] === undefined) return false;
      }
      return Object.keys(shape).every((k) => !Object.hasOwn(v, k) || keysOk(shape[k], (v as Record<string, unknown>)[k], strip));
    }
    default:
      return true;
  }
}

function objectsIn(v: unknown, into = new Set<object>()): Set<object> {
  if (typeof v === "object" && v !== null && !into.has(v)) {
    into.add(v);
    for (const x of Object.values(v)) objectsIn(x, into);
  }
  return into;
}

function expectFreshEqual(got: unknown, want: unknown, original: unknown): void {
  expect(got).toStrictEqual(want);
  expect(JSON.stringify(got)).toBe(JSON.stringify(want)); // own key order included
  const theirs = objectsIn(original);
  for (const o of objectsIn(got)) expect(theirs.has(o)).toBe(false);
}

function checkInput(name: string, schema: z.ZodType, limits: CompiledLimits): void {
  it(`input ${name} (maxBytes ${limits.maxBytes}${limits.allowUnsafeIntegers ? ", unsafe integers" : ""})`, () => {
    const fast = compileFastInput(schema, limits);
    expect(fast).toBeTypeOf("function");
    let accepted = 0;
    let samples = 0;
    fc.assert(
      fc.property(sample(schema), (v) => {
        samples++;
        const r = fast!(v);
        const h = hardenValue(v, limits);
        const slow = h.ok ? schema.safeParse(h.value) : undefined;
        const slowAccepts = slow?.success === true && keysOk(schema, v, false);
        if (r !== NO) {
          accepted++;
          expect(h.ok).toBe(true);
          expect(slow?.success).toBe(true);
          expect(keysOk(schema, v, false)).toBe(true);
          expect(schema.safeParse(v).data).toStrictEqual(r); // rule 1 on the caller's value too
          expectFreshEqual(r, slow?.data, v);
        } else {
          // non-vacuity: every plain value the normal path accepts is accepted here
          expect(slowAccepts).toBe(false);
        }
      }),
      { numRuns: NUM_RUNS },
    );
    expect(accepted / samples).toBeGreaterThanOrEqual(0.3);
  });
}

function checkOutput(name: string, schema: z.ZodType): void {
  it(`output ${name}`, () => {
    const fast = compileFastOutput(schema);
    expect(fast).toBeTypeOf("function");
    let accepted = 0;
    let samples = 0;
    fc.assert(
      fc.property(sample(schema), (v) => {
        samples++;
        const r = fast!(v);
        const slow = schema.safeParse(v);
        if (r !== NO) {
          accepted++;
          expect(slow.success).toBe(true);
          expectFreshEqual(r, slow.data, v);
        } else if (slow.success && keysOk(schema, v, true)) {
          // the only values left to the normal path are the ones with undefined values or
          // (strict / loose objects) extra keys
          expect.unreachable(`normal path accepts ${JSON.stringify(v)}`);
        }
      }),
      { numRuns: NUM_RUNS },
    );
    expect(accepted / samples).toBeGreaterThanOrEqual(0.3);
  });
}

// ---- schemas covering every supported type and check --------------------------------------------

const Strings = z.object({
  a: z.string().min(2).max(4),
  b: z.string().length(2),
  c: z.string().optional(),
  d: z.string().nullable(),
});
const Numbers = z.object({
  n: z.number().gt(-1.5).lt(10),
  m: z.number().gte(0).lte(5).int(),
  i: z.int(),
  f: z.number(),
});
const Misc = z.object({
  e: z.enum(["x", "y"]),
  l: z.literal(["a", 1, true, null]),
  nul: z.null(),
  b: z.boolean(),
  arr: z.array(z.string()).min(1).max(3),
  pair: z.array(z.number()).length(2),
  nested: z.object({ inner: z.array(z.object({ k: z.boolean() })) }),
});
const Optionals = z.object({
  o1: z.string().optional(),
  d1: z.number().default(3),
  od: z.string().optional().default("x"),
  do: z.string().default("y").optional(),
  nd: z.string().nullable().default(null),
  nu: z.boolean().nullable().optional(),
  du: z.string().optional().default(undefined as unknown as string),
});
const Strict = z.strictObject({ a: z.string(), b: z.number().optional() });
const Loose = z.looseObject({ a: z.string().optional() });
const TopArray = z.array(z.string().max(3)).max(5);
const TopString = z.string().min(1);

/** Name, schema, and a tight `maxBytes` near the size of its typical valid values. */
const all: [string, z.ZodType, number][] = [
  ["GetOrderInput", GetOrderInput, 50],
  ["GetOrderOutput", GetOrderOutput, 150],
  ["CreateRefundInput", CreateRefundInput, 80],
  ["CreateRefundOutput", CreateRefundOutput, 100],
  ["strings", Strings, 60],
  ["numbers", Numbers, 80],
  ["misc", Misc, 200],
  ["optionals", Optionals, 90],
  ["strict", Strict, 40],
  ["loose", Loose, 30],
  ["top-level array", TopArray, 30],
  ["top-level string", TopString, 12],
];

const defaults = compileLimits(DEFAULT_LIMITS);
const unsafeOk = compileLimits({ ...DEFAULT_LIMITS, maxBytes: 120, allowUnsafeIntegers: true });

describe("fast path: differential against harden + zod (input side)", () => {
  for (const [name, schema, tight] of all) {
    checkInput(name, schema, defaults);
    checkInput(name, schema, compileLimits({ ...DEFAULT_LIMITS, maxBytes: tight }));
  }
  checkInput("numbers", Numbers, unsafeOk);
  checkInput("CreateRefundInput", CreateRefundInput, unsafeOk);
});

describe("fast path: differential against zod (output side)", () => {
  for (const [name, schema] of all) checkOutput(name, schema);
});

describe("fast path: scope and edge cases", () => {
  it("returns undefined for schemas outside the subset", () => {
    const unsupported: z.ZodType[] = [
      z.string().transform((s) => s.length),
      z.string().refine((s) => s.length > 0),
      z.string().regex(/a/),
      z.email(),
      z.union([z.string(), z.number()]),
      z.record(z.string(), z.string()),
      z.lazy(() => z.string()),
      z.object({ a: z.object({ b: z.string() }).default({ b: "x" }) }),
      z.object({ constructor: z.string() }),
      z.object({ toString: z.string() }),
      z.string().trim(),
      z.string().min(1, { abort: true }),
      z.coerce.number(),
      z.string().exactOptional(),
      z.object({ a: z.string() }).refine(() => true),
      z.object({ a: z.string() }).catchall(z.string()),
      z.int32(),
      z.string().pipe(z.string()),
    ];
    for (const s of unsupported) {
      expect(compileFastInput(s, defaults)).toBeUndefined();
      expect(compileFastOutput(s)).toBeUndefined();
    }
    expect(compileFastInput({ parse: () => 1 }, defaults)).toBeUndefined();
    expect(compileFastInput(z.object({ prototype: z.string() }), defaults)).toBeUndefined(); // a forbidden key
  });

  it("reads each property once, and a throwing getter is NO", () => {
    const fast = compileFastInput(GetOrderInput, defaults)!;
    let reads = 0;
    const once = {
      get customerId() {
        reads++;
        return "c_1";
      },
    };
    expect(fast(once)).toStrictEqual({ customerId: "c_1", includeHistory: false });
    expect(reads).toBe(1);
    const throwing = {
      get customerId(): string {
        throw new Error("boom");
      },
    };
    expect(fast(throwing)).toBe(NO);
    expect(compileFastOutput(GetOrderOutput)!({ found: true, customerId: "c", get orders(): unknown[] { throw new Error("x"); } })).toBe(NO);
  });

  it("never trades an extra key for a shape key the normal path would not see", () => {
    const fast = compileFastInput(GetOrderInput, defaults)!;
    // hardenValue copies enumerable own keys only: this is { extra: 1 } to the normal path
    const hidden = Object.defineProperty({ extra: 1 }, "customerId", { value: "c_1", enumerable: false });
    expect(fast(hidden)).toBe(NO);
    expect(fast(Object.defineProperty({}, "customerId", { value: "c_1", enumerable: false }))).toBe(NO);
    expect(fast({ customerId: "c_1", includeHistory: undefined })).toBe(NO);
  });

  it("a non-enumerable shape key beside an own key holding undefined is NO (the two used to even out the key count)", () => {
    const s = z.object({ a: z.string(), b: z.string().optional() });
    const value = Object.defineProperty({ b: undefined }, "a", { value: "x", enumerable: false });
    expect(compileFastInput(s, defaults)!(value)).toBe(NO);
    expect(compileFastInput(z.object({ a: z.string().optional(), b: z.string().optional() }), defaults)!(value)).toBe(NO);
    const strictOut = compileFastOutput(z.strictObject({ a: z.string(), b: z.string().optional() }))!;
    expect(strictOut(Object.defineProperty({ b: undefined }, "a", { value: "x", enumerable: false }))).toBe(NO);
    expect(strictOut({ a: "x" })).toStrictEqual({ a: "x" });
  });

  it("an array that grows or shrinks while its elements are read is NO", () => {
    const out = compileFastOutput(z.array(z.string()).max(1))!;
    const growing: string[] = [];
    Object.defineProperty(growing, 0, { get: () => (growing.length === 1 && growing.push("b"), "a"), enumerable: true, configurable: true });
    expect(out(growing)).toBe(NO);
    expect(out(["a"])).toStrictEqual(["a"]);
  });

  it("a tool whose input names _meta anywhere (a nullable root object) gets no fast path: _meta is split off first", async () => {
    const { createGate, defineTool } = await import("../../src/index.js");
    const echo = (input: z.ZodType) => defineTool({ name: "echo", version: "1", description: "echo", input, output: z.unknown(), effect: "read", execute: (i: unknown, ctx) => ({ input: i, meta: ctx.meta }) });
    const nullable = createGate({ tools: [echo(z.object({ _meta: z.object({ trace: z.string() }) }).nullable())] });
    expect(await nullable.call("echo", '{"_meta":{"trace":"t1"}}')).toMatchObject({ ok: false, code: "INVALID_INPUT", issues: [{ path: "_meta" }] });
    const nullish = createGate({ tools: [echo(z.object({ q: z.string(), _meta: z.object({ trace: z.string() }).optional() }).nullish())] });
    expect(await nullish.call("echo", '{"q":"x","_meta":{"trace":"t1"}}')).toMatchObject({ ok: true, data: { input: { q: "x" }, meta: { trace: "t1" } } });
  });

  it("refuses proxies on the input side without touching them", () => {
    const fast = compileFastInput(GetOrderInput, defaults)!;
    let trapped = 0;
    const p = new Proxy({ customerId: "c_1" }, { get: (t, k) => (trapped++, Reflect.get(t, k)), ownKeys: (t) => (trapped++, Reflect.ownKeys(t)) });
    expect(fast(p)).toBe(NO);
    expect(fast({ customerId: "c_1", includeHistory: true })).toStrictEqual({ customerId: "c_1", includeHistory: true });
    expect(compileFastInput(z.array(z.string()), defaults)!(new Proxy(["a"], {}))).toBe(NO);
    expect(trapped).toBe(0);
  });

  it("returns undefined when the schema nests deeper than maxDepth", () => {
    let s: z.ZodType = z.string();
    for (let i = 0; i < 5; i++) s = z.object({ a: s });
    expect(compileFastInput(s, compileLimits({ ...DEFAULT_LIMITS, maxDepth: 4 }))).toBeUndefined();
    const ok = compileFastInput(s, compileLimits({ ...DEFAULT_LIMITS, maxDepth: 5 }));
    expect(ok).toBeTypeOf("function");
    expect(ok!({ a: { a: { a: { a: { a: "x" } } } } })).toStrictEqual({ a: { a: { a: { a: { a: "x" } } } } });
    expect(compileFastInput(z.array(z.array(z.string())), compileLimits({ ...DEFAULT_LIMITS, maxDepth: 1 }))).toBeUndefined();
  });

  it("mirrors the size accounting exactly at the boundary", () => {
    // {"customerId": "abc"} -> 2 + ("customerId".length + 4) + ("abc".length + 2) = 21
    const at = (maxBytes: number) => compileFastInput(z.object({ customerId: z.string() }), compileLimits({ ...DEFAULT_LIMITS, maxBytes }))!;
    expect(at(21)({ customerId: "abc" })).toStrictEqual({ customerId: "abc" });
    expect(hardenValue({ customerId: "abc" }, compileLimits({ ...DEFAULT_LIMITS, maxBytes: 20 })).ok).toBe(false);
    expect(at(20)({ customerId: "abc" })).toBe(NO);
  });

  it("returns undefined when code generation is unavailable or zod is jitless", () => {
    const original = globalThis.Function;
    globalThis.Function = function refused() {
      throw new EvalError("Code generation from strings disallowed");
    } as unknown as FunctionConstructor;
    try {
      expect(compileFastInput(GetOrderInput, defaults)).toBeUndefined();
      expect(compileFastOutput(GetOrderOutput)).toBeUndefined();
    } finally {
      globalThis.Function = original;
    }
    z.config({ jitless: true });
    try {
      expect(compileFastOutput(GetOrderOutput)).toBeUndefined();
    } finally {
      z.config({ jitless: false });
    }
    expect(compileFastOutput(GetOrderOutput)).toBeTypeOf("function");
  });

  it("counts string lengths in code points, as zod 4.6 does", () => {
    const fast = compileFastOutput(z.string().length(2))!;
    expect(fast("😀😀")).toBe("😀😀");
    expect(fast("😀")).toBe(NO); // two UTF-16 units, one code point
    expect(compileFastOutput(z.string().max(1))!("😀")).toBe("😀");
  });
});
