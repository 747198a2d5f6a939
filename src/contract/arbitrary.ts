/**
 * fast-check arbitraries of values a JSON Schema describes: the "valid" half of the drift
 * checker's payloads. Values are JSON (no undefined, no -0, no unsafe integers, no lone
 * surrogates, no forbidden keys) so the gate's documented payload limits never decide a verdict.
 * A value is only *probably* valid: Ajv gives the advertised verdict of every payload anyway.
 * @module
 */
import fc from "fast-check";
import type { JsonSchema } from "../standard.js";
import { deref, isRecord, requiredOf, typesOf } from "./_schema.js";

/** Options of {@link arbitraryFor}. */
export interface ArbitraryOptions {
  /** Nesting at which optional fields stop and arrays shrink to their minimum. Default 4. */
  readonly maxDepth?: number;
  /** Keys never generated (the gate refuses or reserves them). Default `__proto__`, `constructor`, `prototype`, `_meta`. */
  readonly reservedKeys?: readonly string[];
}

const DEFAULT_RESERVED = ["__proto__", "constructor", "prototype", "_meta"];
const SMALL_JSON: fc.Arbitrary<unknown> = fc.oneof(fc.constant(null), fc.boolean(), fc.integer({ min: -100, max: 100 }), fc.string({ maxLength: 6 }));
/** Printable ASCII plus a few BMP letters: lengths agree whether counted in code points or UTF-16 units. */
const CHAR = fc.oneof({ weight: 8, arbitrary: fc.string({ minLength: 1, maxLength: 1 }) }, { weight: 1, arbitrary: fc.constantFrom("é", "ß", "Ж", "中", "\n") });

interface Ctx {
  readonly root: JsonSchema;
  readonly maxDepth: number;
  readonly reserved: ReadonlySet<string>;
}

/**
 * An arbitrary of values the schema describes (draft 2020-12 or draft-07 keywords).
 * @example
 * fc.sample(arbitraryFor({ type: "object", properties: { n: { type: "integer", minimum: 1 } }, required: ["n"] }), 3);
 */
export function arbitraryFor(root: JsonSchema, options: ArbitraryOptions = {}): fc.Arbitrary<unknown> {
  const ctx: Ctx = { root, maxDepth: options.maxDepth ?? 4, reserved: new Set(options.reservedKeys ?? DEFAULT_RESERVED) };
  return arb(root, ctx, 0);
}

function arb(node: unknown, ctx: Ctx, depth: number): fc.Arbitrary<unknown> {
  if (node === true || node === undefined) return SMALL_JSON;
  if (node === false || !isRecord(node)) return fc.constant(null);
  if (depth > ctx.maxDepth + 4) return fc.constant(minimal(node, ctx, 0));
  const s = deref(ctx.root, node);
  if (s !== node && typeof node.$ref === "string") {
    const rest = { ...node };
    delete rest.$ref;
    return arb(Object.keys(rest).length === 0 ? s : { ...s, ...rest }, ctx, depth + 1);
  }
  if ("const" in s) return fc.constant(s.const);
  if (Array.isArray(s.enum) && s.enum.length > 0) return fc.constantFrom(...(s.enum as unknown[]));
  const union = [...(Array.isArray(s.anyOf) ? s.anyOf : []), ...(Array.isArray(s.oneOf) ? s.oneOf : [])];
  if (union.length > 0) {
    const rest = { ...s };
    delete rest.anyOf;
    delete rest.oneOf;
    return fc.oneof(...union.map((b) => arb(isRecord(b) ? merge(rest, deref(ctx.root, b)) : b, ctx, depth + 1)));
  }
  if (Array.isArray(s.allOf) && s.allOf.length > 0) {
    const rest = { ...s };
    delete rest.allOf;
    return arb(s.allOf.reduce<JsonSchema>((acc, b) => (isRecord(b) ? merge(acc, deref(ctx.root, b)) : acc), rest), ctx, depth + 1);
  }
  let types = typesOf(s);
  if (types.length === 0) {
    if (isRecord(s.properties) || isRecord(s.additionalProperties)) types = ["object"];
    else if ("items" in s || "prefixItems" in s) types = ["array"];
    else if (typeof s.minLength === "number" || typeof s.pattern === "string" || typeof s.format === "string") types = ["string"];
    else if (typeof s.minimum === "number" || typeof s.maximum === "number") types = ["number"];
    else return SMALL_JSON;
  }
  return fc.oneof(...types.map((t) => typed(t, s, ctx, depth)));
}

/** Merge two schemas for generation: properties and required are combined, other keys overwritten. */
function merge(a: JsonSchema, b: JsonSchema): JsonSchema {
  const out: JsonSchema = { ...a, ...b };
  if (isRecord(a.properties) || isRecord(b.properties)) out.properties = { ...(isRecord(a.properties) ? a.properties : {}), ...(isRecord(b.properties) ? b.properties : {}) };
  const req = new Set([...requiredOf(a), ...requiredOf(b)]);
  if (req.size > 0) out.required = [...req];
  return out;
}

