/**
 * Mutations of a valid payload, guided by the schema: a field missing, an extra key, a null, a
 * value of the wrong type, values at and across each bound, neighbours of enum and const values.
 * The drift checker picks one by index, so fast-check can shrink both the payload and the pick.
 * @module
 */
import type { JsonSchema } from "../standard.js";
import { deref, isRecord, typesOf } from "./_schema.js";

/** The kinds of mutation, as named in reports. */
export type MutationKind = "missing" | "extra" | "null" | "wrong_type" | "boundary" | "enum_neighbour";

/** One mutation: what changes where. `value` is the replacement (absent for `missing`). */
export interface Mutation {
  readonly kind: MutationKind;
  /** Location in the payload (`["lines", 0, "sku"]`). */
  readonly at: readonly (string | number)[];
  readonly value?: unknown;
  /** One line for reports: "`lines.0.sku` missing". */
  readonly label: string;
}

/** The key used for the `extra` mutation. */
export const EXTRA_KEY = "unexpectedField";

const WRONG: readonly [string, unknown][] = [
  ["string", "x"],
  ["number", 7.5],
  ["integer", 7],
  ["boolean", true],
  ["array", []],
  ["object", {}],
];

function show(at: readonly (string | number)[]): string {
  return at.length === 0 ? "(root)" : at.join(".");
}

/** The subschemas that may describe the value at each step (union branches included). */
function childSchemas(root: JsonSchema, schemas: readonly JsonSchema[], seg: string | number): JsonSchema[] {
  const out: JsonSchema[] = [];
  for (const s of schemas) {
    if (typeof seg === "number") {
      const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : undefined;
      const sub = prefix !== undefined && seg < prefix.length ? prefix[seg] : prefix !== undefined ? (Array.isArray(s.items) ? s.additionalItems : s.items) : s.items;
      if (isRecord(sub)) out.push(...expand(root, sub));
    } else {
      const sub = isRecord(s.properties) && Object.hasOwn(s.properties, seg) ? s.properties[seg] : s.additionalProperties;
      if (isRecord(sub)) out.push(...expand(root, sub));
    }
  }
  return out;
}

/** A schema and the branches of its unions and intersections, refs resolved. */
function expand(root: JsonSchema, s: JsonSchema, depth = 0): JsonSchema[] {
  const d = deref(root, s);
  if (depth > 8) return [d];
  const out = [d];
  for (const k of ["anyOf", "oneOf", "allOf"] as const) {
    const list = d[k];
    if (Array.isArray(list)) for (const b of list) if (isRecord(b)) out.push(...expand(root, b, depth + 1));
  }
  return out;
}

/**
 * Every mutation of `payload` worth trying against `schema`, in a stable order.
 * @example
 * mutationsOf({ type: "object", properties: { n: { type: "integer", maximum: 5 } } }, { n: 5 });
 * // [{ kind: "extra", at: [] … }, { kind: "null", at: ["n"] … }, { kind: "boundary", at: ["n"], value: 6 … }, …]
 */
export function mutationsOf(schema: JsonSchema, payload: unknown): Mutation[] {
  const out: Mutation[] = [];
  visit(schema, expand(schema, schema), payload, [], out, 0);
  return out;
}

function visit(root: JsonSchema, schemas: JsonSchema[], v: unknown, at: (string | number)[], out: Mutation[], depth: number): void {
  if (depth > 16 || out.length > 400) return;
  const here = [...at];
  if (at.length > 0 && v !== null) out.push({ kind: "null", at: here, value: null, label: `\`${show(here)}\` set to null` });
  const declared = new Set(schemas.flatMap(typesOf));
  for (const [t, w] of WRONG) {
    const actual = Array.isArray(v) ? "array" : v === null ? "null" : typeof v;
    if (t === actual || (t === "integer" && actual === "number") || (t === "number" && actual === "number")) continue;
    if (declared.size > 0 && declared.has(t)) continue;
    out.push({ kind: "wrong_type", at: here, value: w, label: `\`${show(here)}\` replaced by ${t === "array" || t === "object" || t === "integer" ? "an" : "a"} ${t}` });
  }
  for (const s of schemas) boundaries(s, v, here, out);
  enumNeighbours(schemas, v, here, out);
  if (Array.isArray(v)) {
    v.forEach((item, i) => visit(root, childSchemas(root, schemas, i), item, [...at, i], out, depth + 1));
  } else if (isRecord(v)) {
    if (!Object.hasOwn(v, EXTRA_KEY)) out.push({ kind: "extra", at: [...at, EXTRA_KEY], value: "x", label: `extra key \`${show([...at, EXTRA_KEY])}\`` });
    for (const k of Object.keys(v)) {
      out.push({ kind: "missing", at: [...at, k], label: `\`${show([...at, k])}\` missing` });
      visit(root, childSchemas(root, schemas, k), v[k], [...at, k], out, depth + 1);
    }
  }
}

