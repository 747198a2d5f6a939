/**
 * A success's data as JSON will carry it. The agent receives JSON (MCP, the adapters, a provider's
 * tool message): data that JSON cannot carry would either throw where it is serialized (a cycle, a
 * bigint, nesting deeper than the serializer's stack) or arrive changed without a word (a Map as
 * `{}`, NaN as `null`, a function dropped). The gate checks what a validated output holds before
 * it answers success, and refuses such data as INVALID_OUTPUT, naming the path.
 *
 * The walk follows `JSON.stringify`: a value's `toJSON` is called with its key first (a Date, a
 * Buffer, a decimal or an id class answer their JSON form), `undefined` object values are absent,
 * and a class instance is its own enumerable properties; any other built-in (a Map, a Blob, fetch's
 * Headers…) keeps its content where JSON cannot see it, and is refused. The compiled output check
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
 * whole. No data at all is fine at the root (a tool that returns nothing). Never throws.
 * @example
 * notJsonData({ id: 10n }); // { code: "non_json", path: ["id"], message: "A bigint has no JSON form" }
 */
export function notJsonData(value: unknown): NotJsonIssue | undefined {
  let stop: Stop | undefined;
  try {
    const form = jsonForm(value, "");
    stop = form instanceof Stop ? form : form === undefined ? undefined : walk(form, new Set(), 0);
  } catch {
    stop = new Stop("non_json", "Value could not be read"); // never: each read is guarded
  }
  if (stop === undefined) return undefined;
  return { code: stop.code, message: stop.message, path: stop.path.reverse() };
}

/** What JSON writes for `v` under `key`: its `toJSON(key)` answer when it has one (a Date's ISO string), else itself. */
function jsonForm(v: unknown, key: string): unknown {
  if ((typeof v !== "object" || v === null) && typeof v !== "bigint") return v;
  try {
    const toJSON = (v as { toJSON?: unknown }).toJSON;
    return typeof toJSON === "function" ? (toJSON as (key: string) => unknown).call(v, key) : v;
  } catch {
    return new Stop("non_json", "Value could not be turned into JSON (its toJSON or a getter threw)");
  }
}

/** `v`: a value's JSON form, never undefined (the caller decides what an absent value means where it stands). */
function walk(v: unknown, ancestors: Set<object>, depth: number): Stop | undefined {
  switch (typeof v) {
    case "string":
    case "boolean":
      return undefined;
    case "number":
      return Number.isFinite(v) ? undefined : new Stop("non_finite", "Number must be finite: JSON has no NaN or Infinity");
    case "object":
      return v === null ? undefined : walkObject(v, ancestors, depth);
    default:
      return new Stop("non_json", `A ${typeof v} has no JSON form`); // bigint, function, symbol
  }
}

function walkObject(v: object, ancestors: Set<object>, depth: number): Stop | undefined {
  if (ancestors.has(v)) return new Stop("cycle", "Output contains a cycle");
  if (depth >= MAX_OUTPUT_DEPTH) return new Stop("too_deep", `Output is nested deeper than ${MAX_OUTPUT_DEPTH} levels`);
  let kind: string | undefined;
  let isArray: boolean;
  try {
    isArray = Array.isArray(v); // a revoked Proxy throws
    kind = isArray ? undefined : withoutJsonForm(v);
  } catch {
    return new Stop("non_json", "Value could not be read (a Proxy trap threw)");
  }
  if (kind !== undefined) return new Stop("non_plain_object", `${/^[aeiou]/i.test(kind) ? "An" : "A"} ${kind} has no JSON form`);
  ancestors.add(v);
  const stop = isArray ? walkItems(v as unknown[], ancestors, depth + 1) : walkProperties(v as Record<string, unknown>, ancestors, depth + 1);
  ancestors.delete(v);
  return stop;
}

function walkItems(v: unknown[], ancestors: Set<object>, depth: number): Stop | undefined {
  let n: number;
  try {
    n = v.length;
  } catch {
    return new Stop("non_json", "Value could not be read (a Proxy trap threw)");
  }
  for (let i = 0; i < n; i++) {
    let form: unknown;
    try {
      form = jsonForm(v[i], String(i));
    } catch {
      form = new Stop("non_json", "Value could not be read (a getter threw)");
    }
    const stop = form instanceof Stop ? form : form === undefined ? new Stop("non_json", "undefined has no JSON form in an array (JSON writes null)") : walk(form, ancestors, depth);
    if (stop !== undefined) return at(stop, i);
  }
  return undefined;
}

function walkProperties(v: Record<string, unknown>, ancestors: Set<object>, depth: number): Stop | undefined {
  let keys: string[];
  try {
    keys = Object.keys(v);
  } catch {
    return new Stop("non_json", "Value could not be read (a Proxy trap threw)");
  }
  for (const key of keys) {
    let form: unknown;
    try {
      const value = v[key];
      // An own toJSON is how the object asks to be written, not data: JSON has already called it.
      if (key === "toJSON" && typeof value === "function") continue;
      form = jsonForm(value, key);
    } catch {
      form = new Stop("non_json", "Value could not be read (a getter threw)");
    }
    if (form === undefined) continue; // absent, as JSON writes it
    const stop = form instanceof Stop ? form : walk(form, ancestors, depth);
    if (stop !== undefined) return at(stop, key);
  }
  return undefined;
}

function at(stop: Stop, segment: PropertyKey): Stop {
  stop.path.push(segment);
  return stop;
}

/**
 * Objects whose content is not in their own enumerable properties (JSON would write `{}` or an
 * index map): every built-in but a plain object or an array — a Map, a Set, an Error, a Blob,
 * fetch's Headers, a URLSearchParams, a WeakRef, a typed array, a boxed primitive — told by the
 * tag they answer (a Proxy forwards it), and the collections also by their internal slots.
 */
function withoutJsonForm(v: object): string | undefined {
  if (Object.getPrototypeOf(v) === Object.prototype) return undefined; // the common case, first
  const tag = Object.prototype.toString.call(v).slice(8, -1);
  if (tag !== "Object") return tag;
  if (types.isMap(v)) return "Map";
  if (types.isSet(v)) return "Set";
  if (types.isWeakMap(v) || types.isWeakSet(v)) return "weak collection";
  if (types.isAnyArrayBuffer(v) || types.isArrayBufferView(v)) return "binary buffer";
  if (types.isBoxedPrimitive(v)) return "boxed primitive";
  return undefined;
}
