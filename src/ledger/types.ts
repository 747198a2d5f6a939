/**
 * The ledger contract: what a store must do so writes are exactly-once across retries, replicas
 * and crashes. Three stores implement it (memory, SQLite, PostgreSQL) and pass one shared suite.
 * The gate is the only writer; operators read it through `toolgate ledger`.
 * @module
 */
import type { Effect, EffectRef, ToolErrorCode } from "../result.js";

/** Where an entry is: claimed and running (or abandoned by a crash), or settled with a result. */
export type EntryState = "in_flight" | "settled";

/**
 * One write call as the ledger holds it. Never the arguments: a fingerprint (hash) of the
 * validated input, the key (redacted), the envelope without its meta (redacted), effect refs.
 */
export interface LedgerEntry {
  /** The entry's own id (a UUID). */
  readonly id: string;
  /** The call id of the call that claimed it last (every call that claimed it finds it with {@link Ledger.get}). */
  readonly callId: string;
  readonly tool: string;
  readonly version: string;
  /** The principal's id, or `null` for an anonymous call. */
  readonly principal: string | null;
  /** The idempotency key as given (redacted, at most 256 characters), or `null` for an unkeyed call. */
  readonly key: string | null;
  /** Hash of tool, principal and key; `null` when unkeyed, expired or released (the key is free again). */
  readonly keyHash: string | null;
  /** SHA-256 of the canonical validated input. */
  readonly fingerprint: string;
  readonly state: EntryState;
  /** `"OK"` or the envelope's code once settled; `null` while in flight. */
  readonly code: ToolErrorCode | "OK" | null;
  /** `"unknown"` while in flight; the envelope's effect once settled. */
  readonly effect: Effect;
  /** Effects the tool recorded with `ctx.recordEffect`, in order. */
  readonly effects: readonly EffectRef[];
  /** The settled envelope without `meta`, as JSON text (redacted); `null` while in flight. */
  readonly result: string | null;
  /** Executions of the tool in the settling call. */
  readonly attempts: number;
  /** How many calls claimed this entry (1, plus one per takeover after a crash or unknown outcome). */
  readonly claims: number;
  /** Token of the claim that may settle it. */
  readonly owner: string;
  /** Epoch milliseconds (the ledger's clock). */
  readonly createdAt: number;
  readonly updatedAt: number;
  /** When the key stops deduplicating: a later call with it is a new request (`ttlMs` after the first claim, renewed at settlement and takeover). */
  readonly expiresAt: number;
  /** Until when the claim is presumed alive; an in-flight entry past it was abandoned (a crash). */
  readonly leaseUntil: number;
}

/** What the gate asks for before executing a write. */
export interface ClaimRequest {
  /** A fresh UUID for the entry, used when the claim creates one. */
  readonly id: string;
  /** A fresh token identifying this claim. */
  readonly owner: string;
  readonly callId: string;
  readonly tool: string;
  readonly version: string;
  readonly principal: string | null;
  /** The key's display form and scoped hash, or `undefined` for an unkeyed write (always new). */
  readonly key?: { readonly display: string; readonly hash: string };
  readonly fingerprint: string;
  /** How long the claim is presumed alive, ms. */
  readonly leaseMs: number;
  /** May this claim take over an entry whose outcome is unknown (abandoned, or settled unknown)? */
  readonly takeover: boolean;
}

/** The ledger's answer to a claim. */
export type ClaimOutcome =
  /** Go ahead. `resumed`: an earlier claim's outcome is unknown; its effects are in `entry`. */
  | { readonly status: "claimed"; readonly entry: LedgerEntry; readonly resumed: boolean }
  /** The key completed: replay `entry.result`. */
  | { readonly status: "completed"; readonly entry: LedgerEntry }
  /** The key is held by a live claim. */
  | { readonly status: "in_flight"; readonly entry: LedgerEntry; readonly retryAfterMs: number }
  /** The key was used with different arguments. */
  | { readonly status: "mismatch"; readonly entry: LedgerEntry }
  /** The key's claim was abandoned (its process died) and this call may not take it over. */
  | { readonly status: "abandoned"; readonly entry: LedgerEntry };

