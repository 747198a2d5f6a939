/**
 * Thin helpers over Standard Schema (`~standard.validate`) and Standard JSON Schema
 * (`~standard.jsonSchema`), so the rest of toolgate never touches a vendor API.
 * @module
 */
import type { StandardJSONSchemaV1, StandardSchemaV1 } from "@standard-schema/spec";

export type { StandardJSONSchemaV1, StandardSchemaV1 };

/** A schema toolgate accepts: any Standard Schema; JSON Schema comes from Standard JSON Schema. */
export type Schema<I = unknown, O = I> = StandardSchemaV1<I, O>;

/** JSON Schema targets we ask converters for. */
export type JsonSchemaTarget = "draft-2020-12" | "draft-07" | "openapi-3.0";

/** A JSON Schema document, as produced by a converter. */
export type JsonSchema = Record<string, unknown>;

/** True when the value implements Standard Schema. */
export function isStandardSchema(v: unknown): v is StandardSchemaV1 {
  if ((typeof v !== "object" && typeof v !== "function") || v === null) return false;
  const std = (v as { "~standard"?: unknown })["~standard"];
  return typeof std === "object" && std !== null && typeof (std as { validate?: unknown }).validate === "function";
}

/** True when the schema also implements Standard JSON Schema. */
export function hasJsonSchema(v: StandardSchemaV1): v is StandardSchemaV1 & StandardJSONSchemaV1 {
  const js = (v["~standard"] as { jsonSchema?: unknown }).jsonSchema;
  return typeof js === "object" && js !== null && typeof (js as { input?: unknown }).input === "function";
}

/** Result of converting a schema: the document, or why it cannot be represented. */
export type JsonSchemaResult = { ok: true; schema: JsonSchema } | { ok: false; reason: string };

/**
 * ArkType writes what JSON Schema cannot express as `{}` (a `Date`, a morph's output) without a
 * word, where zod throws "cannot be represented": toolgate asks it to throw too, so such a schema
 * is reported as zod's is (an input that cannot be advertised is a configuration error; an output
 * has `outputSchemaError`). A narrow is kept as its base type, as zod keeps a refined one: the
 * advertised schema is looser than the runtime, and `toolgate check` finds the difference by sampling.
 */
const ARKTYPE_OPTIONS = {
  fallback: {
    predicate: (ctx: { base: unknown }) => ctx.base,
    // A second pattern on a string: both must match, as zod writes two regexes.
    patternIntersection: (ctx: { base: Record<string, unknown>; pattern: string }) => ({
      ...ctx.base,
      allOf: [...(Array.isArray(ctx.base.allOf) ? (ctx.base.allOf as unknown[]) : []), { pattern: ctx.pattern }],
    }),
    // `undefined` in a union (`"a?": "string | undefined"`): JSON cannot send it, so that branch accepts nothing.
    unit: (ctx: { unit: unknown }) => {
      if (ctx.unit === undefined) return { not: {} };
      throw new Error("cannot be represented in JSON Schema (ArkType: unit)");
    },
    default: (ctx: { code: string }) => {
      throw new Error(`cannot be represented in JSON Schema (ArkType: ${ctx.code})`);
    },
  },
};

/**
 * Convert one side of a schema to JSON Schema. `input` is what a caller may send (defaults optional);
 * `output` is what the schema produces. Never throws.
 */
export function toJsonSchema(
  schema: StandardSchemaV1,
  side: "input" | "output",
  target: JsonSchemaTarget = "draft-2020-12",
): JsonSchemaResult {
  if (!hasJsonSchema(schema)) {
    return { ok: false, reason: "the schema does not implement Standard JSON Schema (~standard.jsonSchema)" };
  }
  try {
    const std = schema["~standard"];
    const doc = std.vendor === "arktype" ? std.jsonSchema[side]({ target, libraryOptions: ARKTYPE_OPTIONS }) : std.jsonSchema[side]({ target });
    return { ok: true, schema: doc };
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    return { ok: false, reason: reason.slice(0, 300) };
  }
}

/** True for a thenable. */
export function isPromiseLike<T>(v: unknown): v is PromiseLike<T> {
  return typeof v === "object" && v !== null && typeof (v as { then?: unknown }).then === "function";
}