function typed(t: string, s: JsonSchema, ctx: Ctx, depth: number): fc.Arbitrary<unknown> {
  switch (t) {
    case "null":
      return fc.constant(null);
    case "boolean":
      return fc.boolean();
    case "integer":
      return integers(s);
    case "number":
      return num(s.multipleOf) !== undefined ? multiples(s) : fc.oneof(integers(s), doubles(s));
    case "string":
      return strings(s);
    case "array":
      return arrays(s, ctx, depth);
    case "object":
      return objects(s, ctx, depth);
    default:
      return SMALL_JSON;
  }
}

const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

function bounds(s: JsonSchema): { lo: number; hi: number; exLo: boolean; exHi: boolean } {
  const min = num(s.minimum);
  const max = num(s.maximum);
  // draft-04 style boolean exclusives are not produced by current converters; numeric ones are.
  const exMin = num(s.exclusiveMinimum);
  const exMax = num(s.exclusiveMaximum);
  let lo = -1e9;
  let hi = 1e9;
  let exLo = false;
  let exHi = false;
  if (min !== undefined) lo = min;
  if (exMin !== undefined && (min === undefined || exMin >= min)) [lo, exLo] = [exMin, true];
  if (max !== undefined) hi = max;
  if (exMax !== undefined && (max === undefined || exMax <= max)) [hi, exHi] = [exMax, true];
  return { lo, hi, exLo, exHi };
}

function integers(s: JsonSchema): fc.Arbitrary<unknown> {
  const b = bounds(s);
  let lo = Math.max(Math.ceil(b.exLo ? Math.floor(b.lo) + 1 : b.lo), Number.MIN_SAFE_INTEGER);
  let hi = Math.min(Math.floor(b.exHi ? Math.ceil(b.hi) - 1 : b.hi), Number.MAX_SAFE_INTEGER);
  if (lo > hi) [lo, hi] = [hi, lo];
  const m = num(s.multipleOf);
  if (m !== undefined && Number.isInteger(m) && m > 0) {
    const kLo = Math.ceil(lo / m);
    const kHi = Math.floor(hi / m);
    if (kLo <= kHi) return fc.integer({ min: kLo, max: kHi }).map((k) => k * m + 0);
  }
  // fc.integer is biased towards its bounds and small values already, and shrinks towards the bound nearest 0.
  return fc.integer({ min: lo, max: hi }).map((v) => v + 0);
}

function multiples(s: JsonSchema): fc.Arbitrary<unknown> {
  const m = num(s.multipleOf) as number;
  const b = bounds(s);
  const kLo = Math.ceil(Math.max(b.lo, -1e9) / m);
  const kHi = Math.floor(Math.min(b.hi, 1e9) / m);
  if (!(m > 0) || kLo > kHi) return fc.constant(0);
  return fc.integer({ min: kLo, max: kHi }).map((k) => Number((k * m).toPrecision(12)) + 0);
}

function doubles(s: JsonSchema): fc.Arbitrary<unknown> {
  const b = bounds(s);
  const lo = Math.max(b.lo, -1e9);
  const hi = Math.min(b.hi, 1e9);
  if (!(lo < hi)) return fc.constant(lo);
  return fc
    .double({ min: lo, max: hi, noNaN: true, noDefaultInfinity: true, minExcluded: b.exLo, maxExcluded: b.exHi })
    // Six decimals, like numbers a model writes: no subnormals, no 17-digit noise.
    .map((v) => {
      const r = Math.min(hi, Math.max(lo, Math.round(v * 1e6) / 1e6)) + 0;
      // Rounding may land on an excluded bound: fall back to the raw value (never filter: a filter can spin).
      return (b.exLo && r <= lo) || (b.exHi && r >= hi) ? v : r;
    });
}

