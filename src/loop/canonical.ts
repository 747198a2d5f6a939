/**
 * Canonical arguments: the identity of a proposed call, so the loop can tell "the same payload
 * again" from "a changed payload". JSON text and values canonicalize alike; key order, whitespace
 * and the contents of the reserved `_meta` envelope do not count (its presence does, in `callKey`).
 * @module
 */
import { createHash, randomUUID } from "node:crypto";
import { _parsesAsWritten } from "../harden.js";

const MAX_DEPTH = 200;
/**
 * Values visited per canonical form. A value can hold the same object in many places (a host's
 * arguments, never parsed JSON): 40 levels of two references to one object are 2^40 visits, so
 * past this many the arguments count as too large to compare, as too deep ones do.
 */
const MAX_VISITS = 1_000_000;

class TooDeep extends Error {}

function stable(v: unknown, depth: number, budget: { visits: number }): string {
  if (depth > MAX_DEPTH || ++budget.visits > MAX_VISITS) throw new TooDeep();
  if (v === null) return "null";
  switch (typeof v) {
    case "string":
      return JSON.stringify(v);
    case "boolean":
      return v ? "true" : "false";
    case "number":
      // -0 and 0 serialize alike in JSON; NaN and ±Infinity are not JSON but must not collide with null.
      return Number.isFinite(v) ? JSON.stringify(v) : `#${String(v)}`;
    case "bigint":
      return `#${v.toString()}n`;
    case "undefined":
      return "#undefined";
    case "object":
      break;
    default:
      return `#${typeof v}`;
  }
  if (Array.isArray(v)) return "[" + v.map((x) => stable(x, depth + 1, budget)).join(",") + "]";
  const obj = v as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return "{" + keys.map((k) => JSON.stringify(k) + ":" + stable(obj[k], depth + 1, budget)).join(",") + "}";
}

/**
 * The arguments as a value: JSON text is parsed; text that is not JSON stays text, and so does
 * text with a key twice in one object (the gate refuses it as written, while `JSON.parse` keeps the
 * last: its repair, the same object with the key once, must not count as the same call).
 */
export function argsValue(args: unknown): { readonly parsed: true; readonly value: unknown } | { readonly parsed: false; readonly text: string } {
  if (typeof args !== "string") return { parsed: true, value: args };
  if (!_parsesAsWritten(args, MAX_DEPTH)) return { parsed: false, text: args };
  try {
    return { parsed: true, value: JSON.parse(args) as unknown };
  } catch {
    return { parsed: false, text: args };
  }
}

function withoutMeta(v: unknown): unknown {
  if (typeof v !== "object" || v === null || Array.isArray(v) || !Object.hasOwn(v, "_meta")) return v;
  const { _meta: _ignored, ...rest } = v as Record<string, unknown>;
  return rest;
}

/**
 * A stable text form of a call's arguments (sorted keys, no `_meta`), or `undefined` when the
 * arguments are not JSON, or too deep or too large to compare.
 * @example canonicalJson('{"b":1, "a":2}') === canonicalJson({ a: 2, b: 1 }) // true
 */
export function canonicalJson(args: unknown): string | undefined {
  const a = argsValue(args);
  return a.parsed ? canonicalValue(withoutMeta(a.value)) : undefined;
}

/**
 * A value's stable text (sorted keys; a string is a string, never read as JSON text), or
 * `undefined` when it is too deep or too large to compare: how the loop compares one field's value
 * before and after a repair.
 * @example canonicalValue({ b: 1, a: "42" }) === canonicalValue({ a: "42", b: 1 }) // true; and !== canonicalValue({ a: 42, b: 1 })
 */
export function canonicalValue(value: unknown): string | undefined {
  try {
    return stable(value, 0, { visits: 0 });
  } catch {
    return undefined;
  }
}

/**
 * The identity of a call: a SHA-256 over the tool name and the canonical arguments. Text that is
 * not JSON is compared as trimmed text; a payload too deep or too large to compare never matches another.
 * @example callKey("get_order", '{"customerId":42}') === callKey("get_order", { customerId: 42 }) // true
 */
export function callKey(tool: string, args: unknown): string {
  const a = argsValue(args);
  const bare = a.parsed ? withoutMeta(a.value) : undefined;
  const canon = a.parsed ? canonicalValue(bare) : undefined;
  let body: string;
  // The envelope's contents do not count, but whether there is one does: where the arguments are
  // the model's, a `_meta` in them is refused (reserved_key), and leaving it out is the repair.
  if (canon !== undefined) body = (a.parsed && bare !== a.value ? "json+meta:" : "json:") + canon;
  else if (typeof args === "string") body = "text:" + args.trim();
  else body = "unique:" + randomUUID();
  return createHash("sha256").update(tool).update("\u0000").update(body).digest("hex");
}
