/**
 * Canonical JSON and hashes: the fingerprint of a validated input, the scoped hash of a key,
 * and deep redaction of what the ledger stores.
 * @module
 */
import { createHash } from "node:crypto";
import type { Redactor } from "../redact.js";

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const p: unknown = Object.getPrototypeOf(v);
  return p === Object.prototype || p === null;
}

/** JSON with object keys sorted at every level (so `{a,b}` and `{b,a}` hash alike). */
export function _canonicalJson(value: unknown): string {
  const text = JSON.stringify(value, (_k, v: unknown) => {
    if (typeof v === "bigint") return `${v.toString()}n`;
    if (!isPlainObject(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) sorted[k] = v[k];
    return sorted;
  });
  return text ?? "null";
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

/** A copy of a JSON value with every string (and key) passed through the redactor. */
export function _redactDeep(value: unknown, redact: Redactor): unknown {
  if (typeof value === "string") return redact(value);
  if (Array.isArray(value)) return value.map((v: unknown) => _redactDeep(v, redact));
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined) continue;
      Object.defineProperty(out, redact(k), { value: _redactDeep(v, redact), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return value;
}
