/**
 * OpenAI strict function calling (`strict: true`): every property required, optional fields
 * made nullable, every object closed, unsupported keywords removed and listed. And the way back:
 * a call in strict shape is mapped to the original shape before validation (a `null` for a field
 * that was optional, and not nullable, in the original schema means "absent").
 * @module
 */
import type { JsonSchema } from "../standard.js";
import { compileLimits, hardenText } from "../harden.js";
import { acceptsNull, deref, isRecord, isObjectSchema, requiredOf, typesOf } from "./_schema.js";

/** What {@link toOpenAIStrict} returns. */
export interface OpenAIStrictSchema {
  /** The schema to send as `parameters` with `strict: true`. */
  readonly schema: JsonSchema;
  /** Paths (`a.b`, `*` for array items) of optional fields made nullable; a `null` there means absent. */
  readonly nullable: string[];
  /**
   * What strict mode cannot say: removed keywords, loosened shapes. Empty when the mapping is exact.
   * Each entry reads `<path>: <what>`, with `(root)` as the root's path (stable; adapters rely on it).
   */
  readonly problems: string[];
  /** Changes that alter no verdict but a reader should know (e.g. an optional nullable field cannot be absent). */
  readonly notes: string[];
  /** Paths of every field optional in the original (made nullable or already nullable): strict mode always sends them. */
  readonly optional: string[];
}

/**
 * What a problem says of a sub-schema left without a type (`{}`, `z.any()`, `z.unknown()`, a node
 * whose only keyword was removed): it accepts any value, and strict mode refuses a schema without
 * a type there, so the adapters send such a tool without strict mode. Internal.
 */
export const _ANY_VALUE = "accepts any value; strict mode needs a type there";

/**
 * String formats strict mode accepts; any other format is removed and reported.
 * @example OPENAI_STRICT_FORMATS.has("email") // true
 */
export const OPENAI_STRICT_FORMATS: ReadonlySet<string> = new Set(["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"]);

/**
 * Keywords strict mode refuses; each is removed and reported (the runtime still enforces it).
 * @example OPENAI_STRICT_UNSUPPORTED.has("patternProperties") // true: strict mode drops it, the gate still enforces it
 */
export const OPENAI_STRICT_UNSUPPORTED: ReadonlySet<string> = new Set([
  "$anchor", "$dynamicAnchor", "$dynamicRef", "contains", "contentEncoding", "contentMediaType", "contentSchema",
  "dependentRequired", "dependentSchemas", "dependencies", "if", "then", "else", "maxContains", "minContains",
  "maxProperties", "minProperties", "not", "patternProperties", "propertyNames", "unevaluatedItems",
  "unevaluatedProperties", "uniqueItems",
]);

/** Keywords that give a node a type strict mode reads; a node without any of them accepts any value. */
const TYPED = ["type", "anyOf", "$ref", "const", "enum"] as const;

/** Annotations strict mode refuses or ignores; dropped without a problem (they change no verdict). */
const DROPPED_ANNOTATIONS = ["$schema", "$id", "$comment", "default", "examples", "readOnly", "writeOnly"] as const;

interface Ctx {
  readonly root: JsonSchema;
  readonly nullable: string[];
  readonly problems: string[];
  readonly notes: string[];
  readonly optional: string[];
}

const where = (path: string): string => (path === "" ? "(root)" : path);
const child = (path: string, key: string): string => (path === "" ? key : `${path}.${key}`);

/**
 * Map an input JSON Schema to OpenAI's strict subset. Never throws.
 * @example
 * const { schema, nullable, problems } = toOpenAIStrict(gate.list()[0]!.inputSchema);
 * // tools: [{ type: "function", function: { name, parameters: schema, strict: true } }]
 * if (problems.length > 0) console.warn(problems.join("\n"));
 */
