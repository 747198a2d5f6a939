/**
 * `memoryLedger()`: the contract in a Map, for tests and single-process demos. Not durable.
 * @module
 */
import type { EffectRef } from "../result.js";
import { _commonOptions, _decide, _isPrunable, _isUnresolved, _limit, _newEntry, _settledExpiry, _takenOver } from "./_decide.js";
import { _storable, _storableClaim, _storableEffect, _storableSettlement } from "./_text.js";
import type { ClaimOutcome, ClaimRequest, Ledger, LedgerEntry, LedgerOptions, ListQuery, PruneQuery, Settlement } from "./types.js";

const storableQuery = (q: ListQuery): ListQuery => (q.tool === undefined ? q : { ...q, tool: _storable(q.tool) });

/** Options of {@link memoryLedger}. */
export type MemoryLedgerOptions = LedgerOptions;

/**
 * An in-memory ledger: same semantics as the durable stores, lost when the process exits.
 * @example
 * const gate = createGate({ tools, ledger: memoryLedger() });
 */
export function memoryLedger(options: MemoryLedgerOptions = {}): Ledger {
  const { ttlMs, now } = _commonOptions("memoryLedger", options);
  const entries = new Map<string, LedgerEntry>();
  const byKey = new Map<string, string>();
  // Per call id, the entries it claimed (created or took over), and the entries taken over from
  // it, each in order: a takeover overwrites an entry's `callId`, and the earlier call's id must
  // still find it (the SQL stores' `_calls` table). Lists, since a caller may reuse a call id.
  const claimedBy = new Map<string, string[]>();
  /** Creation order, the SQL stores' tie-break (their rowid / seq) for entries created in one millisecond. */
  const created = new Map<string, number>();
  let seq = 0;
  const takenFrom = new Map<string, string[]>();
  let closed = false;
  const open = (): void => {
    if (closed) throw new Error("memoryLedger: the ledger is closed");
  };
  const put = (e: LedgerEntry): void => {
    entries.set(e.id, e);
    if (e.keyHash !== null) byKey.set(e.keyHash, e.id);
  };
  const note = (index: Map<string, string[]>, callId: string, id: string): void => {
    const ids = index.get(callId);
    if (ids === undefined) index.set(callId, [id]);
    else ids.push(id);
  };
  /** The newest entry whose last claim this call made, as the SQL stores order them: by creation time, then creation order. */
  const byCallId = (callId: string): LedgerEntry | undefined => {
    let newest: LedgerEntry | undefined;
    const later = (a: LedgerEntry, b: LedgerEntry) => a.createdAt > b.createdAt || (a.createdAt === b.createdAt && created.get(a.id)! > created.get(b.id)!);
    for (const id of claimedBy.get(callId) ?? []) {
      const e = entries.get(id);
      if (e !== undefined && e.callId === callId && (newest === undefined || later(e, newest))) newest = e;
    }
    return newest;
  };
  /** The entry most recently taken over from this call (pruned entries are gone). */
  const byEarlierCallId = (callId: string): LedgerEntry | undefined => {
    const ids = takenFrom.get(callId) ?? [];
    for (let i = ids.length - 1; i >= 0; i--) {
      const e = entries.get(ids[i]!);
      if (e !== undefined) return e;
    }
    return undefined;
  };
  /** After a prune: forget removed entries in the indexes. */
  const forgetPruned = (): void => {
    for (const id of created.keys()) if (!entries.has(id)) created.delete(id);
    for (const index of [claimedBy, takenFrom]) {
      for (const [callId, ids] of index) {
        const kept = ids.filter((id) => entries.has(id));
        if (kept.length === 0) index.delete(callId);
        else if (kept.length !== ids.length) index.set(callId, kept);
      }
    }
  };
  const held = (id: string, owner: string): LedgerEntry | undefined => {
    const e = entries.get(id);
    return e !== undefined && e.owner === owner && e.state === "in_flight" ? e : undefined;
  };
  const copy = (e: LedgerEntry): LedgerEntry => ({ ...e, effects: e.effects.map((x) => ({ ...x })) });

  return {
    kind: "memory",
    ready: async () => open(),
    async claim(request: ClaimRequest): Promise<ClaimOutcome> {
      open();
      const req = _storableClaim(request);
      const t = now();
      const currentId = req.key === undefined ? undefined : byKey.get(req.key.hash);
      const current = currentId === undefined ? undefined : entries.get(currentId);
      const d = _decide(current, req, t);
      if (d.do === "answer") return { ...d.outcome, entry: copy(d.outcome.entry) } as ClaimOutcome;
      if (d.do === "takeover") {
        const e = _takenOver(d.entry, req, t, ttlMs);
        put(e);
        note(takenFrom, d.entry.callId, e.id); // the call id it overwrote still finds the entry
        note(claimedBy, e.callId, e.id);
        return { status: "claimed", entry: copy(e), resumed: true };
      }
      if (d.expired !== undefined && d.expired.keyHash !== null) {
        byKey.delete(d.expired.keyHash);
        entries.set(d.expired.id, { ...d.expired, keyHash: null });
      }
      const e = _newEntry(req, t, ttlMs);
      put(e);
      created.set(e.id, ++seq);
      note(claimedBy, e.callId, e.id);
      return { status: "claimed", entry: copy(e), resumed: false };
    },
    async recordEffect(id: string, owner: string, ref: EffectRef): Promise<void> {
      open();
      const effect = _storableEffect(ref);
      const e = held(id, owner);
      if (e === undefined) throw new Error("memoryLedger: the claim is no longer held");
      entries.set(id, { ...e, effects: [...e.effects, { kind: effect.kind, ref: effect.ref }], updatedAt: now() });
    },
    async settle(id: string, owner: string, settlement: Settlement): Promise<boolean> {
      open();
      const s = _storableSettlement(settlement);
      const e = held(id, owner);
      if (e === undefined) return false;
      if (s.releaseKey && e.keyHash !== null) byKey.delete(e.keyHash);
      const t = now();
      entries.set(id, {
        ...e,
        state: "settled",
        expiresAt: _settledExpiry(e.expiresAt, t, ttlMs),
        code: s.code,
        effect: s.effect,
        result: s.result,
        attempts: s.attempts,
        keyHash: s.releaseKey ? null : e.keyHash,
        updatedAt: t,
      });
      return true;
    },
    async get(idOrCallId: string): Promise<LedgerEntry | undefined> {
      open();
      const k = _storable(idOrCallId);
      const e = entries.get(idOrCallId) ?? byCallId(k) ?? byEarlierCallId(k);
      return e === undefined ? undefined : copy(e);
    },
    async list(query: ListQuery = {}): Promise<LedgerEntry[]> {
      open();
      const q = storableQuery(query);
      const all = [...entries.values()].filter((e) => q.tool === undefined || e.tool === q.tool);
      return all.reverse().sort((a, b) => b.createdAt - a.createdAt).slice(0, _limit(q.limit)).map(copy);
    },
    async unresolved(query: ListQuery = {}): Promise<LedgerEntry[]> {
      open();
      const q = storableQuery(query);
      const all = [...entries.values()].filter((e) => _isUnresolved(e) && (q.tool === undefined || e.tool === q.tool));
      return all.sort((a, b) => a.createdAt - b.createdAt).slice(0, _limit(q.limit)).map(copy);
    },
    async prune(q: PruneQuery = {}): Promise<number> {
      open();
      const t = now();
      let n = 0;
      for (const e of [...entries.values()]) {
        if (!_isPrunable(e, t, q)) continue;
        entries.delete(e.id);
        if (e.keyHash !== null && byKey.get(e.keyHash) === e.id) byKey.delete(e.keyHash);
        n++;
      }
      if (n > 0) forgetPruned();
      return n;
    },
    async close(): Promise<void> {
      closed = true;
    },
  };
}
