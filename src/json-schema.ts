/**
 * The JSON Schema a gate advertises for a tool. Input side (a field with a default is optional);
 * when the tool refuses unknown keys, every object says so with `additionalProperties: false`,
 * so the advertised and the enforced contracts agree.
 * @module
 */
import { toJsonSchema, type JsonSchema, type JsonSchemaTarget } from "./standard.js";
import type { AnyTool } from "./tool.js";
import { isRecord } from "./_record.js";

const CHILD_MAPS = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"] as const;
const CHILD_ONE = ["items", "additionalItems", "contains", "not", "if", "then", "else", "propertyNames", "unevaluatedItems", "additionalProperties"] as const;
const CHILD_LISTS = ["anyOf", "oneOf", "allOf", "prefixItems"] as const;

/**
 * A shallow copy of the schema `node` with `f` applied to each of its direct subschemas, told the
 * keyword that holds it. Only subschema positions: `const`, `enum`, `default` and `examples` are
 * data, never rewritten. A keyword's array form (draft-07 `items: [...]`) is mapped element-wise.
 */
export function mapSubschemas(node: Record<string, unknown>, f: (child: unknown, keyword: string) => unknown): Record<string, unknown> {
  const out: Record<string, unknown> = { ...node };
  for (const k of CHILD_MAPS) {
    const m = out[k];
    if (isRecord(m)) out[k] = Object.fromEntries(Object.entries(m).map(([key, v]) => [key, f(v, k)]));
  }
  for (const k of CHILD_ONE) {
    const v = out[k];
    if (isRecord(v)) out[k] = f(v, k);
    else if (Array.isArray(v)) out[k] = v.map((n) => f(n, k));
  }
  for (const k of CHILD_LISTS) {
    const v = out[k];
    if (Array.isArray(v)) out[k] = v.map((n) => f(n, k));
  }
  return out;
}

/**
 * Return a copy of `schema` in which every object schema without an `additionalProperties` rule
 * gets `additionalProperties: false`. Branches of `allOf` are left open (closing each branch of
 * an intersection would refuse the other branch's keys); the node holding the `allOf` gets
 * `unevaluatedProperties: false` instead (draft 2020-12).
 */
export function closeObjects(schema: JsonSchema): JsonSchema {
  return close(schema, false) as JsonSchema;
}

function close(node: unknown, inAllOf: boolean): unknown {
  if (!isRecord(node)) return node;
  const out = mapSubschemas(node, (child, keyword) => close(child, keyword === "allOf"));
  const isObjectType = out.type === "object" || (Array.isArray(out.type) && out.type.includes("object")) || isRecord(out.properties);
  const open = !inAllOf && !("additionalProperties" in out) && !("unevaluatedProperties" in out) && !("patternProperties" in out);
  // An intersection: its branches stay open, and the node itself refuses what no branch declares.
  if (Array.isArray(out.allOf) && open) out.unevaluatedProperties = false;
  else if (isObjectType && open) out.additionalProperties = false;
  return out;
}

/** What a gate lists for one tool. */
export interface ToolListing {
  readonly name: string;
  readonly version: string;
  readonly description: string;
  readonly effect: "read" | "write";
  /** `true`, `false`, or `"conditional"` when a predicate on the input decides. */
  readonly approval: boolean | "conditional";
  /** Input side JSON Schema (draft 2020-12 unless asked otherwise). */
  readonly inputSchema: JsonSchema;
  /** Output side JSON Schema; absent when it cannot be represented (see `outputSchemaError`). */
  readonly outputSchema?: JsonSchema;
  /** Why the output schema cannot be represented in JSON Schema. */
  readonly outputSchemaError?: string;
}

/** The advertised input schema for a tool, or the reason it cannot be represented. */
export function advertisedInput(tool: AnyTool, target: JsonSchemaTarget = "draft-2020-12"): { ok: true; schema: JsonSchema } | { ok: false; reason: string } {
  const r = toJsonSchema(tool.input, "input", target);
  if (!r.ok) return r;
  return { ok: true, schema: tool.unknownKeys === "strip" ? r.schema : closeObjects(r.schema) };
}

/** Build the listing of one tool, or the reason its input cannot be advertised. */
export function listingFor(tool: AnyTool, target: JsonSchemaTarget = "draft-2020-12"): { ok: true; listing: ToolListing } | { ok: false; reason: string } {
  const advertised = advertisedInput(tool, target);
  const input = advertised.ok ? frozenCopy(advertised.schema) : advertised;
  if (!input.ok) return input;
  const output = toJsonSchema(tool.output, "output", target);
  const out = output.ok ? frozenCopy(output.schema) : output;
  const approval = tool.approval === undefined ? false : typeof tool.approval === "function" ? "conditional" : tool.approval;
  const listing: ToolListing = {
    name: tool.name,
    version: tool.version,
    description: tool.description,
    effect: tool.effect,
    approval,
    inputSchema: input.schema,
    ...(out.ok ? { outputSchema: out.schema } : { outputSchemaError: out.reason }),
  };
  return { ok: true, listing: Object.freeze(listing) };
}

/**
 * A schema as the listing keeps it: the gate's own copy, frozen all the way down. The gate reads
 * it after creation (the ledger masks secret output fields by the output schema, servers advertise
 * the input schema), so a caller that edits what `gate.list()` returned changes neither what is
 * enforced nor what is advertised; and a copy, so the schema library's own object (which it may
 * cache and reuse) is never frozen under it.
 */
function frozenCopy(schema: JsonSchema): { ok: true; schema: JsonSchema } | { ok: false; reason: string } {
  let copy: JsonSchema;
  try {
    copy = structuredClone(schema);
  } catch (e) {
    return { ok: false, reason: `the JSON Schema is not plain data (${e instanceof Error ? e.message : String(e)})`.slice(0, 300) };
  }
  return { ok: true, schema: deepFreeze(copy) };
}

/** Freeze `v` and everything it holds (a frozen object is taken as done: the copy may have cycles). */
function deepFreeze<T>(v: T): T {
  if (typeof v === "object" && v !== null && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k]);
  }
  return v;
}
