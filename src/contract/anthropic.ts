/**
 * Anthropic `input_schema`: a JSON Schema object at the root, without `anyOf`/`oneOf`/`allOf`
 * at the top level. Everything below the root passes through unchanged.
 * @module
 */
import type { JsonSchema } from "../standard.js";
import { deref, isRecord, isObjectSchema, requiredOf, typesOf } from "./_schema.js";

/** What {@link toAnthropicInputSchema} returns. */
export interface AnthropicInputSchema {
  /** The schema to send as the tool's `input_schema`. */
  readonly schema: JsonSchema;
  /** What the target cannot say exactly (a root union flattened, a non-object root), as `<path>: <what>`. Empty when exact. */
  readonly problems: string[];
}

const UNIONS = ["anyOf", "oneOf", "allOf"] as const;

/**
 * Map an input JSON Schema to Anthropic's `input_schema`. A root union of objects is flattened
 * into one object (looser; reported); a root that is not an object is reported. Never throws.
 * @example
 * const { schema, problems } = toAnthropicInputSchema(listing.inputSchema);
 * const tool = { name: listing.name, description: listing.description, input_schema: schema };
 */
export function toAnthropicInputSchema(inputSchema: JsonSchema): AnthropicInputSchema {
  const problems: string[] = [];
  const schema: JsonSchema = { ...inputSchema };
  const present = UNIONS.filter((k) => Array.isArray(schema[k]));
  if (present.length > 0) {
    const branches = present.flatMap((k) => (schema[k] as unknown[]).map((b) => (isRecord(b) ? deref(inputSchema, b) : undefined)));
    if (branches.every((b): b is JsonSchema => b !== undefined && isObjectSchema(b))) {
      const all = present.includes("allOf") && present.length === 1;
      Object.assign(schema, flatten(branches, all));
      for (const k of present) delete schema[k];
      problems.push(
        all
          ? "(root): top-level `allOf` merged into one object (input_schema has no top-level allOf)"
          : `(root): top-level \`${present.join("`/`")}\` flattened into one object with every branch's fields optional; the runtime still enforces the union`,
      );
    } else {
      problems.push(`(root): top-level \`${present.join("`/`")}\` over non-object branches cannot be an input_schema`);
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
 * by {@link toAnthropicInputSchema} (reported). `ok: false` when no object can be made: a root
 * that is not an object, a union with a non-object branch (a nullable object). The check reads
 * the final schema, not `type` alone. Internal: the adapters refuse such a tool when they build it.
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