export function toOpenAIStrict(inputSchema: JsonSchema): OpenAIStrictSchema {
  const ctx: Ctx = { root: inputSchema, nullable: [], problems: [], notes: [], optional: [] };
  const schema = strictNode(inputSchema, "", ctx, 0) as JsonSchema;
  for (const defsKey of ["$defs", "definitions"] as const) {
    const defs = inputSchema[defsKey];
    if (isRecord(defs)) {
      schema[defsKey] = Object.fromEntries(Object.entries(defs).map(([k, v]) => [k, strictNode(v, `${defsKey}.${k}`, ctx, 1)]));
    }
  }
  if (!typesOf(schema).includes("object") || Array.isArray(schema.anyOf)) {
    ctx.problems.push("(root): strict mode needs a root object schema without a union");
  }
  return { schema, nullable: ctx.nullable, problems: ctx.problems, notes: ctx.notes, optional: ctx.optional };
}

function strictNode(node: unknown, path: string, ctx: Ctx, depth: number): unknown {
  if (node === true || (isRecord(node) && Object.keys(node).every((k) => (DROPPED_ANNOTATIONS as readonly string[]).includes(k) || k === "description" || k === "title"))) {
    ctx.problems.push(`${where(path)}: ${_ANY_VALUE}`);
    return isRecord(node) ? dropAnnotations(node) : {};
  }
  if (!isRecord(node) || depth > 64) return node;
  const s = dropAnnotations(node);
  delete s.$defs;
  delete s.definitions;
  for (const k of Object.keys(s)) {
    if (OPENAI_STRICT_UNSUPPORTED.has(k)) {
      delete s[k];
      ctx.problems.push(`${where(path)}: \`${k}\` removed (not supported in strict mode); the runtime still enforces it`);
    }
  }
  if (typeof s.format === "string" && !OPENAI_STRICT_FORMATS.has(s.format)) {
    ctx.problems.push(`${where(path)}: format "${s.format}" removed (not supported in strict mode); the runtime still enforces it`);
    delete s.format;
  }
  if (Array.isArray(s.oneOf)) {
    if (discriminated(ctx.root, s.oneOf)) ctx.notes.push(`${where(path)}: \`oneOf\` became \`anyOf\` (the branches are exclusive by their discriminator)`);
    else ctx.problems.push(`${where(path)}: \`oneOf\` became \`anyOf\` (strict mode has no oneOf); overlapping branches are no longer exclusive`);
    s.anyOf = [...(Array.isArray(s.anyOf) ? s.anyOf : []), ...s.oneOf];
    delete s.oneOf;
  }
  if (Array.isArray(s.allOf)) mergeAllOf(s, path, ctx);
  if (Array.isArray(s.anyOf)) s.anyOf = s.anyOf.map((b) => strictNode(b, path, ctx, depth + 1));
  if (Array.isArray(s.prefixItems)) {
    const prefix = s.prefixItems.map((b) => strictNode(b, child(path, "*"), ctx, depth + 1));
    ctx.problems.push(`${where(path)}: tuple (\`prefixItems\`) loosened to an array of any of its item types (strict mode has no tuples)`);
    const rest = s.items === false || s.items === undefined ? [] : [strictNode(s.items, child(path, "*"), ctx, depth + 1)];
    s.items = { anyOf: [...prefix, ...rest] };
    delete s.prefixItems;
  } else if (s.items !== undefined) {
    s.items = strictNode(s.items, child(path, "*"), ctx, depth + 1);
  }
  if (isObjectSchema(s)) strictObject(s, path, ctx, depth);
  // What is left after the removals (a `not` alone, an untyped `minLength`) may say no type either.
  if (!TYPED.some((k) => k in s)) ctx.problems.push(`${where(path)}: ${_ANY_VALUE}`);
  return s;
}

