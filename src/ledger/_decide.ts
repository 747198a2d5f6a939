/**
 * The claim decision every store shares, so memory, SQLite and PostgreSQL answer alike: given
 * the entry currently holding a key (read under the store's lock), what the claim does.
 * @module
 */
import { ToolgateConfigError } from "../errors.js";
import type { ClaimOutcome, ClaimRequest, LedgerEntry, LedgerOptions, PruneQuery } from "./types.js";

/**
 * Default key lifetime: 24 h.
 * @example const ledger = sqliteLedger({ path: "toolgate.db", ttlMs: DEFAULT_TTL_MS * 7 }); // a week
 */
export const DEFAULT_TTL_MS = 86_400_000;

/**
 * The longest key lifetime the stores accept: 100 years (3,153,600,000,000 ms), so that
 * `now + ttlMs` stays an exact integer in JavaScript and fits PostgreSQL's BIGINT.
 * @example const ledger = memoryLedger({ ttlMs: MAX_TTL_MS }); // keys never expire in practice
 */
export const MAX_TTL_MS = 100 * 365 * DEFAULT_TTL_MS;

/** What a claim does to the store. */
export type _Decision =
  /** Insert a new entry; first free the key of `expired` (if any) so it stays on record. */
  | { readonly do: "insert"; readonly expired: LedgerEntry | undefined }
  /** Take over `entry` (its earlier outcome is unknown). */
  | { readonly do: "takeover"; readonly entry: LedgerEntry }
  /** Change nothing, answer this. */
  | { readonly do: "answer"; readonly outcome: ClaimOutcome };

/** Decide a claim against the entry currently holding its key. */
export function _decide(current: LedgerEntry | undefined, req: ClaimRequest, now: number): _Decision {
  if (current === undefined) return { do: "insert", expired: undefined };
  const live = current.state === "in_flight" && current.leaseUntil > now;
  if (current.expiresAt <= now) {
    // An expired key is a new request, but not while its claim is still running (the key's
    // lifetime may be shorter than the lease: wait for it, whatever the arguments), nor while the
    // outcome is unknown — crashed in flight, or settled with effect "unknown": a new execution
    // would repeat an effect nobody has checked. Such a key stays held, and its claim goes on as if
    // it had not expired (take over and check state, or answer FAILED unknown).
    if (live) return inFlight(current, now);
    if (!_isUnresolved(current)) return { do: "insert", expired: current };
  }
  if (current.fingerprint !== req.fingerprint) return { do: "answer", outcome: { status: "mismatch", entry: current } };
  if (current.state === "settled") {
    if (current.effect === "unknown" && req.takeover) return { do: "takeover", entry: current };
    return { do: "answer", outcome: { status: "completed", entry: current } };
  }
  if (live) return inFlight(current, now);
  if (req.takeover) return { do: "takeover", entry: current };
  return { do: "answer", outcome: { status: "abandoned", entry: current } };
}

function inFlight(current: LedgerEntry, now: number): _Decision {
  const retryAfterMs = Math.min(1_000, Math.max(50, current.leaseUntil - now));
  return { do: "answer", outcome: { status: "in_flight", entry: current, retryAfterMs } };
}

/** The entry a claim inserts. */
export function _newEntry(req: ClaimRequest, now: number, ttlMs: number): LedgerEntry {
  return {
    id: req.id,
    callId: req.callId,
    tool: req.tool,
    version: req.version,
    principal: req.principal,
    key: req.key?.display ?? null,
    keyHash: req.key?.hash ?? null,
    fingerprint: req.fingerprint,
    state: "in_flight",
    code: null,
    effect: "unknown",
    effects: [],
    result: null,
    attempts: 0,
    claims: 1,
    owner: req.owner,
    createdAt: now,
    updatedAt: now,
    expiresAt: now + ttlMs,
    leaseUntil: now + req.leaseMs,
  };
}

