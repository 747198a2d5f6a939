/**
 * A success's data as JSON will carry it. The agent receives JSON (MCP, the adapters, a provider's
 * tool message): data that JSON cannot carry would either throw where it is serialized (a cycle, a
 * bigint, nesting deeper than the serializer's stack) or arrive changed without a word (a Map as
 * `{}`, NaN as `null`, a function dropped). The gate checks what a validated output holds before
 * it answers success, and refuses such data as INVALID_OUTPUT, naming the path.
 *
 * The walk follows `JSON.stringify`: a value's `toJSON` is called with its key first (a Date, a
 * Buffer, a decimal or an id class answer their JSON form), `undefined` object values are absent,
 * and a class instance is its own enumerable properties. The compiled output check
 * (src/fast-path.ts) only builds plain data and is not walked.
 * @module
 */
import { types } from "node:util";
import type { StandardSchemaV1 } from "@standard-schema/spec";

/** Output data nested deeper than this is refused: `JSON.stringify` overflows the stack a few thousand levels down. */
export const MAX_OUTPUT_DEPTH = 1_000;

/** Why a value has no faithful JSON form, as a Standard Schema issue (code, message, path). */
export interface NotJsonIssue extends StandardSchemaV1.Issue {
  readonly code: "cycle" | "too_deep" | "non_finite" | "non_json" | "non_plain_object";
  readonly path: PropertyKey[];
}

class Stop {
  readonly path: PropertyKey[] = [];
  constructor(
    readonly code: NotJsonIssue["code"],
    readonly message: string,
  ) {}
}

/**
 * The first place where `value` has no faithful JSON form, or undefined when JSON carries it
 * whole. `undefined` itself is fine at the root (a tool with no data). Never throws.
 * @example
 * notJsonData({ id: 10n }); // { code: "non_json", path: ["id"], message: "A bigint has no JSON form" }
 */
export function notJsonData(value: unknown): NotJsonIssue | undefined {
  if (value === undefined) return undefined;
  let stop: Stop | undefined;
  try {
    stop = walk(value, "", new Set(), 0);
  } catch {
    stop = new Stop("non_json", "Value could not be read"); // never: each read is guarded
  }
  if (stop === undefined) return undefined;
  return { code: stop.code, message: stop.message, path: stop.path.reverse() };
}

function walk(raw: unknown, key: string, ancestors: Set<object>, depth: number): Stop | undefined {
  let v = raw;
  if ((typeof v === "object" && v !== null) || typeof v === "bigint") {
    let toJSON: unknown;
    try {
      toJSON = (v as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === "function") v = (toJSON as (key: string) => unknown).call(v, key);
    } catch {
      return new Stop("non_json", "Value could not be turned into JSON (its toJSON or a getter threw)");
    }
  }
  switch (typeof v) {
    case "string":
    case "boolean":
      return undefined;
    case "number":
      return Number.isFinite(v) ? undefined : new Stop("non_finite", "Number must be finite: JSON has no NaN or Infinity");
    case "object":
      if (v === null) return undefined;
      return walkObject(v, ancestors, depth);
    case "undefined":
      return new Stop("non_json", "undefined has no JSON form here (JSON writes null)"); // an array element, or a toJSON's answer
    default:
      return new Stop("non_json", `A ${typeof v} has no JSON form`); // bigint, function, symbol
  }
}

function walkObject(v: object, ancestors: Set<object>, depth: number): Stop | undefined {
  if (ancestors.has(v)) return new Stop("cycle", "Output contains a cycle");
  if (depth >= MAX_OUTPUT_DEPTH) return new Stop("too_deep", `Output is nested deeper than ${MAX_OUTPUT_DEPTH} levels`);
  const kind = withoutJsonForm(v);
  if (kind !== undefined) return new Stop("non_plain_object", `A ${kind} has no JSON form`);
  ancestors.add(v);
  const stop = Array.isArray(v) ? walkItems(v, ancestors, depth + 1) : walkProperties(v as Record<string, unknown>, ancestors, depth + 1);
  ancestors.delete(v);
  return stop;
}

function walkItems(v: unknown[], ancestors: Set<object>, depth: number): Stop | undefined {
  const n = v.length;
  for (let i = 0; i < n; i++) {
    let item: unknown;
    try {
      item = v[i];
    } catch {
      return at(new Stop("non_json", "Value could not be read (a getter threw)"), i);
    }
    const stop = walk(item, String(i), ancestors, depth);
    if (stop !== undefined) return at(stop, i);
  }
  return undefined;
}

function walkProperties(v: Record<string, unknown>, ancestors: Set<object>, depth: number): Stop | undefined {
  const keys = Object.keys(v);
  for (const key of keys) {
    let value: unknown;
    try {
      value = v[key];
    } catch {
      return at(new Stop("non_json", "Value could not be read (a getter threw)"), key);
    }
    if (value === undefined) continue; // absent, as JSON writes it
    const stop = walk(value, key, ancestors, depth);
    if (stop !== undefined) return at(stop, key);
  }
  return undefined;
}

function at(stop: Stop, segment: PropertyKey): Stop {
  stop.path.push(segment);
  return stop;
}

/** Built-ins whose content is not in their own enumerable properties: JSON would write `{}` or an index map. */
function withoutJsonForm(v: object): string | undefined {
  if (Object.getPrototypeOf(v) === Object.prototype || Array.isArray(v)) return undefined; // the common case, first
  if (types.isMap(v)) return "Map";
  if (types.isSet(v)) return "Set";
  if (types.isWeakMap(v) || types.isWeakSet(v)) return "weak collection";
  if (types.isPromise(v)) return "Promise";
  if (types.isRegExp(v)) return "RegExp";
  if (types.isNativeError(v)) return "Error";
  if (types.isAnyArrayBuffer(v) || types.isArrayBufferView(v)) return "binary buffer";
  if (types.isBoxedPrimitive(v)) return "boxed primitive";
  return undefined;
}