function strictObject(s: JsonSchema, path: string, ctx: Ctx, depth: number): void {
  const props = isRecord(s.properties) ? s.properties : {};
  const required = requiredOf(s);
  const out: Record<string, unknown> = {};
  for (const [key, sub] of Object.entries(props)) {
    const p = child(path, key);
    let mapped = strictNode(sub, p, ctx, depth + 1);
    if (!required.has(key)) {
      ctx.optional.push(p);
      if (acceptsNull(ctx.root, sub)) {
        ctx.notes.push(`${p}: optional and nullable; strict mode cannot express "absent", so a null is passed on as null`);
      } else {
        mapped = makeNullable(mapped);
        ctx.nullable.push(p);
      }
    }
    out[key] = mapped;
  }
  s.properties = out;
  s.required = Object.keys(out);
  if (s.additionalProperties !== undefined && s.additionalProperties !== false) {
    ctx.problems.push(`${where(path)}: extra keys (a record or an open object) cannot be expressed in strict mode; advertised closed`);
  }
  s.additionalProperties = false;
  if (!typesOf(s).includes("object")) s.type = "object";
}

/** Make a (strict-mapped) schema accept null as well. */
export function makeNullable(node: unknown): unknown {
  if (!isRecord(node)) return node;
  if (typeof node.$ref === "string" || "const" in node) return { anyOf: [node, { type: "null" }] };
  if (Array.isArray(node.anyOf)) return { ...node, anyOf: [...node.anyOf, { type: "null" }] };
  const types = typesOf(node);
  if (types.length === 0) return { anyOf: [node, { type: "null" }] };
  const out: Record<string, unknown> = { ...node, type: [...types, "null"] };
  if (Array.isArray(node.enum)) out.enum = [...node.enum, null];
  return out;
}

function dropAnnotations(node: Record<string, unknown>): Record<string, unknown> {
  const s: Record<string, unknown> = { ...node };
  for (const k of DROPPED_ANNOTATIONS) delete s[k];
  return s;
}

/** True when every branch is an object with one shared property holding distinct constants. */
function discriminated(root: JsonSchema, branches: unknown[]): boolean {
  const objs = branches.map((b) => (isRecord(b) ? deref(root, b) : undefined));
  if (objs.some((b) => b === undefined || !isRecord(b.properties))) return false;
  const first = objs[0]?.properties as Record<string, unknown>;
  return Object.keys(first).some((key) => {
    const consts = objs.map((b) => {
      const p = (b?.properties as Record<string, unknown>)[key];
      return isRecord(p) && "const" in p && requiredOf(b as JsonSchema).has(key) ? JSON.stringify(p.const) : undefined;
    });
    return consts.every((c) => c !== undefined) && new Set(consts).size === consts.length;
  });
}

/** Merge an `allOf` of object schemas into the node; anything else is removed and reported. */
function mergeAllOf(s: JsonSchema, path: string, ctx: Ctx): void {
  const parts = (s.allOf as unknown[]).map((b) => (isRecord(b) ? deref(ctx.root, b) : undefined));
  delete s.allOf;
  if (parts.some((p) => p === undefined || !isObjectSchema(p))) {
    ctx.problems.push(`${where(path)}: \`allOf\` removed (strict mode has no intersections); the runtime still enforces it`);
    return;
  }
  const props: Record<string, unknown> = isRecord(s.properties) ? { ...s.properties } : {};
  const req = requiredOf(s);
  for (const p of parts as JsonSchema[]) {
    Object.assign(props, isRecord(p.properties) ? p.properties : {});
    for (const r of requiredOf(p)) req.add(r);
  }
  s.type = "object";
  s.properties = props;
  s.required = [...req];
}

/** Permissive limits: only syntax, duplicate keys and lone surrogates can fail; the gate applies the real limits. */
const PARSE_ONLY = compileLimits({ maxBytes: 2 ** 31, maxDepth: 1000, forbiddenKeys: [], allowUnsafeIntegers: true });

/**
 * Map a call made against {@link toOpenAIStrict}'s schema back to the original shape, before
 * validation: a `null` for a field that is optional (and not nullable) in `inputSchema` is removed,
 * so the field is absent (and its default applies). Everything else is untouched. JSON text is
 * parsed first; text that does not parse, or needs no change, is returned as is, so the gate's own
 * checks (duplicate keys, size) still see it. Never throws.
 * @example
 * const args = fromOpenAIStrictArgs(toolCall.function.arguments, listing.inputSchema);
 * const result = await gate.call(toolCall.function.name, args);
 */