const num = (x: unknown): number | undefined => (typeof x === "number" && Number.isFinite(x) ? x : undefined);

function boundaries(s: JsonSchema, v: unknown, at: (string | number)[], out: Mutation[]): void {
  const push = (value: unknown, why: string) => out.push({ kind: "boundary", at, value, label: `\`${show(at)}\` = ${JSON.stringify(value).slice(0, 40)} (${why})` });
  if (typeof v === "number") {
    const int = typesOf(s).includes("integer");
    for (const k of ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] as const) {
      const b = num(s[k]);
      if (b === undefined) continue;
      for (const d of int ? [-1, 0, 1] : [-1, -0.5, 0, 0.5, 1]) {
        const value = b + d;
        if (Number.isSafeInteger(value) || !Number.isInteger(value)) push(value, `${k} ${b}${d === 0 ? "" : d > 0 ? " +" + d : " " + d}`);
      }
    }
    if (int) push(v + 0.5, "not an integer");
    const m = num(s.multipleOf);
    if (m !== undefined) push(v + m / 2, `multipleOf ${m}`);
  } else if (typeof v === "string") {
    for (const k of ["minLength", "maxLength"] as const) {
      const b = num(s[k]);
      if (b === undefined) continue;
      for (const len of [b - 1, b, b + 1]) if (len >= 0 && len <= 10_000) push(fit(v, len), `${k} ${b}, length ${len}`);
    }
  } else if (Array.isArray(v)) {
    for (const k of ["minItems", "maxItems"] as const) {
      const b = num(s[k]);
      if (b === undefined) continue;
      for (const len of [b - 1, b + 1]) if (len >= 0 && len <= 1000 && len !== v.length) push(resize(v, len), `${k} ${b}, ${len} items`);
    }
    if (s.uniqueItems === true && v.length > 0) push([...v, v[0]], "uniqueItems, a duplicate");
  }
}

/** `v` cut or padded (with its last character, else "a") to `len` characters. */
function fit(v: string, len: number): string {
  if (v.length >= len) return v.slice(0, len);
  const pad = v.length > 0 && v.charCodeAt(v.length - 1) < 0xd800 ? v[v.length - 1] : "a";
  return v + (pad as string).repeat(len - v.length);
}

function resize(v: unknown[], len: number): unknown[] {
  if (v.length >= len) return v.slice(0, len);
  const out = v.slice();
  while (out.length < len) out.push(v.length > 0 ? v[v.length - 1] : null);
  return out;
}

function enumNeighbours(schemas: JsonSchema[], v: unknown, at: (string | number)[], out: Mutation[]): void {
  const allowed: unknown[] = [];
  for (const s of schemas) {
    if ("const" in s) allowed.push(s.const);
    if (Array.isArray(s.enum)) allowed.push(...(s.enum as unknown[]));
  }
  if (allowed.length === 0) return;
  const seen = new Set(allowed.map((a) => JSON.stringify(a)));
  const cands: unknown[] = [];
  for (const a of allowed) {
    if (typeof a === "string") cands.push(a.toUpperCase() === a ? a.toLowerCase() : a.toUpperCase(), a + "x", a.slice(0, -1), ` ${a}`);
    else if (typeof a === "number") cands.push(a + 1, a - 1, String(a));
    else if (typeof a === "boolean") cands.push(!a, String(a));
  }
  for (const c of cands) {
    const key = JSON.stringify(c);
    if (seen.has(key) || JSON.stringify(v) === key) continue;
    seen.add(key);
    out.push({ kind: "enum_neighbour", at, value: c, label: `\`${show(at)}\` = ${key.slice(0, 40)} (next to an allowed value)` });
  }
}

/** Apply a mutation to a copy of the payload. */
export function applyMutation(payload: unknown, m: Mutation): unknown {
  if (m.at.length === 0) return m.kind === "missing" ? undefined : m.value;
  const copy = JSON.parse(JSON.stringify(payload)) as unknown;
  let cur: unknown = copy;
  for (const seg of m.at.slice(0, -1)) cur = (cur as Record<string | number, unknown>)[seg];
  const last = m.at[m.at.length - 1] as string | number;
  if (m.kind === "missing") {
    if (Array.isArray(cur)) cur.splice(last as number, 1);
    else delete (cur as Record<string, unknown>)[last];
  } else (cur as Record<string | number, unknown>)[last] = m.value;
  return copy;
}
