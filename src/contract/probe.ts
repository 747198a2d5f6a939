/**
 * What a converter drops without a word. Zod emits refinements as if they were not there and
 * describes a preprocessed field by its post-processing type; through Standard JSON Schema's
 * `libraryOptions.override` hook we see every zod node as it is converted and report those sites.
 * Other vendors: nothing to probe (their converters throw or are exact), so nothing is reported.
 * @module
 */
import type { StandardSchemaV1 } from "@standard-schema/spec";
import { hasJsonSchema, type JsonSchemaTarget } from "../standard.js";

/** One site a JSON Schema cannot express. `path` is the field path (`a.b`, `*` for items; `""` for the root). */
export interface Unrepresentable {
  readonly path: string;
  readonly reason: string;
}

interface ZodDefLike {
  readonly type?: unknown;
  readonly checks?: ReadonlyArray<{ readonly _zod?: { readonly def?: { readonly check?: unknown; readonly format?: unknown; readonly pattern?: unknown } } }>;
  /** A transform's function (`z.transform(fn)`, `.transform(fn)`). */
  readonly transform?: unknown;
  readonly in?: { readonly _zod?: { readonly def?: ZodDefLike } };
  readonly out?: { readonly _zod?: { readonly def?: ZodDefLike } };
}

/** Turn a JSON Schema location (`["properties","a","items"]`) into a field path (`a.*`). */
export function fieldPath(jsonPath: readonly (string | number)[]): string {
  const out: string[] = [];
  for (let i = 0; i < jsonPath.length; i++) {
    const seg = String(jsonPath[i]);
    const next = jsonPath[i + 1];
    if (seg === "properties" || seg === "patternProperties") {
      if (next !== undefined) out.push(String(next));
      i++;
    } else if (seg === "items" || seg === "additionalProperties" || seg === "additionalItems") out.push("*");
    else if (seg === "prefixItems") {
      if (next !== undefined) out.push(String(next));
      i++;
    } else if (seg === "anyOf" || seg === "oneOf" || seg === "allOf") i++;
    else if (seg === "$defs" || seg === "definitions") {
      out.push(`$defs.${String(next)}`);
      i++;
    }
  }
  return out.join(".");
}

/**
 * List the sites of a schema's `side` that its JSON Schema cannot express (zod: `refine`,
 * `superRefine`, `check` with a custom function, a regex with flags; on the input side
 * `preprocess`, an overwrite such as `trim()` or `toLowerCase()` before a check, a pipe into a
 * schema that checks again, and a transform that takes `ctx`, which can add issues). Never throws; an empty list for
 * other vendors or when the conversion itself fails (that failure is reported elsewhere).
 * @example
 * probeUnrepresentable(z.object({ a: z.string().refine((s) => s !== "x") }), "input");
 * // [{ path: "a", reason: "custom refinement (refine/superRefine): not expressible in JSON Schema" }]
 */
export function probeUnrepresentable(schema: StandardSchemaV1, side: "input" | "output", target: JsonSchemaTarget = "draft-2020-12"): Unrepresentable[] {
  if (schema["~standard"].vendor !== "zod" || !hasJsonSchema(schema)) return [];
  const found = new Map<string, Unrepresentable>();
  const add = (path: string, reason: string) => {
    const key = `${path}\u0000${reason}`;
    if (!found.has(key)) found.set(key, { path, reason });
  };
  const override = (ctx: { zodSchema?: { _zod?: { def?: ZodDefLike } }; path?: (string | number)[] }) => {
    const def = ctx.zodSchema?._zod?.def;
    if (def === undefined) return;
    const path = fieldPath(ctx.path ?? []);
    if (def.checks?.some((c) => c._zod?.def?.check === "custom")) add(path, "custom refinement (refine/superRefine): not expressible in JSON Schema");
    const piped = def.type === "pipe" ? def.out?._zod?.def : undefined;
    // A pipe into a transform (`.trim().transform(fn)`) checks nothing; into a bare string neither.
    const checksNothing =
      piped === undefined || piped.type === "transform" || (piped.type === "string" && (piped.checks ?? []).every((c) => c._zod?.def?.check === "overwrite"));
    const overwrittenThenPiped = !checksNothing && (def.in?._zod?.def?.checks ?? []).some((c) => c._zod?.def?.check === "overwrite");
    if (side === "input" && (checkAfterOverwrite(def.checks ?? []) || overwrittenThenPiped)) {
      // trim(), toLowerCase(), toUpperCase(), normalize(): the checks after it see the rewritten value.
      add(path, "overwrite (trim/toLowerCase/toUpperCase/normalize) before a check: the runtime checks the rewritten value; the schema cannot say so");
    }
    const preprocessed = def.type === "pipe" && def.in?._zod?.def?.type === "transform";
    if (preprocessed && side === "input") {
      add(path, "preprocess: the runtime transforms the value before validating it; the schema describes the value after");
    }
    if (side === "input" && def.type === "pipe" && !checksNothing && !overwrittenThenPiped && !preprocessed) {
      add(path, "pipe into a second schema: the runtime checks the value against it too; the schema describes only the first");
    }
    // A transform that takes the context can refuse a value (`ctx.addIssue`) the schema accepts.
    // The input side describes a pipe's first schema only: the transform it pipes into is not visited.
    const fn = def.type === "transform" ? def.transform : piped?.type === "transform" ? piped.transform : undefined;
    if (side === "input" && typeof fn === "function" && fn.length >= 2) {
      add(path, "transform that takes ctx: it can refuse values (ctx.addIssue) that the schema accepts");
    }
    for (const c of def.checks ?? []) {
      const d = c._zod?.def;
      if (d?.check === "string_format" && d.format === "regex" && d.pattern instanceof RegExp && /[ims]/.test(d.pattern.flags)) {
        add(path, `regex with flags (${d.pattern.flags}): a JSON Schema pattern takes none, so the advertised pattern matches other strings than the runtime`);
      }
    }
  };
  try {
    schema["~standard"].jsonSchema[side]({ target, libraryOptions: { override } });
  } catch {
    return [];
  }
  return [...found.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** A check that runs after an overwrite (`z.string().trim().min(1)`): alone, or before every check, an overwrite changes no verdict. */
function checkAfterOverwrite(checks: readonly { readonly _zod?: { readonly def?: { readonly check?: unknown } } }[]): boolean {
  let overwritten = false;
  for (const c of checks) {
    const kind = c._zod?.def?.check;
    if (kind === "overwrite") overwritten = true;
    else if (overwritten) return true;
  }
  return false;
}
