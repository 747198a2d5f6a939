/**
 * Canonical JSON and hashes: the fingerprint of a validated input, the scoped hash of a key,
 * and deep redaction of what the ledger stores.
 * @module
 */
import { createHash } from "node:crypto";
import type { Redactor } from "../redact.js";
import { _jsonWrittenValue } from "../json-data.js";

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const p: unknown = Object.getPrototypeOf(v);
  return p === Object.prototype || p === null;
}

/**
 * JSON with object keys sorted at every level (so `{a,b}` and `{b,a}` hash alike).
 *
 * A `Set` or `Map` (which `JSON.stringify` writes as `{}`, losing its contents) is encoded with
 * its contents in iteration order: a Set as `{"#set": [values]}`, a Map as `{"#map": [[key,
 * value], …]}`. Such a text starts with `~` and prefixes every plain object key with `.`, so it can
 * never equal the text of a value without a Set or Map (whose text is unchanged by this encoding,
 * and starts with a JSON value) nor of another value with one.
 */
export function _canonicalJson(value: unknown): string {
  let tagged = false;
  const text = JSON.stringify(value, (_k, v: unknown) => {
    if (v instanceof Set || v instanceof Map) tagged = true;
    return plain(v, "");
  });
  if (!tagged) return text ?? "null";
  return `~${JSON.stringify(value, (_k, v: unknown) => {
    if (v instanceof Set) return { "#set": [...v] };
    if (v instanceof Map) return { "#map": [...v] };
    return plain(v, ".");
  }) ?? "null"}`;
}

function plain(v: unknown, prefix: string): unknown {
  if (typeof v === "bigint") return `${v.toString()}n`;
  if (!isPlainObject(v)) return v;
  const sorted: Record<string, unknown> = {};
  // defineProperty: a "__proto__" key stays an own data property.
  for (const k of Object.keys(v).sort()) Object.defineProperty(sorted, prefix + k, { value: v[k], enumerable: true, writable: true, configurable: true });
  return sorted;
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** SHA-256 of the canonical JSON of a validated input. */
export function _fingerprint(input: unknown): string {
  return sha256(_canonicalJson(input));
}

/** The hash that scopes a key per tool and per principal. */
export function _keyHash(tool: string, principal: string | null, key: string): string {
  return sha256(JSON.stringify([tool, principal, key]));
}

/**
 * The JSON value `value` serializes to, with every string (and key) passed through the redactor.
 * It walks the value as `JSON.stringify` does — `toJSON(key)` honoured (a `Date` becomes its ISO
 * string), boxed primitives unwrapped, non-finite numbers `null`, `undefined`, functions and
 * symbols dropped (`null` in arrays) — so the stored text equals the first answer's JSON.
 * `undefined` when nothing serializes. Throws where `JSON.stringify` throws (a cycle, a `bigint`).
 */
export function _redactDeep(value: unknown, redact: Redactor): unknown {
  return walk({ "": value }, "", redact, []);
}

function walk(holder: object, key: string, redact: Redactor, stack: object[]): unknown {
  const v = _jsonWrittenValue((holder as Record<string, unknown>)[key], key);
  switch (typeof v) {
    case "string":
      return redact(v);
    case "number":
      return Number.isFinite(v) ? v : null;
    case "boolean":
      return v;
    case "bigint":
      throw new TypeError("Do not know how to serialize a BigInt");
    case "object": {
      if (v === null) return null;
      if (stack.includes(v)) throw new TypeError("Converting circular structure to JSON");
      stack.push(v);
      let out: unknown;
      if (Array.isArray(v)) {
        const arr: unknown[] = [];
        for (let i = 0; i < v.length; i++) arr.push(walk(v, String(i), redact, stack) ?? null);
        out = arr;
      } else {
        const obj: Record<string, unknown> = {};
        for (const k of Object.keys(v)) {
          const x = walk(v, k, redact, stack);
          // defineProperty: a "__proto__" key stays an own data property.
          if (x !== undefined) Object.defineProperty(obj, redact(k), { value: x, enumerable: true, writable: true, configurable: true });
        }
        out = obj;
      }
      stack.pop();
      return out;
    }
    default:
      return undefined; // undefined, a function, a symbol
  }
}
