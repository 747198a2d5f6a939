/**
 * The two verdicts the drift checker compares: Ajv on the advertised schema, and the runtime
 * path (the target's mapping, then a real gate around the tool with an execute stub that only
 * records whether it was reached).
 * @module
 */
import { Ajv as Ajv07, type ErrorObject, type SchemaValidateFunction, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsImport from "ajv-formats";
import type { JsonSchema } from "../standard.js";
import type { Issue, ToolErrorCode } from "../result.js";
import { createGate, type Gate } from "../gate.js";
import { defineTool, type AnyTool } from "../tool.js";
import type { Dialect } from "./targets.js";

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const addFormats = ((addFormatsImport as unknown as { default?: unknown }).default ?? addFormatsImport) as (ajv: Ajv07 | Ajv2020) => unknown;

/** What one side answered for one payload. */
export interface Verdict {
  readonly accepted: boolean;
  /** Advertised side: Ajv errors as `path: keyword message`. Runtime side: the issues. */
  readonly reasons: readonly string[];
  /** Field path where the rejecting side located the problem (`""` for the root). */
  readonly path: string;
  /** Advertised side: the Ajv keyword that failed at `path` (`required`, `type`…). */
  readonly keyword?: string;
}

/** The runtime side, with the envelope's code. */
export interface RuntimeVerdict extends Verdict {
  /** `undefined` when execute was reached; otherwise the envelope's code. */
  readonly code: ToolErrorCode | undefined;
  readonly issues: readonly Issue[];
}

/** A compiled advertised schema, or why Ajv refused to compile it. */
export type AdvertisedValidator = { ok: true; check(payload: unknown): Verdict } | { ok: false; reason: string };

function ajvFor(dialect: Dialect): Ajv07 | Ajv2020 {
  const opts = { strict: false, allErrors: true, validateFormats: true, logger: false } as const;
  const ajv = dialect === "draft-07" ? new Ajv07(opts) : new Ajv2020(opts);
  addFormats(ajv);
  // Ajv divides in binary floating point: 0.07 / 0.01 is 7.000000000000001, "not a multiple".
  // Its multipleOfPrecision tolerance still refuses large amounts (21051047.47 / 0.01), so the
  // keyword is judged in decimal instead, as JSON Schema (and zod) mean it.
  ajv.removeKeyword("multipleOf");
  ajv.addKeyword({ keyword: "multipleOf", type: "number", schemaType: "number", errors: true, validate: multipleOf });
  return ajv;
}

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/;

/** A number as JavaScript writes it (the shortest text that reads back as the same double): digits × 10^exp. */
function decimalOf(n: number): { readonly digits: bigint; readonly exp: number } | undefined {
  const m = DECIMAL.exec(String(n));
  if (m === null) return undefined; // NaN, ±Infinity
  const frac = m[3] ?? "";
  return { digits: BigInt(`${m[1]}${m[2]}${frac}`), exp: Number(m[4] ?? 0) - frac.length };
}

/**
 * `value` is an integer multiple of `step`, both read as the decimals they are written as: `0.07`
 * is a multiple of `0.01`, `0.071` is not. Exact at every magnitude (big integers, no tolerance).
 */
function isDecimalMultiple(value: number, step: number): boolean {
  const v = decimalOf(value);
  const s = decimalOf(step);
  if (v === undefined || s === undefined || s.digits <= 0n) return false;
  const e = Math.min(v.exp, s.exp);
  return (v.digits * 10n ** BigInt(v.exp - e)) % (s.digits * 10n ** BigInt(s.exp - e)) === 0n;
}

/** The `multipleOf` keyword for Ajv, in decimal, with Ajv's own error wording. */
const multipleOf: SchemaValidateFunction = (step: number, value: number): boolean => {
  if (isDecimalMultiple(value, step)) return true;
  multipleOf.errors = [{ keyword: "multipleOf", message: `must be multiple of ${step}`, params: { multipleOf: step } }];
  return false;
};

function errorPath(e: ErrorObject): string {
  const segs = e.instancePath === "" ? [] : e.instancePath.slice(1).split("/").map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
  const p = e.params as Record<string, unknown>;
  if (e.keyword === "required" && typeof p.missingProperty === "string") segs.push(p.missingProperty);
  if (e.keyword === "additionalProperties" && typeof p.additionalProperty === "string") segs.push(p.additionalProperty);
  if (e.keyword === "unevaluatedProperties" && typeof p.unevaluatedProperty === "string") segs.push(p.unevaluatedProperty);
  return segs.join(".");
}

/**
 * Compile the advertised schema with Ajv 8 (`ajv/dist/2020` for 2020-12, `ajv` for draft-07) and
 * ajv-formats. Never throws.
 * @example
 * const v = compileAdvertised(listing.inputSchema, "draft-2020-12");
 * if (v.ok) v.check({ customerId: "c_1" }).accepted; // true
 */
export function compileAdvertised(schema: JsonSchema, dialect: Dialect): AdvertisedValidator {
  let validate: ValidateFunction;
  try {
    const doc = { ...schema };
    delete doc.$id;
    validate = ajvFor(dialect).compile(doc);
  } catch (e) {
    return { ok: false, reason: (e instanceof Error ? e.message : String(e)).slice(0, 300) };
  }
  return {
    ok: true,
    check(payload) {
      if (validate(payload)) return { accepted: true, reasons: [], path: "" };
      const errors = validate.errors ?? [];
      const reasons = errors.slice(0, 5).map((e) => `${errorPath(e) || "(root)"}: ${e.keyword} ${e.message ?? ""}`.trim());
      // The deepest error locates the problem best; unions report every branch at the union's path.
      const best = errors.reduce<ErrorObject | undefined>((a, e) => (a === undefined || errorPath(e).length > errorPath(a).length ? e : a), undefined);
      return best === undefined ? { accepted: false, reasons, path: "" } : { accepted: false, reasons, path: errorPath(best), keyword: best.keyword };
    },
  };
}

/** Runs calls through a real gate around a copy of the tool whose execute only records that it ran. */
export interface RuntimeProbe {
  /** `args` as a model sends them: JSON text (or a value). */
  check(args: unknown): Promise<RuntimeVerdict>;
}

/**
 * A gate around `tool` with its schemas, `unknownKeys` and approval rules, but an execute stub:
 * approval is granted, retries, the breaker and `reconcile` are off, nothing leaves the process.
 * @example
 * const probe = runtimeProbe(getOrder);
 * (await probe.check('{"customerId":"c_1"}')).accepted; // true: execute was reached
 */
export function runtimeProbe(tool: AnyTool): RuntimeProbe {
  let reached = false;
  // Never the tool's own state check: it would reach the real service after the stub's failure.
  const { reconcile: _reconcile, ...rest } = tool;
  const stub = defineTool({
    ...rest,
    retry: false,
    execute: () => {
      reached = true;
      throw new Error("toolgate drift probe: execute reached");
    },
  });
  const gate: Gate = createGate({ tools: [stub], approve: () => true, breaker: false, retry: { budget: false }, onHookError: () => undefined });
  return {
    async check(args) {
      reached = false;
      const r = await gate.call(tool.name, args);
      if (reached) return { accepted: true, reasons: [], path: "", code: undefined, issues: [] };
      const issues = r.ok ? [] : (r.issues ?? []);
      const code = r.ok ? undefined : r.code;
      return {
        accepted: false,
        code,
        issues,
        reasons: issues.length > 0 ? issues.slice(0, 5).map((i) => `${i.path || "(root)"}: ${i.code} ${i.message}`) : [`${code ?? "OK"}: ${r.ok ? "" : r.message}`],
        path: issues[0]?.path ?? "",
      };
    },
  };
}

/** Send a payload the way a model does, as JSON text, through the target's mapping, then the gate. */
export function runtimeVerdict(probe: RuntimeProbe, mapArgs: (a: unknown) => unknown, payload: unknown): Promise<RuntimeVerdict> {
  return probe.check(mapArgs(payload === undefined ? "" : JSON.stringify(payload)));
}
