/**
 * The ledger contract suite: the same behaviour, through a real gate, for every store. Each test
 * gets a fresh ledger from `make` (its own file, table or map) on a fake clock.
 */
import { describe, it, expect, afterEach } from "vitest";
import { z } from "zod";
import { createGate, defineTool, transient, type CallRecord, type ToolResult } from "../../src/index.js";
import type { Ledger } from "../../src/ledger/index.js";
import { deferred, fakeBank, fakeClock, payTool, Reset } from "./_fixtures.js";

export type MakeLedger = (opts: { now: () => number; ttlMs?: number }) => Promise<Ledger>;

const body = (r: ToolResult) => {
  const { meta: _m, ...rest } = r;
  return JSON.stringify(rest);
};

export function ledgerContract(store: string, make: MakeLedger): void {
  describe(`ledger contract: ${store}`, () => {
    const open: Ledger[] = [];
    const setup = async (ttlMs?: number) => {
      const clock = fakeClock();
      const ledger = await make({ now: clock.now, ...(ttlMs !== undefined ? { ttlMs } : {}) });
      open.push(ledger);
      return { clock, ledger };
    };
    afterEach(async () => {
      await Promise.all(open.splice(0).map((l) => l.close()));
    });

    it("replays a completed key byte-for-byte without running the tool", async () => {
      const { ledger } = await setup();
      const bank = fakeBank();
      const records: CallRecord[] = [];
      const pay = payTool(async (i) => ({ paymentId: bank.pay(i.orderId, undefined, false), orderId: i.orderId }));
      const gate = createGate({ tools: [pay], ledger, onCall: (r) => void records.push(r) });
      const first = await gate.call("pay", '{"orderId":"o_1","amountCents":500}', { idempotencyKey: "k1" });
      const again = await gate.call("pay", { amountCents: 500, orderId: "o_1" }, { idempotencyKey: "k1" });
      expect(first.ok).toBe(true);
      expect(body(again)).toBe(body(first));
      expect(again.meta).toMatchObject({ replayed: true, attempts: 0, tool: "pay", version: "1.0.0" });
      expect(first.meta.replayed).toBeUndefined();
      expect(records.map((r) => r.replayed)).toEqual([false, true]);
      expect(bank.applied).toHaveLength(1);
      const [entry] = await ledger.list();
      expect(entry).toMatchObject({ state: "settled", code: "OK", effect: "applied", key: "k1", tool: "pay", attempts: 1 });
    });

    it("replays a stored failure without running the tool", async () => {
      const { ledger } = await setup();
      let runs = 0;
      const { reject } = await import("../../src/index.js");
      const pay = payTool(async () => {
        runs++;
        throw reject("card declined");
      });
      const gate = createGate({ tools: [pay], ledger });
      const a = await gate.call("pay", { orderId: "o_1", amountCents: 5 }, { idempotencyKey: "k" });
      const b = await gate.call("pay", { orderId: "o_1", amountCents: 5 }, { idempotencyKey: "k" });
      expect(a).toMatchObject({ ok: false, code: "REJECTED", message: "card declined", effect: "none" });
      expect(body(b)).toBe(body(a));
      expect(b.meta.replayed).toBe(true);
      expect(runs).toBe(1);
    });

    it("releases the key of a DENIED call (effect none): after the fix, the same key runs", async () => {
      const { ledger } = await setup();
      let runs = 0;
      const { denied } = await import("../../src/index.js");
      const pay = payTool(async (i) => {
        runs++;
        if (runs === 1) throw denied("credential expired");
        return { paymentId: "p1", orderId: i.orderId };
      });
      const gate = createGate({ tools: [pay], ledger });
      const a = await gate.call("pay", { orderId: "o_1", amountCents: 5 }, { idempotencyKey: "k" });
      expect(a).toMatchObject({ ok: false, code: "DENIED", effect: "none" });
      const b = await gate.call("pay", { orderId: "o_1", amountCents: 5 }, { idempotencyKey: "k" });
      expect(b).toMatchObject({ ok: true, data: { paymentId: "p1" } });
      expect(b.meta.replayed).toBeUndefined();
      expect(runs).toBe(2);
    });

    it("answers CONFLICT (retryable, retryAfterMs) while the key is in flight, and runs nothing", async () => {
      const { ledger } = await setup();
      const gateOpen = deferred();
      let runs = 0;
      const pay = payTool(async (i) => {
        runs++;
        await gateOpen.promise;
        return { paymentId: "p1", orderId: i.orderId };
      });
      const gate = createGate({ tools: [pay], ledger });
      const first = gate.call("pay", { orderId: "o_1", amountCents: 5 }, { idempotencyKey: "k" });
      await waitFor(() => runs === 1);
      const second = await gate.call("pay", { orderId: "o_1", amountCents: 5 }, { idempotencyKey: "k" });
      expect(second).toMatchObject({ ok: false, code: "CONFLICT", retryable: true, effect: "unknown" });
      expect(second.ok === false && second.retryAfterMs !== undefined && second.retryAfterMs > 0).toBe(true);
      gateOpen.resolve();
      expect((await first).ok).toBe(true);
      expect(runs).toBe(1);
    });

    it("answers CONFLICT (not retryable, 0 effects) when the key is reused with other arguments", async () => {
      const { ledger } = await setup();
      const bank = fakeBank();
      const pay = payTool(async (i) => ({ paymentId: bank.pay(i.orderId, undefined, false), orderId: i.orderId }));
      const gate = createGate({ tools: [pay], ledger });
      await gate.call("pay", { orderId: "o_1", amountCents: 5 }, { idempotencyKey: "k" });
      const other = await gate.call("pay", { orderId: "o_2", amountCents: 5 }, { idempotencyKey: "k" });
      expect(other).toMatchObject({ ok: false, code: "CONFLICT", retryable: false, effect: "none" });
      expect(bank.countFor("o_2")).toBe(0);
      expect(await ledger.list()).toHaveLength(1);
    });

    it("get by call id answers the newest entry, also when two share a timestamp", async () => {
      const { ledger } = await setup();
      const req = (id: string, key: string) => ({ id, owner: "o", callId: "same-call", tool: "t", version: "1", principal: null, fingerprint: "f", leaseMs: 10_000, takeover: false, key: { display: key, hash: `h-${key}` } });
      const first = crypto.randomUUID();
      const second = crypto.randomUUID();
      await ledger.claim(req(first, "k1"));
      await ledger.claim(req(second, "k2"));
      expect((await ledger.get("same-call"))?.id).toBe(second);
      expect((await ledger.get(first))?.id).toBe(first);
    });

    it("get by call id finds the entry that call claimed, also after a later call took it over", async () => {
      const { ledger, clock } = await setup();
      const req = { id: crypto.randomUUID(), owner: "o1", callId: "call-1", tool: "t", version: "1", principal: null, fingerprint: "f", leaseMs: 100, takeover: true, key: { display: "k", hash: "h" } };
      await ledger.claim(req);
      clock.advance(200); // the first claim's lease ran out (its process died)
      const taken = await ledger.claim({ ...req, id: crypto.randomUUID(), owner: "o2", callId: "call-2" });
      expect(taken).toMatchObject({ status: "claimed", resumed: true, entry: { id: req.id, owner: "o2", callId: "call-2", claims: 2 } });
      expect(await ledger.get("call-1")).toMatchObject({ id: req.id, callId: "call-2", claims: 2 });
      expect(await ledger.get("call-2")).toMatchObject({ id: req.id });
      expect(await ledger.get(req.id)).toMatchObject({ id: req.id, callId: "call-2" });
      // A later claim under the same call id (a caller reusing ids) is the one found, until pruned.
      const { key: _key, ...unkeyed } = req;
      const later = { ...unkeyed, id: crypto.randomUUID(), owner: "o3" };
      await ledger.claim(later);
      expect((await ledger.get("call-1"))?.id).toBe(later.id);
      expect(await ledger.settle(later.id, "o3", { code: "OK", effect: "applied", result: "{}", attempts: 1, releaseKey: false })).toBe(true);
      expect(await ledger.prune({ olderThanMs: 0 })).toBe(1); // the unkeyed, settled one; the in-flight one stays
      expect((await ledger.get("call-1"))?.id).toBe(req.id);
      expect(await ledger.get("call-3")).toBeUndefined();
    });

    it("get by call id breaks a creation-time tie by creation order, a takeover's entry included", async () => {
      const { ledger, clock } = await setup();
      const base = { tool: "t", version: "1", principal: null, fingerprint: "f", takeover: true };
      const e1 = crypto.randomUUID();
      const e2 = crypto.randomUUID();
      await ledger.claim({ ...base, id: e1, owner: "o1", callId: "y", leaseMs: 10, key: { display: "k", hash: "h1" } });
      await ledger.claim({ ...base, id: e2, owner: "o2", callId: "x", leaseMs: 10 }); // same millisecond, created after e1
      clock.advance(20); // e1's lease ran out
      const taken = await ledger.claim({ ...base, id: crypto.randomUUID(), owner: "o3", callId: "x", leaseMs: 1_000, key: { display: "k", hash: "h1" } });
      expect(taken).toMatchObject({ status: "claimed", resumed: true, entry: { id: e1 } });
      // Both were last claimed by call x and created in one millisecond: the one created later answers.
      expect((await ledger.get("x"))?.id).toBe(e2);
    });

    it("a takeover whose answer is lost goes back to the earlier unknown effect: the next call takes it over at once and checks state", async () => {
      const { ledger } = await setup();
      const bank = fakeBank();
      let lose = false;
      let reconciles = 0;
      // The store commits the claim, then its answer is lost (a dropped connection).
      const losing: Ledger = Object.assign(Object.create(ledger) as Ledger, {
        claim: async (r: Parameters<Ledger["claim"]>[0]) => {
          const o = await ledger.claim(r);
          if (lose) throw new Error("connection reset after commit");
          return o;
        },
      });
      const pay = payTool(
        async (i) => {
          bank.pay(i.orderId, undefined, false);
          throw new Reset("response lost after commit");
        },
        { reconcile: async () => (reconciles++, { status: "unknown" }) },
      );
      const errors: unknown[] = [];
      const gate = createGate({ tools: [pay], ledger: losing, retry: { attempts: 1 }, onHookError: (_k, e) => void errors.push(e) });
      const args = { orderId: "o_1", amountCents: 5 };
      expect(await gate.call("pay", args, { idempotencyKey: "k" })).toMatchObject({ ok: false, code: "FAILED", effect: "unknown" });
      lose = true;
      expect(await gate.call("pay", args, { idempotencyKey: "k", callId: "lost" })).toMatchObject({ ok: false, code: "RETRYABLE", effect: "none", retryAfterMs: 1_000 });
      lose = false;
      expect(errors).toHaveLength(1);
      // Back to what the first call left (not released: its effect is unknown), under the lost call's id.
      const [e] = await ledger.unresolved();
      expect(e).toMatchObject({ state: "settled", effect: "unknown", code: "FAILED", callId: "lost", claims: 2 });
      expect(e!.keyHash).not.toBeNull();
      // No lease to wait out: the retry takes it over now and checks state; the write does not run again.
      const retry = await gate.call("pay", args, { idempotencyKey: "k" });
      expect(retry).toMatchObject({ ok: false, code: "FAILED", effect: "unknown" });
      expect(retry.meta.attempts).toBe(0);
      expect([bank.countFor("o_1"), reconciles]).toEqual([1, 2]);
    });

    it("a lost claim answer never settles an entry another call holds under the same call id", async () => {
      const { ledger } = await setup();
      const other = { id: crypto.randomUUID(), owner: "other", callId: "shared", tool: "pay", version: "1.0.0", principal: null, fingerprint: "f", leaseMs: 60_000, takeover: false, key: { display: "x", hash: "h-x" } };
      await ledger.claim(other);
      // This store fails before it writes anything; a call under the same call id looks for its claim.
      const down: Ledger = Object.assign(Object.create(ledger) as Ledger, { claim: async () => Promise.reject(new Error("connection refused")) });
      const pay = payTool(async (i) => ({ paymentId: "p", orderId: i.orderId }), { reconcile: async () => ({ status: "none" }) });
      const gate = createGate({ tools: [pay], ledger: down, onHookError: () => {} });
      expect(await gate.call("pay", { orderId: "o_1", amountCents: 5 }, { idempotencyKey: "k", callId: "shared" })).toMatchObject({ ok: false, code: "RETRYABLE", effect: "none" });
      expect(await ledger.get("shared")).toMatchObject({ id: other.id, owner: "other", state: "in_flight", keyHash: "h-x" });
    });

    it("list and unresolved reject a limit outside 1-10,000 (no silent default)", async () => {
      const { ledger } = await setup();
      for (const limit of [0, -1, 1.5, 10_001, Number.NaN]) {
        await expect(ledger.list({ limit })).rejects.toMatchObject({ code: "E_LEDGER_QUERY" });
        await expect(ledger.unresolved({ limit })).rejects.toMatchObject({ code: "E_LEDGER_QUERY" });
      }
      expect(await ledger.list({ limit: 10_000 })).toEqual([]);
    });

    it("stores nothing when validation fails", async () => {
      const { ledger } = await setup();
      const pay = payTool(async (i) => ({ paymentId: "p", orderId: i.orderId }));
      const gate = createGate({ tools: [pay], ledger });
      const r = await gate.call("pay", { orderId: "", amountCents: -1 }, { idempotencyKey: "k" });
      expect(r).toMatchObject({ ok: false, code: "INVALID_INPUT" });
      expect(await ledger.list()).toEqual([]);
      const ok = await gate.call("pay", { orderId: "o", amountCents: 1 }, { idempotencyKey: "k" });
      expect(ok.ok).toBe(true); // the key was never taken
    });

    it("treats an expired key as a new request", async () => {
      const { ledger, clock } = await setup(60_000);
      const bank = fakeBank();
      const pay = payTool(async (i) => ({ paymentId: bank.pay(i.orderId, undefined, false), orderId: i.orderId }));
      const gate = createGate({ tools: [pay], ledger });
      await gate.call("pay", { orderId: "o_1", amountCents: 5 }, { idempotencyKey: "k" });
      clock.advance(59_999);
      expect((await gate.call("pay", { orderId: "o_1", amountCents: 5 }, { idempotencyKey: "k" })).meta.replayed).toBe(true);
      clock.advance(1);
      const later = await gate.call("pay", { orderId: "o_1", amountCents: 5 }, { idempotencyKey: "k" });
      expect(later.ok && later.meta.replayed === undefined && later.meta.attempts === 1).toBe(true);
      expect(bank.countFor("o_1")).toBe(2);
      const entries = await ledger.list();
      expect(entries).toHaveLength(2);
      expect(entries.filter((e) => e.keyHash !== null)).toHaveLength(1);
      expect(await ledger.prune()).toBe(1); // the expired one
      expect(await ledger.list()).toHaveLength(1);
    });

    it("keeps a running claim in flight after its key expires (ttlMs shorter than the lease): one execution", async () => {
      const { ledger, clock } = await setup(5_000); // payTool's lease (timeoutMs 2 s) is far longer than the 6 s below
      const bank = fakeBank();
      const release = deferred();
      let runs = 0;
      const pay = payTool(async (i) => {
        runs++;
        await release.promise;
        return { paymentId: bank.pay(i.orderId, undefined, false), orderId: i.orderId };
      });
      const gate = createGate({ tools: [pay], ledger });
      const first = gate.call("pay", { orderId: "o_1", amountCents: 5 }, { idempotencyKey: "k" });
      await waitFor(() => runs === 1);
      clock.advance(6_000); // the key expired; the first call is still running, well within its lease
      const retry = await gate.call("pay", { orderId: "o_1", amountCents: 5 }, { idempotencyKey: "k" });
      expect(retry).toMatchObject({ ok: false, code: "CONFLICT", retryable: true, effect: "unknown" });
      const other = await gate.call("pay", { orderId: "o_2", amountCents: 5 }, { idempotencyKey: "k" });
      expect(other).toMatchObject({ ok: false, code: "CONFLICT", retryable: true }); // still held: wait, do not decide anew
      expect(runs).toBe(1);
      expect(await ledger.list()).toHaveLength(1);
      release.resolve();
      expect((await first).ok).toBe(true);
      expect(bank.applied).toHaveLength(1);
      // The retry its CONFLICT asked for ("wait and retry") replays the outcome: the settlement
      // renewed the key's lifetime, ttlMs from then (it had run out during the call).
      clock.advance(1_000);
      const waited = await gate.call("pay", { orderId: "o_1", amountCents: 5 }, { idempotencyKey: "k" });
      expect(waited).toMatchObject({ ok: true, meta: { replayed: true } });
      expect(runs).toBe(1);
      // ttlMs after the settlement: now the key is a new request again.
      clock.advance(4_000);
      const later = await gate.call("pay", { orderId: "o_1", amountCents: 5 }, { idempotencyKey: "k" });
      expect(later).toMatchObject({ ok: true, meta: { attempts: 1 } });
      expect(runs).toBe(2);
    });

    it("a key lives ttlMs after its settlement, not only after its first claim: a retry just after a long call replays it", async () => {
      const { ledger, clock } = await setup(5_000); // within payTool's lease, as above
      const bank = fakeBank();
      const release = deferred();
      let runs = 0;
      const pay = payTool(async (i) => {
        runs++;
        if (runs === 1) await release.promise;
        return { paymentId: bank.pay(i.orderId, undefined, false), orderId: i.orderId };
      });
      const gate = createGate({ tools: [pay], ledger });
      const first = gate.call("pay", { orderId: "o_1", amountCents: 5 }, { idempotencyKey: "k" });
      await waitFor(() => runs === 1);
      clock.advance(4_500); // 0.5 s before the key would expire, counted from its claim
      const during = await gate.call("pay", { orderId: "o_1", amountCents: 5 }, { idempotencyKey: "k" });
      expect(during).toMatchObject({ ok: false, code: "CONFLICT", retryable: true });
      release.resolve();
      expect((await first).ok).toBe(true);
      clock.advance(during.ok ? 0 : (during.retryAfterMs ?? 0)); // wait as told: past the claim's 5 s
      const waited = await gate.call("pay", { orderId: "o_1", amountCents: 5 }, { idempotencyKey: "k" });
      expect(waited).toMatchObject({ ok: true, meta: { replayed: true } });
      expect(runs).toBe(1);
      const [entry] = await ledger.list();
      expect(entry).toMatchObject({ state: "settled" });
      expect(entry!.expiresAt).toBe(entry!.updatedAt + 5_000);
      expect(bank.applied).toHaveLength(1);
    });

    it("an expired key whose claim was abandoned (past its lease) stays held: its outcome is unknown, so it is taken over, never run beside", async () => {
      const { ledger, clock } = await setup(5_000);
      const req = { id: crypto.randomUUID(), owner: "o1", callId: "c1", tool: "t", version: "1", principal: null, fingerprint: "f", leaseMs: 10_000, takeover: false, key: { display: "k", hash: "h" } };
      await ledger.claim(req);
      clock.advance(6_000);
      expect(await ledger.claim({ ...req, id: crypto.randomUUID(), owner: "o2" })).toMatchObject({ status: "in_flight" });
      clock.advance(5_000); // the key expired and the lease ran out: the first process died
      expect(await ledger.claim({ ...req, id: crypto.randomUUID(), owner: "o3", callId: "c3" })).toMatchObject({ status: "abandoned" });
      const next = await ledger.claim({ ...req, id: crypto.randomUUID(), owner: "o4", callId: "c4", takeover: true });
      expect(next).toMatchObject({ status: "claimed", resumed: true, entry: { owner: "o4", claims: 2 } });
      // The takeover renewed the key's lifetime: its outcome, once settled, is replayed, not run again.
      expect(next.status === "claimed" && next.entry.expiresAt).toBeGreaterThan(clock.now());
      expect((await ledger.unresolved()).map((e) => e.owner)).toEqual(["o4"]);
    });

    it("an expired key settled with effect unknown stays held: a late retry checks state first (never a second execution)", async () => {
      const { ledger, clock } = await setup(60_000);
      const bank = fakeBank();
      let reconciles = 0;
      let lose = true;
      const pay = payTool(
        async (i) => {
          const id = bank.pay(i.orderId, undefined, false);
          if (lose) throw new Reset("response lost");
          return { paymentId: id, orderId: i.orderId };
        },
        { reconcile: async (i) => (reconciles++, reconciles === 1 ? { status: "unknown" } : { status: "applied", output: { paymentId: bank.applied.find((p) => p.orderId === i.orderId)!.id, orderId: i.orderId } }) },
      );
      const gate = createGate({ tools: [pay], ledger, retry: { attempts: 1 } });
      const first = await gate.call("pay", { orderId: "o_1", amountCents: 5 }, { idempotencyKey: "late" });
      expect(first).toMatchObject({ ok: false, code: "FAILED", effect: "unknown" });
      lose = false;
      clock.advance(120_000); // the key's lifetime passed
      const late = await gate.call("pay", { orderId: "o_1", amountCents: 5 }, { idempotencyKey: "late" });
      expect(late.ok).toBe(true);
      expect(bank.applied).toHaveLength(1);
      const again = await gate.call("pay", { orderId: "o_1", amountCents: 5 }, { idempotencyKey: "late" });
      expect(again).toMatchObject({ ok: true, meta: { replayed: true } });
      expect(bank.applied).toHaveLength(1);
    });

    it("a result the ledger cannot store (a toJSON that throws once the gate has checked it) still settles the claim: applied, and retries answer FAILED/applied, never 'still running'", async () => {
      const { ledger } = await setup();
      let runs = 0;
      let reads = 0;
      const errors: unknown[] = [];
      const unreadable = (): never => {
        throw new Error("gone");
      };
      const unstable = { toJSON: () => (++reads > 1 ? unreadable() : "10") };
      const big = defineTool({
        name: "big",
        version: "1",
        description: "returns data whose JSON form breaks after the check",
        input: z.object({}),
        output: z.object({ n: z.any() }),
        effect: "write",
        execute: () => (runs++, { n: unstable }),
      });
      const gate = createGate({ tools: [big], ledger, onHookError: (_h, e) => void errors.push(e) });
      const first = await gate.call("big", {}, { idempotencyKey: "b" });
      expect(first).toMatchObject({ ok: true, data: { n: unstable } });
      const retry = await gate.call("big", {}, { idempotencyKey: "b" });
      expect(retry).toMatchObject({ ok: false, code: "FAILED", effect: "applied", retryable: false, message: expect.stringContaining("could not be stored") });
      expect(runs).toBe(1);
      expect(errors).toHaveLength(1);
      const [entry] = await ledger.list();
      expect(entry).toMatchObject({ state: "settled", code: "OK", effect: "applied" });
    });

    it("prune with olderThanMs never removes an entry whose key still deduplicates", async () => {
      const { ledger, clock } = await setup(); // keys live 24 h
      let runs = 0;
      const pay = payTool(async (i) => (runs++, { paymentId: `p${runs}`, orderId: i.orderId }));
      const gate = createGate({ tools: [pay], ledger });
      await gate.call("pay", { orderId: "o_1", amountCents: 5 }, { idempotencyKey: "refund:o_1" });
      await gate.call("pay", { orderId: "o_2", amountCents: 5 }); // unkeyed: nothing to deduplicate
      const released = { id: crypto.randomUUID(), owner: "r", callId: "c-rel", tool: "pay", version: "1.0.0", principal: null, fingerprint: "f", leaseMs: 1_000, takeover: false, key: { display: "rel", hash: "h-rel" } };
      await ledger.claim(released);
      expect(await ledger.settle(released.id, "r", { code: "RETRYABLE", effect: "none", result: "{}", attempts: 0, releaseKey: true })).toBe(true);
      expect(runs).toBe(2);
      clock.advance(2 * 3_600_000);
      expect(await ledger.prune({ olderThanMs: 3_600_000 })).toBe(2); // the unkeyed and the released entry
      expect((await ledger.list()).map((e) => e.key)).toEqual(["refund:o_1"]);
      const again = await gate.call("pay", { orderId: "o_1", amountCents: 5 }, { idempotencyKey: "refund:o_1" });
      expect(again).toMatchObject({ ok: true, data: { paymentId: "p1" }, meta: { replayed: true } });
      expect(runs).toBe(2);
      expect(await ledger.prune({ olderThanMs: 0 })).toBe(0);
      clock.advance(24 * 3_600_000);
      expect(await ledger.prune({ olderThanMs: 3_600_000 })).toBe(1); // expired now
      expect(await ledger.list()).toEqual([]);
    });

    it("replays values with toJSON (a Date) exactly as the first answer serialized them", async () => {
      const { ledger } = await setup();
      let runs = 0;
      const stamp = { toJSON: () => "stamp-1" };
      const tool = defineTool({
        name: "issue", version: "1", description: "d", effect: "write",
        input: z.object({ who: z.string() }),
        output: z.object({ at: z.date(), stamp: z.unknown(), list: z.array(z.date()) }),
        execute: () => (runs++, { at: new Date(0), stamp, list: [new Date(1_000)] }),
      });
      const gate = createGate({ tools: [tool], ledger });
      const first = await gate.call("issue", { who: "a" }, { idempotencyKey: "k" });
      const again = await gate.call("issue", { who: "a" }, { idempotencyKey: "k" });
      expect(again.meta.replayed).toBe(true);
      expect(runs).toBe(1);
      expect(body(again)).toBe(body(first));
      expect(JSON.parse(body(again))).toMatchObject({ data: { at: "1970-01-01T00:00:00.000Z", stamp: "stamp-1", list: ["1970-01-01T00:00:01.000Z"] } });
    });

    it("applies custom redaction patterns to short strings in what it stores", async () => {
      const { ledger } = await setup();
      const tool = defineTool({
        name: "card", version: "1", description: "d", effect: "write",
        input: z.object({ who: z.string() }), output: z.object({ pin: z.string(), ok: z.string() }),
        execute: () => ({ pin: "PIN1234", ok: "ok" }),
      });
      const gate = createGate({ tools: [tool], ledger, redact: { patterns: [/\bPIN\d{4}\b/g] } });
      const first = await gate.call("card", { who: "a" }, { idempotencyKey: "k" });
      expect(first).toMatchObject({ ok: true, data: { pin: "PIN1234" } }); // the agent gets the real output
      const [e] = await ledger.list();
      expect(e!.result).not.toContain("PIN1234");
      expect(JSON.parse(e!.result!)).toMatchObject({ data: { pin: "[REDACTED]", ok: "ok" } });
    });

    it("scopes keys per principal and per tool; the tool's own key applies, the caller's wins", async () => {
      const { ledger } = await setup();
      const bank = fakeBank();
      const exec = async (i: { orderId: string }) => ({ paymentId: bank.pay(i.orderId, undefined, false), orderId: i.orderId });
      const pay = payTool(exec, { idempotencyKey: (i) => `order:${i.orderId}` });
      const pay2 = payTool(exec, { name: "pay2" });
      const gate = createGate({ tools: [pay, pay2], ledger });
      const a = { principal: { id: "alice" } };
      const b = { principal: { id: "bob" } };
      await gate.call("pay", { orderId: "o_1", amountCents: 5 }, a);
      expect((await gate.call("pay", { orderId: "o_1", amountCents: 5 }, a)).meta.replayed).toBe(true);
      expect((await gate.call("pay", { orderId: "o_1", amountCents: 5 }, b)).meta.replayed).toBeUndefined();
      expect((await gate.call("pay", { orderId: "o_1", amountCents: 5 }, { ...a, idempotencyKey: "explicit" })).meta.replayed).toBeUndefined();
      await gate.call("pay2", { orderId: "o_1", amountCents: 5 }, { ...a, idempotencyKey: "explicit" });
      expect(bank.countFor("o_1")).toBe(4);
      const keys = (await ledger.list()).map((e) => e.key).sort();
      expect(keys).toEqual(["explicit", "explicit", "order:o_1", "order:o_1"]);
    });

    it("records every write, keyed or not; never reads", async () => {
      const { ledger } = await setup();
      const pay = payTool(async (i) => ({ paymentId: "p", orderId: i.orderId }));
      const { defineTool } = await import("../../src/index.js");
      const { z } = await import("zod");
      const read = defineTool({
        name: "read", version: "1", description: "r", input: z.object({}), output: z.object({}), effect: "read",
        execute: () => ({}),
      });
      const gate = createGate({ tools: [pay, read], ledger });
      await gate.call("pay", { orderId: "o", amountCents: 1 });
      await gate.call("pay", { orderId: "o", amountCents: 1 });
      await gate.call("read", {}, { idempotencyKey: "r" });
      const entries = await ledger.list();
      expect(entries).toHaveLength(2);
      expect(entries.every((e) => e.key === null && e.tool === "pay" && e.state === "settled")).toBe(true);
      expect(await ledger.get(entries[0]!.callId)).toMatchObject({ id: entries[0]!.id });
    });

    it("makes recordEffect durable before it resolves, and reports applied effects on failure", async () => {
      const { ledger } = await setup();
      let seen: unknown;
      const pay = payTool(async (_i, ctx) => {
        await ctx.recordEffect({ kind: "charge", ref: "ch_1" });
        seen = (await ledger.get(ctx.callId))?.effects;
        await ctx.recordEffect({ kind: "email", ref: "em_1" });
        throw new Error("mailer exploded");
      });
      const gate = createGate({ tools: [pay], ledger });
      const r = await gate.call("pay", { orderId: "o", amountCents: 1 }, { idempotencyKey: "k" });
      expect(seen).toEqual([{ kind: "charge", ref: "ch_1" }]);
      expect(r).toMatchObject({ ok: false, code: "FAILED", effect: "applied", retryable: false, effects: [{ kind: "charge", ref: "ch_1" }, { kind: "email", ref: "em_1" }] });
      const [e] = await ledger.list();
      expect(e).toMatchObject({ state: "settled", effect: "applied", code: "FAILED" });
      expect(e!.effects).toHaveLength(2);
      const bad = await gate.call("pay", { orderId: "o", amountCents: 1 }, { idempotencyKey: "k" });
      expect(bad.meta.replayed).toBe(true);
      expect(body(bad)).toBe(body(r));
    });

    it("reports an unknown write outcome, never retries it without a guarantee, and lists it as unresolved", async () => {
      const { ledger } = await setup();
      let runs = 0;
      const pay = payTool(async () => {
        runs++;
        throw new Reset("socket hang up");
      });
      const gate = createGate({ tools: [pay], ledger });
      const r = await gate.call("pay", { orderId: "o", amountCents: 1 }, { idempotencyKey: "k" });
      expect(r).toMatchObject({ ok: false, code: "FAILED", effect: "unknown", retryable: false });
      expect(runs).toBe(1);
      const again = await gate.call("pay", { orderId: "o", amountCents: 1 }, { idempotencyKey: "k" });
      expect(again.meta.replayed).toBe(true);
      expect(runs).toBe(1);
      const open = await ledger.unresolved();
      expect(open).toHaveLength(1);
      expect(open[0]).toMatchObject({ state: "settled", effect: "unknown", code: "FAILED", key: "k" });
    });

    it("retries a write whose downstream honours the key; exactly one effect", async () => {
      const { ledger } = await setup();
      const bank = fakeBank();
      let calls = 0;
      const pay = payTool(
        async (i, ctx) => {
          calls++;
          const id = bank.pay(i.orderId, ctx.idempotencyKey, true);
          if (calls < 3) throw new Reset("response lost"); // committed, then the answer was lost
          return { paymentId: id, orderId: i.orderId };
        },
        { idempotentDownstream: true },
      );
      const gate = createGate({ tools: [pay], ledger });
      const r = await gate.call("pay", { orderId: "o", amountCents: 1 }, { idempotencyKey: "k" });
      expect(r).toMatchObject({ ok: true, data: { paymentId: "pay_1" }, meta: { attempts: 3 } });
      expect(bank.applied).toHaveLength(1);
      // Without a key there is no guarantee: one attempt only.
      calls = 0;
      const unkeyed = await gate.call("pay", { orderId: "o2", amountCents: 1 });
      expect(unkeyed).toMatchObject({ ok: false, code: "FAILED", effect: "unknown", meta: { attempts: 1 } });
    });

    it("runs reconcile after an unknown outcome: applied → success (output checked), none → retry, unknown → FAILED", async () => {
      const { ledger } = await setup();
      const bank = fakeBank();
      let lose = 1;
      const verdicts: string[] = [];
      const pay = payTool(
        async (i) => {
          const id = bank.pay(i.orderId, undefined, false);
          if (lose-- > 0) throw new Reset("lost");
          return { paymentId: id, orderId: i.orderId };
        },
        {
          reconcile: async (i) => {
            if (i.orderId === "unknowable") return verdicts.push("unknown"), { status: "unknown" };
            if (i.orderId === "broken") return verdicts.push("applied-bad"), { status: "applied", output: { paymentId: 7 } as never };
            const found = bank.find(i.orderId);
            verdicts.push(found ? "applied" : "none");
            return found ? { status: "applied", output: { paymentId: found.id, orderId: i.orderId } } : { status: "none" };
          },
        },
      );
      const gate = createGate({ tools: [pay], ledger });
      const applied = await gate.call("pay", { orderId: "o_1", amountCents: 1 }, { idempotencyKey: "a" });
      expect(applied).toMatchObject({ ok: true, data: { paymentId: "pay_1", orderId: "o_1" }, meta: { attempts: 1 } });
      expect(bank.countFor("o_1")).toBe(1);

      const none = payTool(
        async (i) => {
          if (lose-- > -1) throw new Reset("refused before applying");
          return { paymentId: bank.pay(i.orderId, undefined, false), orderId: i.orderId };
        },
        { name: "pay_none", reconcile: async (i) => (bank.find(i.orderId) ? { status: "unknown" } : { status: "none" }) },
      );
      const g2 = createGate({ tools: [none], ledger });
      const retried = await g2.call("pay_none", { orderId: "o_2", amountCents: 1 }, { idempotencyKey: "b" });
      expect(retried).toMatchObject({ ok: true, meta: { attempts: 2 } });
      expect(bank.countFor("o_2")).toBe(1);

      lose = 1;
      const unknown = await gate.call("pay", { orderId: "unknowable", amountCents: 1 }, { idempotencyKey: "c" });
      expect(unknown).toMatchObject({ ok: false, code: "FAILED", effect: "unknown", meta: { attempts: 1 } });
      lose = 1;
      const badOut = await gate.call("pay", { orderId: "broken", amountCents: 1 }, { idempotencyKey: "d" });
      expect(badOut).toMatchObject({ ok: false, code: "INVALID_OUTPUT", effect: "applied" });
      expect(verdicts).toEqual(["applied", "unknown", "applied-bad"]);
      expect((await ledger.unresolved()).map((e) => e.key)).toEqual(["c"]);
    });

    it("after a crash (a claim left in flight past its lease): FAILED unknown without a guarantee, takeover with one", async () => {
      const { ledger, clock } = await setup();
      const bank = fakeBank();
      const hang = deferred<never>();
      const plain = payTool(async (i, ctx) => {
        bank.pay(i.orderId, ctx.idempotencyKey, true);
        await ctx.recordEffect({ kind: "payment", ref: "first" });
        return hang.promise; // the process "dies" here
      });
      const crashed = createGate({ tools: [plain], ledger });
      void crashed.call("pay", { orderId: "o_1", amountCents: 1 }, { idempotencyKey: "k" });
      await waitFor(async () => (await ledger.list())[0]?.effects.length === 1);
      const stuck = await ledger.unresolved();
      expect(stuck).toHaveLength(1);
      expect(stuck[0]).toMatchObject({ state: "in_flight", effect: "unknown", effects: [{ kind: "payment", ref: "first" }] });

      // Within the lease: still "running".
      const restarted = createGate({ tools: [payTool(async (i) => ({ paymentId: "x", orderId: i.orderId }))], ledger });
      expect(await restarted.call("pay", { orderId: "o_1", amountCents: 1 }, { idempotencyKey: "k" })).toMatchObject({ code: "CONFLICT", retryable: true });
      clock.advance(10 * 60_000);
      const noGuarantee = await restarted.call("pay", { orderId: "o_1", amountCents: 1 }, { idempotencyKey: "k" });
      expect(noGuarantee).toMatchObject({ ok: false, code: "FAILED", effect: "applied", effects: [{ kind: "payment", ref: "first" }] });
      expect(bank.applied).toHaveLength(1);

      let reconciled = 0;
      const safe = payTool(async (i, ctx) => ({ paymentId: bank.pay(i.orderId, ctx.idempotencyKey, true), orderId: i.orderId }), {
        reconcile: async (i) => {
          reconciled++;
          const p = bank.find(i.orderId);
          return p ? { status: "applied", output: { paymentId: p.id, orderId: i.orderId } } : { status: "none" };
        },
      });
      const recovered = createGate({ tools: [safe], ledger });
      const r = await recovered.call("pay", { orderId: "o_1", amountCents: 1 }, { idempotencyKey: "k" });
      expect(r).toMatchObject({ ok: true, data: { paymentId: "pay_1" }, meta: { attempts: 0 } });
      expect(reconciled).toBe(1);
      expect(bank.applied).toHaveLength(1);
      expect(await ledger.unresolved()).toEqual([]);
      expect((await ledger.list())[0]).toMatchObject({ state: "settled", code: "OK", claims: 2 });
    });

    it("50 concurrent calls with one key execute exactly once", async () => {
      const { ledger } = await setup();
      const bank = fakeBank();
      const pay = payTool(async (i) => {
        await new Promise((r) => setTimeout(r, 20));
        return { paymentId: bank.pay(i.orderId, undefined, false), orderId: i.orderId };
      });
      const gate = createGate({ tools: [pay], ledger });
      const results = await Promise.all(
        Array.from({ length: 50 }, () => gate.call("pay", { orderId: "o", amountCents: 1 }, { idempotencyKey: "same" })),
      );
      expect(bank.applied).toHaveLength(1);
      const executed = results.filter((r) => r.ok && r.meta.attempts === 1);
      const others = results.filter((r) => r.meta.replayed === true || (!r.ok && r.code === "CONFLICT" && r.retryable));
      expect(executed).toHaveLength(1);
      expect(others).toHaveLength(49);
    });

    it("frees the key when nothing ran and a retry should execute (concurrency limit)", async () => {
      const { ledger } = await setup();
      const release = deferred();
      let runs = 0;
      const pay = payTool(
        async (i) => {
          runs++;
          await release.promise;
          return { paymentId: "p", orderId: i.orderId };
        },
        { concurrency: 1 },
      );
      const gate = createGate({ tools: [pay], ledger });
      const first = gate.call("pay", { orderId: "a", amountCents: 1 }, { idempotencyKey: "a" });
      await waitFor(() => runs === 1);
      const busy = await gate.call("pay", { orderId: "b", amountCents: 1 }, { idempotencyKey: "b" });
      expect(busy).toMatchObject({ ok: false, code: "RETRYABLE", effect: "none", retryable: true });
      release.resolve();
      await first;
      const later = await gate.call("pay", { orderId: "b", amountCents: 1 }, { idempotencyKey: "b" });
      expect(later).toMatchObject({ ok: true, meta: { attempts: 1 } });
      expect(later.meta.replayed).toBeUndefined();
    });

    it("stores no secrets: no arguments, redacted keys, outputs and messages", async () => {
      const { ledger } = await setup();
      const canary = "sk-live0CANARY0abcdefghijklmnop";
      const pay = payTool(async (i) => {
        if (i.orderId === "fail") throw transient(`upstream said token=${canary}`);
        return { paymentId: `pay ${canary}`, orderId: i.orderId };
      });
      const gate = createGate({ tools: [pay], ledger });
      const ok = await gate.call("pay", { orderId: "o", amountCents: 1, note: canary }, { idempotencyKey: `key-${canary}`, principal: { id: "u1" } });
      expect(ok.ok && (ok.data as { paymentId: string }).paymentId.includes(canary)).toBe(true); // the agent gets the real output
      await gate.call("pay", { orderId: "fail", amountCents: 1, note: canary }, { idempotencyKey: canary });
      await gate.call("pay", { orderId: "o2", amountCents: 1, note: `password=${canary}` });
      const dump = JSON.stringify([await ledger.list(), await ledger.unresolved()]);
      expect(dump).not.toContain("CANARY");
      expect(dump).not.toContain("note");
      expect(dump).toContain("[REDACTED]");
      const replay = await gate.call("pay", { orderId: "o", amountCents: 1, note: canary }, { idempotencyKey: `key-${canary}`, principal: { id: "u1" } });
      expect(replay).toMatchObject({ ok: true, data: { paymentId: "pay [REDACTED]" }, meta: { replayed: true } });
    });

    it("settles only under the claim that holds the entry; prune keeps unresolved entries", async () => {
      const { ledger, clock } = await setup(1_000);
      const req = { id: crypto.randomUUID(), owner: "o1", callId: "c1", tool: "t", version: "1", principal: null, fingerprint: "f", leaseMs: 100, takeover: true, key: { display: "k", hash: "h" } };
      const c1 = await ledger.claim(req);
      expect(c1).toMatchObject({ status: "claimed", resumed: false });
      expect(await ledger.claim({ ...req, id: crypto.randomUUID(), owner: "o2", fingerprint: "g" })).toMatchObject({ status: "mismatch" });
      clock.advance(200);
      const c2 = await ledger.claim({ ...req, id: crypto.randomUUID(), owner: "o2", callId: "c2" });
      expect(c2).toMatchObject({ status: "claimed", resumed: true, entry: { id: req.id, claims: 2, callId: "c2" } });
      const s = { code: "OK" as const, effect: "applied" as const, result: '{"ok":true,"data":1}', attempts: 1, releaseKey: false };
      expect(await ledger.settle(req.id, "o1", s)).toBe(false);
      await expect(ledger.recordEffect(req.id, "o1", { kind: "x", ref: "y" })).rejects.toThrow();
      expect(await ledger.settle(req.id, "o2", s)).toBe(true);
      expect(await ledger.settle(req.id, "o2", s)).toBe(false);
      expect(await ledger.claim({ ...req, id: crypto.randomUUID(), owner: "o3" })).toMatchObject({ status: "completed" });
      const u = await ledger.claim({ ...req, id: crypto.randomUUID(), owner: "o4", key: undefined } as never);
      expect(u).toMatchObject({ status: "claimed" });
      clock.advance(2_000);
      expect(await ledger.prune()).toBe(1); // the settled, expired one; the in-flight one stays
      expect((await ledger.unresolved()).map((e) => e.owner)).toEqual(["o4"]);
      expect(await ledger.prune({ olderThanMs: 0 })).toBe(0);
    });
  });
}

/** Poll a condition (bounded). */
export async function waitFor(cond: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error("waitFor: condition not met in time");
}
