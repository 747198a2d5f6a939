/**
 * Anthropic `input_schema`: a JSON Schema object at the root, without `anyOf`/`oneOf`/`allOf`
 * at the top level. Everything below the root passes through unchanged.
 * @module
 */
import type { JsonSchema } from "../standard.js";
import { isRecord, isObjectSchema, requiredOf, resolveRef, typesOf } from "./_schema.js";

/** What {@link toAnthropicInputSchema} returns. */
export interface AnthropicInputSchema {
  /** The schema to send as the tool's `input_schema`. */
  readonly schema: JsonSchema;
  /** What the target cannot say exactly (a root union flattened, a non-object root), as `<path>: <what>`. Empty when exact. */
  readonly problems: string[];
}

const UNIONS = ["anyOf", "oneOf", "allOf"] as const;

/**
 * Map an input JSON Schema to Anthropic's `input_schema`. A root `$ref` into the schema's own
 * `$defs`/`definitions` is replaced by its target (exact; `$defs` kept for inner refs). A root
 * union of objects, nested unions included (`a.or(b).or(c)`), is flattened into one object
 * (looser; reported); a root that is not an object is reported, with the cause (a non-object
 * branch, an external `$ref`, a `$ref` cycle). Never throws.
 * @example
 * const { schema, problems } = toAnthropicInputSchema(listing.inputSchema);
 * const tool = { name: listing.name, description: listing.description, input_schema: schema };
 */
export function toAnthropicInputSchema(inputSchema: JsonSchema): AnthropicInputSchema {
  const target = follow(inputSchema, inputSchema, []);
  if (!target.ok) return { schema: { ...inputSchema }, problems: [`(root): input_schema must describe an object; this tool's input has ${target.why}`] };
  const { schema } = target;
  const problems = target.replaced.map(
    (k) => `(root): \`${k}\` beside the root \`$ref\` differs from the referenced schema's; the referenced one is sent, the runtime still enforces both`,
  );
  const present = UNIONS.filter((k) => Array.isArray(schema[k]));
  if (present.length > 0) {
    const all = present.includes("allOf") && present.length === 1;
    // Under a union, a branch that is itself a union contributes its branches; under allOf it would not be exact.
    const leaves = leavesOf(inputSchema, present.flatMap((k) => schema[k] as unknown[]), !all, target.refs);
    if (leaves.ok) {
      Object.assign(schema, flatten(leaves.leaves, all));
      for (const k of present) delete schema[k];
      problems.push(
        all
          ? "(root): top-level `allOf` merged into one object (input_schema has no top-level allOf)"
          : `(root): top-level \`${present.join("`/`")}\` flattened into one object with every branch's fields optional; the runtime still enforces the union`,
      );
    } else {
      problems.push(`(root): top-level \`${present.join("`/`")}\` over ${leaves.why} cannot be an input_schema`);
    }
  }
  if (!typesOf(schema).includes("object")) {
    if (isObjectSchema(schema) || present.length > 0) schema.type = "object";
    else problems.push("(root): input_schema must describe an object; this tool's input is not one");
  }
  return { schema, problems };
}

/** Keywords OpenAI (`parameters`) and Anthropic (`input_schema`) refuse at the root of a tool's input. */
const ROOT_REFUSED = ["anyOf", "oneOf", "allOf", "enum", "not"] as const;

/** What {@link _objectRoot} returns: `ok` when `schema` is a root both providers take. */
export interface ObjectRoot extends AnthropicInputSchema {
  readonly ok: boolean;
}

/**
 * A tool's input as a root the providers take (`type: "object"`, no top-level
 * `anyOf`/`oneOf`/`allOf`/`enum`/`not`): the schema itself, or a root union of objects flattened
 * by {@link toAnthropicInputSchema} (reported), or the object a root `$ref` points at. `ok: false`
 * when no object can be made: a root that is not an object, a union with a non-object branch (a
 * nullable object), a `$ref` that is external or a cycle; `problems` then names the cause. The
 * check reads the final schema, not `type` alone. Internal: the adapters refuse such a tool when
 * they build it.
 */
export function _objectRoot(inputSchema: JsonSchema): ObjectRoot {
  const s = toAnthropicInputSchema(inputSchema);
  return { ...s, ok: _isObjectRoot(s.schema) };
}

/** Whether the providers take this schema's root as it is: `type: "object"` and none of the refused keywords. Internal. */
export function _isObjectRoot(schema: JsonSchema): boolean {
  return schema.type === "object" && ROOT_REFUSED.every((k) => !(k in schema));
}

