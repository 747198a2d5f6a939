/**
 * A success's data as JSON will carry it. The agent receives JSON (MCP, the adapters, a provider's
 * tool message): data that JSON cannot carry would either throw where it is serialized (a cycle, a
 * bigint, nesting deeper than the serializer's stack) or arrive changed without a word (a Map as
 * `{}`, NaN as `null`, a function dropped). The gate checks what a validated output holds before
 * it answers success, and refuses such data as INVALID_OUTPUT, naming the path.
 *
 * The walk follows `JSON.stringify`: a value's `toJSON` is called with its key first (a Date, a
 * Buffer, a decimal or an id class answer their JSON form), `undefined` object values are absent,
 * and a class instance is its own enumerable properties; a built-in (a Map, a Blob, fetch's
 * Headers…) keeps its content where JSON cannot see it, and is refused. The walk is bounded (depth,
 * and values walked: data that reuses one object many times is walked once per use, as JSON would
 * write it). The compiled output check (src/fast-path.ts) only builds plain data and is not walked.
 * @module
 */
import { types } from "node:util";
import type { StandardSchemaV1 } from "@standard-schema/spec";

/** Output data nested deeper than this is refused: `JSON.stringify` overflows the stack a few thousand levels down. */
export const MAX_OUTPUT_DEPTH = 1_000;

/**
 * Output data holding more values than this (counted as JSON would write them, a shared object once
 * per use) is refused: it bounds the walk, and its JSON would be tens of megabytes at least.
 */
export const MAX_OUTPUT_VALUES = 10_000_000;

/** Why a value has no faithful JSON form, as a Standard Schema issue (code, message, path). */
export interface NotJsonIssue extends StandardSchemaV1.Issue {
  readonly code: "cycle" | "too_deep" | "too_large" | "non_finite" | "non_json" | "non_plain_object";
  readonly path: PropertyKey[];
}

class Stop {
  readonly path: PropertyKey[] = [];
  constructor(
    readonly code: NotJsonIssue["code"],
    readonly message: string,
  ) {}
}

/** Ancestors up to this depth are searched in the stack itself; deeper ones also sit in a set. */
const SHALLOW = 64;

interface Walk {
  /** The objects being walked, outermost first: a cycle returns to one of them. */
  readonly stack: object[];
  /** The stack's entries past {@link SHALLOW}: a deep chain is not searched linearly at every step. */
  readonly deep: Set<object>;
  values: number;
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
    stop = form instanceof Stop ? form : form === undefined ? undefined : walk(form, { stack: [], deep: new Set(), values: 0 });
  } catch {
    stop = new Stop("non_json", "Value could not be read"); // never: each read is guarded
  }
  if (stop === undefined) return undefined;
  return { code: stop.code, message: stop.message, path: stop.path.reverse() };
}

/**
 * @internal The first step of how `JSON.stringify` writes `v` under `key` (an index is turned into
 * its text only when a `toJSON` asks): its `toJSON(key)` answer when it has one (a Date's ISO
 * string), else itself. Throws what the `toJSON` (or a getter of it) throws.
 */
export function _toJsonAnswer(v: unknown, key: string | number): unknown {
  if ((typeof v !== "object" || v === null) && typeof v !== "bigint") return v;
  const toJSON = (v as { toJSON?: unknown }).toJSON;
  return typeof toJSON === "function" ? (toJSON as (key: string) => unknown).call(v, String(key)) : v;
}

/**
 * @internal The value `JSON.stringify` writes for `v` under `key`: {@link _toJsonAnswer}, then a
 * boxed primitive unwrapped (what the ledger's redacted copy and the result capture walk; this
 * module refuses a boxed primitive instead). Throws what a `toJSON` throws.
 */
export function _jsonWrittenValue(v: unknown, key: string | number): unknown {
  const answer = _toJsonAnswer(v, key);
  return answer instanceof Number || answer instanceof String || answer instanceof Boolean ? answer.valueOf() : answer;
}

/** {@link _toJsonAnswer}, with a throw as the reason to refuse. */
function jsonForm(v: unknown, key: string | number): unknown {
  try {
    return _toJsonAnswer(v, key);
  } catch {
    return new Stop("non_json", "Value could not be turned into JSON (its toJSON or a getter threw)");
  }
}