const FORMATS: Record<string, () => fc.Arbitrary<string>> = {
  email: () => fc.emailAddress(),
  uuid: () => fc.uuid(),
  uri: () => fc.webUrl(),
  url: () => fc.webUrl(),
  hostname: () => fc.domain(),
  ipv4: () => fc.ipV4(),
  ipv6: () => fc.ipV6(),
  "date-time": () => fc.date({ min: new Date("1970-01-01T00:00:00Z"), max: new Date("2100-01-01T00:00:00Z"), noInvalidDate: true }).map((d) => d.toISOString()),
  date: () => fc.date({ min: new Date("1970-01-01T00:00:00Z"), max: new Date("2100-01-01T00:00:00Z"), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
  time: () => fc.date({ min: new Date("1970-01-01T00:00:00Z"), max: new Date("1970-01-02T00:00:00Z"), noInvalidDate: true }).map((d) => d.toISOString().slice(11, 19)),
};

function strings(s: JsonSchema): fc.Arbitrary<unknown> {
  const minLength = Math.max(0, num(s.minLength) ?? 0);
  const maxLength = Math.max(minLength, Math.min(num(s.maxLength) ?? minLength + 12, minLength + 40));
  if (typeof s.pattern === "string") {
    try {
      const re = new RegExp(s.pattern, "u");
      // No length filter (a filter that rarely passes spins forever): Ajv judges every value anyway.
      return fc.stringMatching(re).map((v) => (v.isWellFormed() ? v : v.toWellFormed()));
    } catch {
      // a pattern fast-check cannot generate from: fall through to plain strings
    }
  }
  const fmt = typeof s.format === "string" ? FORMATS[s.format] : undefined;
  if (fmt !== undefined) return fmt();
  const plain = fc.array(CHAR, { minLength, maxLength }).map((cs) => cs.join(""));
  const edges = [fc.constant("a".repeat(minLength)), ...(num(s.maxLength) !== undefined ? [fc.constant("a".repeat(maxLength))] : [])];
  return fc.oneof({ weight: 4, arbitrary: plain }, { weight: 1, arbitrary: fc.oneof(...edges) });
}

function arrays(s: JsonSchema, ctx: Ctx, depth: number): fc.Arbitrary<unknown> {
  const minItems = Math.max(0, num(s.minItems) ?? 0);
  const cap = depth >= ctx.maxDepth ? minItems : minItems + 4;
  const maxItems = Math.max(minItems, Math.min(num(s.maxItems) ?? cap, cap));
  const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : undefined;
  if (prefix !== undefined) {
    const restSchema = Array.isArray(s.items) ? s.additionalItems : s.items;
    const head = fc.tuple(...prefix.map((p) => arb(p, ctx, depth + 1)));
    if (restSchema === false || (num(s.maxItems) !== undefined && (num(s.maxItems) as number) <= prefix.length)) return head;
    const tailMax = Math.max(0, Math.min(2, (num(s.maxItems) ?? prefix.length + 2) - prefix.length));
    return fc.tuple(head, fc.array(arb(restSchema, ctx, depth + 1), { maxLength: tailMax })).map(([h, t]) => [...h, ...t]);
  }
  const item = arb(s.items, ctx, depth + 1);
  if (s.uniqueItems === true) return fc.uniqueArray(item, { minLength: minItems, maxLength: maxItems, selector: (v) => JSON.stringify(v) });
  return fc.array(item, { minLength: minItems, maxLength: maxItems });
}

function objects(s: JsonSchema, ctx: Ctx, depth: number): fc.Arbitrary<unknown> {
  const props = isRecord(s.properties) ? s.properties : {};
  const required = requiredOf(s);
  const keys = Object.keys(props).filter((k) => !ctx.reserved.has(k) || required.has(k));
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const k of keys) model[k] = arb(props[k], ctx, depth + 1);
  const deep = depth >= ctx.maxDepth;
  const requiredKeys = keys.filter((k) => required.has(k));
  const shown = deep ? requiredKeys : keys;
  const shownModel = Object.fromEntries(shown.map((k) => [k, model[k] as fc.Arbitrary<unknown>]));
  const base = fc.record(shownModel, { requiredKeys });
  const extra = s.additionalProperties;
  if (!isRecord(extra) || deep) return base;
  const names = isRecord(s.propertyNames) ? keyArb(s.propertyNames, ctx) : fc.string({ minLength: 1, maxLength: 6 });
  const entries = fc.array(fc.tuple(names, arb(extra, ctx, depth + 1)), { maxLength: 3 });
  const free = (k: string) => !ctx.reserved.has(k) && !Object.hasOwn(props, k);
  return fc.tuple(base, entries).map(([a, more]) => ({ ...Object.fromEntries(more.filter(([k]) => free(k))), ...(a as object) }));
}

function keyArb(s: JsonSchema, ctx: Ctx): fc.Arbitrary<string> {
  return arb({ type: "string", ...s }, ctx, ctx.maxDepth).map((k) => (typeof k === "string" ? k : String(k)));
}

/** The smallest value a schema probably accepts: required fields only, minimum lengths. */
export function minimal(node: unknown, ctx: { readonly root: JsonSchema }, depth: number): unknown {
  if (!isRecord(node) || depth > 8) return null;
  const s = deref(ctx.root, node);
  if ("const" in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  const branch = Array.isArray(s.anyOf) ? s.anyOf[0] : Array.isArray(s.oneOf) ? s.oneOf[0] : undefined;
  if (branch !== undefined) return minimal(branch, ctx, depth + 1);
  const t = typesOf(s)[0] ?? (isRecord(s.properties) ? "object" : undefined);
  switch (t) {
    case "string":
      return "a".repeat(num(s.minLength) ?? 0);
    case "integer":
    case "number":
      return num(s.minimum) ?? (num(s.exclusiveMinimum) !== undefined ? Math.floor(num(s.exclusiveMinimum) as number) + 1 : 0);
    case "boolean":
      return false;
    case "array":
      return Array.from({ length: num(s.minItems) ?? 0 }, () => minimal(s.items, ctx, depth + 1));
    case "object": {
      const props = isRecord(s.properties) ? s.properties : {};
      return Object.fromEntries([...requiredOf(s)].map((k) => [k, minimal(props[k], ctx, depth + 1)]));
    }
    default:
      return null;
  }
}