function flatten(branches: JsonSchema[], intersection: boolean): JsonSchema {
  const properties: Record<string, unknown> = {};
  for (const b of branches) {
    for (const [k, v] of Object.entries(isRecord(b.properties) ? b.properties : {})) {
      const prev = properties[k];
      properties[k] = prev === undefined || JSON.stringify(prev) === JSON.stringify(v) ? v : { anyOf: [prev, v] };
    }
  }
  const reqs = branches.map(requiredOf);
  const required = intersection
    ? [...new Set(reqs.flatMap((r) => [...r]))]
    : [...(reqs[0] ?? new Set<string>())].filter((k) => reqs.every((r) => r.has(k)));
  const closed = branches.every((b) => b.additionalProperties === false);
  return { type: "object", properties, ...(required.length > 0 ? { required } : {}), ...(closed ? { additionalProperties: false } : {}) };
}

/** Keys a `$ref`'s neighbours keep over the target's: annotations (the outer one is the more specific) and the root's definitions. */
const OUTER_WINS = new Set(["$schema", "$id", "$comment", "title", "description", "examples", "deprecated", "$defs", "definitions"]);

type Followed = { ok: true; schema: JsonSchema; refs: readonly string[]; replaced: readonly string[] } | { ok: false; why: string };

/**
 * `node` with its `$ref` chain replaced by the target, resolved against `root` (`#` or a `#/…`
 * pointer, such as `#/$defs/…`): a fresh object, the neighbours of each `$ref` kept (see {@link OUTER_WINS};
 * otherwise the target's keyword wins, listed in `replaced`). `seen` is the refs already followed
 * on the way here, so a cycle through nested unions is caught too.
 */
function follow(root: JsonSchema, node: JsonSchema, seen: readonly string[]): Followed {
  const refs = [...seen];
  const replaced: string[] = [];
  let cur: JsonSchema = { ...node };
  while (typeof cur.$ref === "string") {
    const ref = cur.$ref;
    if (refs.includes(ref)) return { ok: false, why: `a \`$ref\` cycle (${[...refs.slice(refs.indexOf(ref)), ref].join(" → ")})` };
    refs.push(ref);
    const next = resolveRef(root, ref);
    if (next === undefined) {
      return {
        ok: false,
        why: ref.startsWith("#/")
          ? `a \`$ref\` ${JSON.stringify(ref)} that points at nothing in this schema`
          : `a \`$ref\` ${JSON.stringify(ref)} outside this schema's own \`$defs\`/\`definitions\` (an external or named reference cannot be followed)`,
      };
    }
    const { $ref: _ref, ...outer } = cur;
    cur = { ...next };
    for (const [k, v] of Object.entries(outer)) {
      if (OUTER_WINS.has(k) || !(k in cur)) cur[k] = v;
      else if (JSON.stringify(cur[k]) !== JSON.stringify(v)) replaced.push(k);
    }
  }
  return { ok: true, schema: cur, refs, replaced };
}

type Leaves = { ok: true; leaves: JsonSchema[] } | { ok: false; why: string };

/** The object schemas a union's branches come to, through `$ref`s and (when `nested`) branches that are unions themselves. */
function leavesOf(root: JsonSchema, branches: readonly unknown[], nested: boolean, seen: readonly string[]): Leaves {
  const leaves: JsonSchema[] = [];
  for (const b of branches) {
    if (!isRecord(b)) return { ok: false, why: `a non-object branch (${JSON.stringify(b)})` };
    const f = follow(root, b, seen);
    if (!f.ok) return { ok: false, why: `a branch with ${f.why}` };
    const s = f.schema;
    if (isObjectSchema(s)) {
      leaves.push(s);
      continue;
    }
    const inner = nested && typesOf(s).length === 0 && !("allOf" in s) ? (["anyOf", "oneOf"] as const).filter((k) => Array.isArray(s[k])) : [];
    if (inner.length === 0) return { ok: false, why: `a non-object branch (${what(s)})` };
    const sub = leavesOf(root, inner.flatMap((k) => s[k] as unknown[]), true, f.refs);
    if (!sub.ok) return sub;
    leaves.push(...sub.leaves);
  }
  return { ok: true, leaves };
}

/** A short name for a non-object branch, for the problem text. */
function what(s: JsonSchema): string {
  const types = typesOf(s);
  if (types.length > 0) return `type ${types.join("/")}`;
  if ("const" in s) return `const ${JSON.stringify(s.const)}`;
  if (Array.isArray(s.enum)) return "an enum";
  if ("allOf" in s) return "an `allOf`";
  if ("anyOf" in s || "oneOf" in s) return "a union under `allOf`";
  return "no type: any value";
}