/** `v`: a value's JSON form, never undefined (the caller decides what an absent value means where it stands). */
function walk(v: unknown, st: Walk): Stop | undefined {
  if (++st.values > MAX_OUTPUT_VALUES) return new Stop("too_large", `Output holds more than ${MAX_OUTPUT_VALUES} values`);
  switch (typeof v) {
    case "string":
    case "boolean":
      return undefined;
    case "number":
      return Number.isFinite(v) ? undefined : new Stop("non_finite", "Number must be finite: JSON has no NaN or Infinity");
    case "object":
      return v === null ? undefined : walkObject(v, st);
    default:
      return new Stop("non_json", `A ${typeof v} has no JSON form`); // bigint, function, symbol
  }
}

function walkObject(v: object, st: Walk): Stop | undefined {
  const { stack, deep } = st;
  if (onStack(stack, deep, v)) return new Stop("cycle", "Output contains a cycle");
  if (stack.length >= MAX_OUTPUT_DEPTH) return new Stop("too_deep", `Output is nested deeper than ${MAX_OUTPUT_DEPTH} levels`);
  let kind: string | undefined;
  let isArray: boolean;
  try {
    isArray = Array.isArray(v); // a revoked Proxy throws
    kind = isArray ? undefined : withoutJsonForm(v);
  } catch {
    return new Stop("non_json", "Value could not be read (a Proxy trap threw)");
  }
  if (kind !== undefined) return new Stop("non_plain_object", `${/^[aeiou]/i.test(kind) ? "An" : "A"} ${kind} has no JSON form`);
  if (stack.length >= SHALLOW) deep.add(v);
  stack.push(v);
  const stop = isArray ? walkItems(v as unknown[], st) : walkProperties(v as Record<string, unknown>, st);
  stack.pop();
  if (stack.length >= SHALLOW) deep.delete(v);
  return stop;
}

function onStack(stack: readonly object[], deep: ReadonlySet<object>, v: object): boolean {
  const n = Math.min(stack.length, SHALLOW);
  for (let i = 0; i < n; i++) if (stack[i] === v) return true;
  return stack.length > SHALLOW && deep.has(v);
}

function walkItems(v: unknown[], st: Walk): Stop | undefined {
  let n: number;
  try {
    n = v.length;
  } catch {
    return new Stop("non_json", "Value could not be read (a Proxy trap threw)");
  }
  for (let i = 0; i < n; i++) {
    let form: unknown;
    try {
      form = jsonForm(v[i], i);
    } catch {
      form = new Stop("non_json", "Value could not be read (a getter threw)");
    }
    const stop = form instanceof Stop ? form : form === undefined ? new Stop("non_json", "undefined has no JSON form in an array (JSON writes null)") : walk(form, st);
    if (stop !== undefined) return at(stop, i);
  }
  return undefined;
}

function walkProperties(v: Record<string, unknown>, st: Walk): Stop | undefined {
  let keys: string[];
  try {
    keys = Object.keys(v);
  } catch {
    return new Stop("non_json", "Value could not be read (a Proxy trap threw)");
  }
  for (let k = 0; k < keys.length; k++) {
    const key = keys[k]!;
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
    const stop = form instanceof Stop ? form : walk(form, st);
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
 * index map): a built-in — a Map, a Set, an Error, a Blob, fetch's Headers, a URLSearchParams, a
 * WeakRef, a typed array, a boxed primitive — told by its internal slots, or by the tag it answers
 * when that names a global class it is an instance of (a Proxy forwards both). A class of the
 * application's own is its enumerable properties, whatever tag it gives itself.
 */
function withoutJsonForm(v: object): string | undefined {
  if (Object.getPrototypeOf(v) === Object.prototype) return undefined; // the common case, first
  if (types.isMap(v)) return "Map";
  if (types.isSet(v)) return "Set";
  if (types.isWeakMap(v) || types.isWeakSet(v)) return "weak collection";
  if (types.isNativeError(v)) return "Error";
  if (types.isAnyArrayBuffer(v) || types.isArrayBufferView(v)) return "binary buffer";
  if (types.isBoxedPrimitive(v)) return "boxed primitive";
  const tag = Object.prototype.toString.call(v).slice(8, -1);
  if (tag === "Object") return undefined;
  const global = (globalThis as Record<string, unknown>)[tag];
  return typeof global === "function" && v instanceof global ? tag : undefined;
}
