/**
 * The SQL stores' row shape and its mapping to a {@link LedgerEntry}. Both SQL stores use the
 * same column names; PostgreSQL returns BIGINT as text and JSONB parsed, SQLite JSON as text.
 * @module
 */
import type { Effect, EffectRef, ToolErrorCode } from "../result.js";
import type { EntryState, LedgerEntry } from "./types.js";
import { _printable } from "../_printable.js";

/** Column list, in insert order. */
export const _COLUMNS = [
  "id",
  "call_id",
  "tool",
  "version",
  "principal",
  "key_display",
  "key_hash",
  "fingerprint",
  "state",
  "code",
  "effect",
  "effects",
  "result",
  "attempts",
  "claims",
  "owner",
  "created_at",
  "updated_at",
  "expires_at",
  "lease_until",
] as const;

/** A row as a driver returns it. */
export type _Row = Record<(typeof _COLUMNS)[number], unknown>;

/**
 * @internal A stored value toolgate did not write (the database was edited, or damaged), named by
 * entry and column. The ID comes from that same row: its control characters, line separators and
 * bidirectional overrides are written as escapes (`\x1b`, `\u202e`), so the message is safe to log or print.
 */
export function _corrupt(id: unknown, column: string): Error {
  const shown = _printable(String(id));
  return Object.assign(new Error(`entry ${shown}: the stored ${column} is not valid JSON (was the database changed outside toolgate?)`), { code: "E_LEDGER_CORRUPT" });
}

function effectsOf(id: unknown, v: unknown): EffectRef[] {
  let arr: unknown = v;
  if (typeof v === "string") {
    try {
      arr = JSON.parse(v);
    } catch {
      throw _corrupt(id, "effects list");
    }
  }
  if (!Array.isArray(arr)) return [];
  return arr
    .filter((e): e is { kind: string; ref: string } => typeof e === "object" && e !== null && typeof e.kind === "string" && typeof e.ref === "string")
    .map((e) => ({ kind: e.kind, ref: e.ref }));
}

const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/** Map a row to an entry. */
export function _fromRow(r: _Row): LedgerEntry {
  return {
    id: String(r.id),
    callId: String(r.call_id),
    tool: String(r.tool),
    version: String(r.version),
    principal: str(r.principal),
    key: str(r.key_display),
    keyHash: str(r.key_hash),
    fingerprint: String(r.fingerprint),
    state: r.state as EntryState,
    code: str(r.code) as ToolErrorCode | "OK" | null,
    effect: r.effect as Effect,
    effects: effectsOf(r.id, r.effects),
    result: str(r.result),
    attempts: Number(r.attempts),
    claims: Number(r.claims),
    owner: String(r.owner),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    expiresAt: Number(r.expires_at),
    leaseUntil: Number(r.lease_until),
  };
}

/** An entry's values in column order (effects as JSON text). */
export function _toValues(e: LedgerEntry): unknown[] {
  return [
    e.id,
    e.callId,
    e.tool,
    e.version,
    e.principal,
    e.key,
    e.keyHash,
    e.fingerprint,
    e.state,
    e.code,
    e.effect,
    JSON.stringify(e.effects),
    e.result,
    e.attempts,
    e.claims,
    e.owner,
    e.createdAt,
    e.updatedAt,
    e.expiresAt,
    e.leaseUntil,
  ];
}
