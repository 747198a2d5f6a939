/**
 * Upstream JSON Schemas as Standard Schemas: each is compiled once with Ajv (draft-07 or
 * 2020-12, by `$schema`; 2020-12 when absent, as MCP 2025-11-25 says) with ajv-formats, and
 * wrapped so a gate can use it as a tool's input or output schema. `~standard.jsonSchema` returns
 * the upstream schema itself, so what the proxy advertises is exactly what it enforces.
 * @module
 */
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { Ajv2019 } from "ajv/dist/2019.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import type { StandardJSONSchemaV1, StandardSchemaV1 } from "@standard-schema/spec";
import type { JsonSchema } from "../../standard.js";

type AnyAjv = Ajv | Ajv2019 | Ajv2020;
const addFormats = addFormatsModule as unknown as (ajv: AnyAjv) => AnyAjv;

/** A Standard Schema backed by an Ajv validator; `~standard.jsonSchema` gives back the source schema. */
export type AjvStandardSchema = StandardSchemaV1<unknown, unknown> & StandardJSONSchemaV1<unknown, unknown>;

/** The compilers, one per draft; create once per proxy. */
export interface AjvCompilers {
  /** Compile `schema` (once); returns the validator or why it cannot be compiled. */
  compile(schema: JsonSchema): { ok: true; validate: ValidateFunction } | { ok: false; reason: string };
}

/** A value this large (as JSON) gets the first error only: listing all of a 1 MiB array's took 1 s and 200 MiB. */
const ALL_ERRORS_UP_TO = 64 * 1024;

function instances(allErrors: boolean): { draft07: AnyAjv; d2019: AnyAjv; d2020: AnyAjv } {
  const opts = { strict: false, allErrors, validateFormats: true } as const;
  return { draft07: addFormats(new Ajv(opts)), d2019: addFormats(new Ajv2019(opts)), d2020: addFormats(new Ajv2020(opts)) };
}

/**
 * One validator from two compilations: the first error only (Ajv stops there), then, for a value
 * that fails and is small, every error (up to the gate's 20 issues). `allErrors` builds every error
 * of a value before the gate keeps 20: a 0.95 MiB array of 500,000 wrong items took 1 s and 200 MiB.
 */
function firstThenAll(first: ValidateFunction, all: ValidateFunction): ValidateFunction {
  const v = ((data: unknown): boolean => {
    if (first(data)) {
      v.errors = null;
      return true;
    }
    let small = false;
    try {
      small = (JSON.stringify(data)?.length ?? 0) <= ALL_ERRORS_UP_TO;
    } catch {
      small = false;
    }
    v.errors = (small && !all(data) ? all.errors : first.errors) ?? null;
    return false;
  }) as ValidateFunction;
  v.errors = null;
  return v;
}

/** Create Ajv instances for draft-07, 2019-09 and 2020-12 with formats. */
export function createAjvCompilers(): AjvCompilers {
  const first = instances(false);
  const all = instances(true);
  const pick = (schema: JsonSchema): (keyof typeof first)[] => {
    const s = typeof schema.$schema === "string" ? schema.$schema : "";
    if (/draft-0[467]/.test(s)) return ["draft07"];
    if (s.includes("2019-09")) return ["d2019"];
    if (s.includes("2020-12")) return ["d2020"];
    // No $schema: 2020-12 (the MCP default), falling back to draft-07 for older servers' schemas.
    return ["d2020", "draft07"];
  };
  return {
    compile(schema) {
      let reason = "not a JSON Schema object";
      if (typeof schema !== "object" || schema === null) return { ok: false, reason };
      for (const draft of pick(schema)) {
        try {
          // $id would register the schema globally in that instance; compile a copy without it.
          const { $id: _id, ...rest } = schema;
          return { ok: true, validate: firstThenAll(first[draft].compile(rest), all[draft].compile(rest)) };
        } catch (e) {
          reason = e instanceof Error ? e.message.slice(0, 300) : String(e);
        }
      }
      return { ok: false, reason };
    },
  };
}

function pointerToPath(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

const CODES: Record<string, string> = {
  type: "invalid_type",
  enum: "invalid_value",
  const: "invalid_value",
  minLength: "too_small",
  minimum: "too_small",
  exclusiveMinimum: "too_small",
  minItems: "too_small",
  minProperties: "too_small",
  maxLength: "too_big",
  maximum: "too_big",
  exclusiveMaximum: "too_big",
  maxItems: "too_big",
  maxProperties: "too_big",
  pattern: "invalid_format",
  format: "invalid_format",
  multipleOf: "not_multiple_of",
  anyOf: "invalid_union",
  oneOf: "invalid_union",
};

/** A Standard Schema issue with the zod-style `code` toolgate reports (mapped from Ajv's keyword). */
export type CodedIssue = StandardSchemaV1.Issue & { readonly code: string };

/** Ajv errors -> Standard Schema issues (paths as segments; values never echoed). */
export function ajvIssues(errors: readonly ErrorObject[] | null | undefined, prefix: readonly string[] = []): CodedIssue[] {
  const out: CodedIssue[] = [];
  for (const e of errors ?? []) {
    const path = [...prefix, ...pointerToPath(e.instancePath)];
    if (e.keyword === "additionalProperties" && typeof e.params.additionalProperty === "string") {
      out.push({ code: "unrecognized_key", message: "Unknown field", path: [...path, e.params.additionalProperty] });
    } else if (e.keyword === "required" && typeof e.params.missingProperty === "string") {
      out.push({ code: "required", message: "Required", path: [...path, e.params.missingProperty] });
    } else {
      out.push({ code: CODES[e.keyword] ?? "invalid", message: e.message ?? `fails ${e.keyword}`, path });
    }
  }
  return out.length > 0 ? out : [{ code: "invalid", message: "Invalid value", path: [...prefix] }];
}

/**
 * Wrap a compiled validator as a Standard Schema. `select` picks the part of the value to validate
 * (default: the value itself); the validated value is passed through unchanged.
 * @example
 * const compiled = compilers.compile(tool.inputSchema);
 * if (compiled.ok) input = ajvStandardSchema(tool.inputSchema, compiled.validate);
 */
export function ajvStandardSchema(
  schema: JsonSchema,
  validate: ValidateFunction,
  select?: (value: unknown) => { ok: true; part: unknown; prefix?: readonly string[] } | { ok: false; issue: StandardSchemaV1.Issue },
): AjvStandardSchema {
  const frozen = Object.freeze(structuredClone(schema));
  const std: AjvStandardSchema["~standard"] = {
    version: 1,
    vendor: "toolgate-ajv",
    validate(value: unknown) {
      let part = value;
      let prefix: readonly string[] = [];
      if (select !== undefined) {
        const s = select(value);
        if (!s.ok) return { issues: [s.issue] };
        part = s.part;
        prefix = s.prefix ?? [];
      }
      return validate(part) ? { value } : { issues: ajvIssues(validate.errors, prefix) };
    },
    jsonSchema: {
      input: () => structuredClone(frozen) as Record<string, unknown>,
      output: () => structuredClone(frozen) as Record<string, unknown>,
    },
  };
  return { "~standard": std };
}
