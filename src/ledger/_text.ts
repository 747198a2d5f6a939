/**
 * What every store does to the text it keeps, so the three stores hold the same thing and no
 * string can make one refuse a write: PostgreSQL cannot store U+0000 in `text` nor `\u0000` or a
 * lone surrogate in `jsonb`, and UTF-8 drivers turn a lone surrogate into U+FFFD on their own.
 * Display fields (call id, tool, version, principal, the key's display form, effect kind and ref,
 * the stored envelope) get U+0000 and lone surrogates replaced with U+FFFD. Identity fields (entry
 * id, owner, key hash, fingerprint) are never rewritten: the gate makes them hex or UUIDs from the
 * raw values (the key hash from the raw key), so two keys that differ only there stay two keys.
 * @module
 */
import type { EffectRef } from "../result.js";
import type { ClaimRequest, Settlement } from "./types.js";

/** `s` with U+0000 and lone surrogates replaced with U+FFFD (the same string when it has none). */
export function _storable(s: string): string {
  const w = s.isWellFormed() ? s : s.toWellFormed();
  return w.includes("\u0000") ? w.replaceAll("\u0000", "\uFFFD") : w;
}

const opt = (s: string | null): string | null => (s === null ? null : _storable(s));

/** A claim's display fields made storable. */
export function _storableClaim(req: ClaimRequest): ClaimRequest {
  const out = {
    ...req,
    callId: _storable(req.callId),
    tool: _storable(req.tool),
    version: _storable(req.version),
    principal: opt(req.principal),
  };
  return req.key === undefined ? out : { ...out, key: { display: _storable(req.key.display), hash: req.key.hash } };
}

/** An effect ref made storable (only `kind` and `ref` are kept). */
export function _storableEffect(e: EffectRef): EffectRef {
  return { kind: _storable(e.kind), ref: _storable(e.ref) };
}

/** A settlement's envelope text made storable (JSON text never holds a raw U+0000 or lone surrogate). */
export function _storableSettlement(s: Settlement): Settlement {
  const result = _storable(s.result);
  return result === s.result ? s : { ...s, result };
}