/** How the gate settles a claimed entry. */
export interface Settlement {
  readonly code: ToolErrorCode | "OK";
  readonly effect: Effect;
  /** The envelope without meta, JSON text, already redacted. */
  readonly result: string;
  readonly attempts: number;
  /** Free the key (nothing happened and a retry should execute). The entry stays for the record. */
  readonly releaseKey: boolean;
}

/** Filters for {@link Ledger.list}. */
export interface ListQuery {
  /** Only this tool. */
  readonly tool?: string;
  /** Most recent first, at most this many: an integer from 1 to 10,000 (anything else rejects with `E_LEDGER_QUERY`). Default 100. */
  readonly limit?: number;
}

/**
 * What {@link Ledger.prune} removes. Unresolved entries (in flight, or settled unknown) are never
 * pruned, and neither is an entry whose key still deduplicates (key held and not expired): it is
 * the only memory of that key, so removing it would let a retry run the write again.
 */
export interface PruneQuery {
  /**
   * Also remove settled, resolved entries created more than this many ms ago that hold no key
   * (unkeyed writes, or keys released for a retry). Default: only entries whose key expired.
   */
  readonly olderThanMs?: number;
}

/**
 * A durable record of write calls. All methods are atomic; `claim` is the only decision point.
 * @example
 * const gate = createGate({ tools, ledger: sqliteLedger({ path: "toolgate.db" }) });
 */
export interface Ledger {
  /** `"memory"`, `"sqlite"` or `"postgres"`. */
  readonly kind: string;
  /** Resolves once the store is open and migrated; rejects with the reason otherwise. */
  ready(): Promise<void>;
  /** Atomically claim a call (and its key, when it has one). */
  claim(request: ClaimRequest): Promise<ClaimOutcome>;
  /** Append an effect to an in-flight entry held by `owner`; durable when it resolves. */
  recordEffect(id: string, owner: string, effect: EffectRef): Promise<void>;
  /**
   * Settle an in-flight entry held by `owner`, and renew its key's lifetime to at least `ttlMs`
   * after now (the retry a CONFLICT asked for must find the outcome, not an expired key).
   * Resolves `false` when the claim was lost (taken over).
   */
  settle(id: string, owner: string, settlement: Settlement): Promise<boolean>;
  /**
   * One entry by its id or a call id, in this order: the entry with this id; else the newest entry
   * whose last claim this call made (its `callId`); else the entry most recently taken over from
   * this call — a takeover sets the entry's `callId` to its own, and the earlier call's id still
   * finds it. Every store answers alike; the gate relies on it to undo a takeover whose answer was lost.
   */
  get(idOrCallId: string): Promise<LedgerEntry | undefined>;
  /** Entries, most recent first. */
  list(query?: ListQuery): Promise<LedgerEntry[]>;
  /** Entries whose outcome is unknown: in flight (running, or abandoned by a crash) or settled unknown. Oldest first. */
  unresolved(query?: ListQuery): Promise<LedgerEntry[]>;
  /** Remove settled, resolved entries whose key expired (or, with `olderThanMs`, old ones holding no key). Resolves the count. */
  prune(query?: PruneQuery): Promise<number>;
  /** Release the store's resources. */
  close(): Promise<void>;
}

/** Options every store takes. */
export interface LedgerOptions {
  /** How long a key deduplicates, ms. Default 86,400,000 (24 h); an integer from 1 to 3,153,600,000,000 (100 years, `MAX_TTL_MS`). */
  readonly ttlMs?: number;
  /** The clock, epoch ms, floored to whole ms. Default `Date.now` (tests pass a fake one). */
  readonly now?: () => number;
}

const NOTHING_STORED = Symbol("toolgate.ledger.nothingStored");

/**
 * @internal Mark an error of a store's write that certainly stored nothing (SQLite: its
 * transaction rolled back, or never began): a claim that failed with it needs no undoing.
 */
export function _nothingStored<E>(e: E): E {
  if (typeof e === "object" && e !== null) {
    try {
      Object.defineProperty(e, NOTHING_STORED, { value: true });
    } catch {
      // a frozen error: it is undone as any other (best effort, harmless)
    }
  }
  return e;
}

/** @internal Whether {@link _nothingStored} marked `e`. */
export function _storedNothing(e: unknown): boolean {
  return typeof e === "object" && e !== null && (e as { [NOTHING_STORED]?: unknown })[NOTHING_STORED] === true;
}