export function fromOpenAIStrictArgs(args: unknown, inputSchema: JsonSchema): unknown {
  try {
    if (typeof args === "string") {
      if (!args.includes("null")) return args;
      const h = hardenText(args, PARSE_ONLY);
      if (!h.ok) return args;
      const mapped = mapNode(h.value, inputSchema, inputSchema, 0);
      return mapped === h.value ? args : mapped;
    }
    return mapNode(args, inputSchema, inputSchema, 0);
  } catch {
    return args;
  }
}

function mapNode(v: unknown, node: unknown, root: JsonSchema, depth: number): unknown {
  if (depth > 64 || !isRecord(node) || v === null || typeof v !== "object") return v;
  const s = deref(root, node);
  if (Array.isArray(v)) {
    const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : [];
    let out: unknown[] | undefined;
    v.forEach((item, i) => {
      const m = mapNode(item, i < prefix.length ? prefix[i] : s.items, root, depth + 1);
      if (m !== item) (out ??= v.slice())[i] = m;
    });
    return out ?? v;
  }
  const candidates = objectCandidates(v as Record<string, unknown>, s, root);
  if (candidates.length === 0) return v;
  const obj = v as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
  for (const key of Object.keys(obj)) {
    const val = obj[key];
    if (val === null) {
      const drop = candidates.every((c) => isRecord(c.properties) && Object.hasOwn(c.properties, key) && !requiredOf(c).has(key) && !acceptsNull(root, c.properties[key]));
      if (drop) {
        out ??= { ...obj };
        delete out[key];
      }
      continue;
    }
    const sub = childSchema(candidates, key);
    if (sub === undefined) continue;
    const m = mapNode(val, sub, root, depth + 1);
    if (m !== val) (out ??= { ...obj })[key] = m;
  }
  return out ?? v;
}

/** The object schemas a value may be checked against: the node itself, or the union branches it can match. */
function objectCandidates(v: Record<string, unknown>, s: JsonSchema, root: JsonSchema): JsonSchema[] {
  const own: JsonSchema[] = [];
  if (isRecord(s.properties) || isRecord(s.additionalProperties)) own.push(s);
  if (Array.isArray(s.allOf)) {
    const merged: JsonSchema = { properties: {}, required: [] };
    for (const b of s.allOf) {
      if (!isRecord(b)) continue;
      const d = deref(root, b);
      Object.assign(merged.properties as object, isRecord(d.properties) ? d.properties : {});
      (merged.required as string[]).push(...requiredOf(d));
    }
    own.push(merged);
  }
  const branches = [...(Array.isArray(s.anyOf) ? s.anyOf : []), ...(Array.isArray(s.oneOf) ? s.oneOf : [])]
    .filter(isRecord)
    .map((b) => deref(root, b))
    .filter((b) => isObjectSchema(b) && constsMatch(v, b));
  if (own.length > 0) return own;
  return branches;
}

/** False when the branch pins a property to a constant the value does not carry. */
function constsMatch(v: Record<string, unknown>, b: JsonSchema): boolean {
  if (!isRecord(b.properties)) return true;
  for (const [k, p] of Object.entries(b.properties)) {
    if (isRecord(p) && "const" in p && Object.hasOwn(v, k) && JSON.stringify(v[k]) !== JSON.stringify(p.const)) return false;
  }
  return true;
}

function childSchema(candidates: JsonSchema[], key: string): unknown {
  const subs = candidates.map((c) => (isRecord(c.properties) && Object.hasOwn(c.properties, key) ? c.properties[key] : isRecord(c.additionalProperties) ? c.additionalProperties : undefined));
  const defined = subs.filter((x) => x !== undefined);
  if (defined.length === 0) return undefined;
  const first = JSON.stringify(defined[0]);
  return defined.length === 1 || defined.every((d) => JSON.stringify(d) === first) ? defined[0] : undefined;
}