/**
 * A settled key's expiry: `ttlMs` after its settlement (never earlier than it was). A key counts
 * from its first claim while it runs, and a claim holds its key past that (a live lease); were the
 * count not renewed at settlement, a call that outlived `ttlMs` would settle an outcome already
 * expired, and the retry its CONFLICT ("still running; wait and retry") asked for would run the
 * write a second time. The SQL stores write the same rule in their `settle` statements.
 */
export function _settledExpiry(expiresAt: number, settledAt: number, ttlMs: number): number {
  return Math.max(expiresAt, settledAt + ttlMs);
}

/**
 * The entry after a takeover: in flight again under the new owner, its effects kept, its key's
 * lifetime renewed (a takeover of an expired key must not settle an outcome that a retry a moment
 * later would find expired and run again).
 */
export function _takenOver(e: LedgerEntry, req: ClaimRequest, now: number, ttlMs: number): LedgerEntry {
  return {
    ...e,
    callId: req.callId,
    version: req.version,
    owner: req.owner,
    state: "in_flight",
    code: null,
    effect: "unknown",
    result: null,
    attempts: 0,
    claims: e.claims + 1,
    updatedAt: now,
    expiresAt: Math.max(e.expiresAt, now + ttlMs),
    leaseUntil: now + req.leaseMs,
  };
}

/** Check the options every store takes; returns the ttl and clock. */
export function _commonOptions(store: string, o: LedgerOptions): { ttlMs: number; now: () => number } {
  const ttlMs = o.ttlMs ?? DEFAULT_TTL_MS;
  if (typeof ttlMs !== "number" || !Number.isInteger(ttlMs) || ttlMs < 1 || ttlMs > MAX_TTL_MS) {
    throw new ToolgateConfigError("E_LEDGER_OPTIONS", `${store}: ttlMs must be an integer from 1 to ${MAX_TTL_MS} (ms, 100 years)`);
  }
  const clock = o.now;
  if (clock !== undefined && typeof clock !== "function") {
    throw new ToolgateConfigError("E_LEDGER_OPTIONS", `${store}: now must be a function returning epoch ms`);
  }
  // Whole milliseconds: a clock such as `performance.timeOrigin + performance.now()` has a fraction
  // that an INTEGER or BIGINT column cannot hold.
  return { ttlMs, now: clock === undefined ? Date.now : () => Math.floor(clock()) };
}

/** Default and cap for list queries. */
/** The most entries one list call returns. */
export const MAX_LIST = 10_000;

export function _limit(limit: number | undefined): number {
  if (limit === undefined) return 100;
  if (Number.isInteger(limit) && limit > 0 && limit <= MAX_LIST) return limit;
  throw new ToolgateConfigError("E_LEDGER_QUERY", `ledger list: limit must be an integer from 1 to ${MAX_LIST.toLocaleString("en")} (got ${String(limit)})`);
}

/** True when an entry's outcome is unknown. */
export function _isUnresolved(e: LedgerEntry): boolean {
  return e.state === "in_flight" || e.effect === "unknown";
}

/**
 * May `prune` remove this entry? Only a settled, resolved one whose key no longer deduplicates:
 * expired, or (with `olderThanMs`) old and holding no key (unkeyed, or released). An entry
 * holding a live key is the only memory of that key: removing it would let a retry run again.
 * The SQL stores say the same in their DELETE (see `_PRUNE_WHERE`).
 */
export function _isPrunable(e: LedgerEntry, now: number, q: PruneQuery): boolean {
  if (_isUnresolved(e)) return false;
  if (e.expiresAt <= now) return true;
  return q.olderThanMs !== undefined && e.keyHash === null && e.createdAt <= now - q.olderThanMs;
}

/** The SQL form of {@link _isPrunable}; parameters: now, then the `olderThanMs` cut-off (or the smallest safe integer). */
export const _PRUNE_WHERE = (p1: string, p2: string): string =>
  `state = 'settled' AND effect <> 'unknown' AND (expires_at <= ${p1} OR (key_hash IS NULL AND created_at <= ${p2}))`;
