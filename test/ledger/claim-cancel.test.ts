/** A caller's cancel while the ledger decides a claim: nothing runs, and a late claim is freed only when it holds no earlier call's unknown effect. */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createGate, defineTool } from "../../src/index.js";
import { memoryLedger, type Ledger } from "../../src/ledger/index.js";
import { _fingerprint, _keyHash } from "../../src/ledger/_canonical.js";

/** A memory ledger whose claims answer `delay()` ms late (a slow store). */
function slowClaims(delay: () => number): { ledger: Ledger; inner: Ledger } {
  const inner = memoryLedger();
  const ledger: Ledger = Object.assign(Object.create(inner) as Ledger, {
    claim: async (r: Parameters<Ledger["claim"]>[0]) => {
      const o = await inner.claim(r);
      const ms = delay();
      if (ms > 0) await new Promise((res) => setTimeout(res, ms));
      return o;
    },
  });
  return { ledger, inner };
}

describe("a cancel while the ledger decides the claim", () => {
  it("a fresh claim that lands later is released: the next call runs once", async () => {
    let ms = 30;
    const { ledger, inner } = slowClaims(() => ms);
    let runs = 0;
    const pay = defineTool({ name: "pay", version: "1", description: "d", effect: "write", input: z.object({ id: z.string() }), output: z.object({ ok: z.boolean() }), idempotencyKey: (i) => `pay:${i.id}`, execute: () => (runs++, { ok: true }) });
    const gate = createGate({ tools: [pay], ledger, onHookError: () => {} });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 5);
    expect(await gate.call("pay", { id: "a" }, { signal: ac.signal })).toMatchObject({ ok: false, code: "FAILED", effect: "none", meta: { attempts: 0 } });
    await new Promise((r) => setTimeout(r, 80));
    ms = 0;
    expect(await inner.unresolved()).toEqual([]);
    expect(await gate.call("pay", { id: "a" })).toMatchObject({ ok: true });
    expect(runs).toBe(1);
  });

  it("a takeover that lands later goes back to the earlier unknown effect: the next call checks state, the write does not run again", async () => {
    let ms = 0;
    const { ledger, inner } = slowClaims(() => ms);
    let runs = 0;
    let reconciles = 0;
    let failing = true;
    const refund = defineTool({
      name: "refund",
      version: "1",
      description: "d",
      effect: "write",
      input: z.object({ orderId: z.string() }),
      output: z.object({ ok: z.boolean() }),
      idempotencyKey: (i) => `refund:${i.orderId}`,
      reconcile: () => (reconciles++, { status: "unknown" as const }),
      execute: () => {
        runs++;
        if (failing) throw new Error("socket hang up mid-write");
        return { ok: true };
      },
    });
    const gate = createGate({ tools: [refund], ledger, retry: { attempts: 1 }, onHookError: () => {} });
    expect(await gate.call("refund", { orderId: "o1" })).toMatchObject({ ok: false, code: "FAILED", effect: "unknown" });
    expect((await inner.unresolved()).length).toBe(1);
    ms = 30;
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 5);
    expect(await gate.call("refund", { orderId: "o1" }, { signal: ac.signal })).toMatchObject({ ok: false, code: "FAILED", effect: "none" });
    await new Promise((r) => setTimeout(r, 80));
    ms = 0;
    failing = false;
    // Back to what the first call left: settled, effect unknown, key held, shown to an operator.
    expect((await inner.unresolved()).map((e) => [e.state, e.effect, e.keyHash !== null])).toEqual([["settled", "unknown", true]]);
    const third = await gate.call("refund", { orderId: "o1" });
    // The next call takes it over and checks state first (reconcile says unknown): it does not run the write.
    expect(third).toMatchObject({ ok: false, code: "FAILED", effect: "unknown" });
    expect([runs, reconciles]).toEqual([1, 2]);
  });

  it("a takeover that lands later keeps the effects a crashed call recorded: applied, with its refs", async () => {
    let skew = 0;
    const inner = memoryLedger({ now: () => Date.now() + skew });
    let ms = 0;
    const ledger: Ledger = Object.assign(Object.create(inner) as Ledger, {
      claim: async (r: Parameters<Ledger["claim"]>[0]) => {
        const d = ms;
        const o = await inner.claim(r);
        if (d > 0) await new Promise((res) => setTimeout(res, d));
        return o;
      },
    });
    // A process claimed the key, recorded an effect, and died before settling.
    const key = { display: "refund:o1", hash: _keyHash("refund", null, "refund:o1") };
    await inner.claim({ id: "e1", owner: "dead", callId: "crashed", tool: "refund", version: "1", principal: null, key, fingerprint: _fingerprint({ orderId: "o1" }), leaseMs: 1_000, takeover: false });
    await inner.recordEffect("e1", "dead", { kind: "refund", ref: "rf_1" });
    skew = 5_000; // its lease has run out
    const refund = defineTool({ name: "refund", version: "1", description: "d", effect: "write", input: z.object({ orderId: z.string() }), output: z.object({ ok: z.boolean() }), idempotencyKey: (i) => `refund:${i.orderId}`, reconcile: () => ({ status: "unknown" as const }), execute: () => ({ ok: true }) });
    const gate = createGate({ tools: [refund], ledger, onHookError: () => {} });
    ms = 30;
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 5);
    expect(await gate.call("refund", { orderId: "o1" }, { signal: ac.signal })).toMatchObject({ ok: false, code: "FAILED", effect: "none" });
    await new Promise((r) => setTimeout(r, 80));
    const entry = await inner.get("e1");
    expect([entry?.state, entry?.effect, entry?.keyHash !== null]).toEqual(["settled", "applied", true]);
    expect(JSON.parse(entry?.result ?? "{}")).toMatchObject({ ok: false, code: "FAILED", effect: "applied", effects: [{ kind: "refund", ref: "rf_1" }] });
  });
});

describe("a claim whose answer is lost after the caller cancelled", () => {
  it("a takeover that committed goes back to the earlier unknown effect, under the cancelled call's id: the next call checks state at once", async () => {
    const inner = memoryLedger();
    let fail = false;
    // The store commits the claim, answers late, and then the answer is lost.
    const ledger: Ledger = Object.assign(Object.create(inner) as Ledger, {
      claim: async (r: Parameters<Ledger["claim"]>[0]) => {
        const o = await inner.claim(r);
        if (!fail) return o;
        await new Promise((res) => setTimeout(res, 30));
        throw new Error("connection reset after commit");
      },
    });
    let runs = 0;
    let reconciles = 0;
    const refund = defineTool({
      name: "refund", version: "1", description: "d", effect: "write",
      input: z.object({ orderId: z.string() }), output: z.object({ ok: z.boolean() }),
      idempotencyKey: (i) => `refund:${i.orderId}`,
      reconcile: () => (reconciles++, { status: "unknown" as const }),
      execute: () => {
        runs++;
        throw new Error("socket hang up mid-write");
      },
    });
    const gate = createGate({ tools: [refund], ledger, retry: { attempts: 1 }, onHookError: () => {} });
    expect(await gate.call("refund", { orderId: "o1" })).toMatchObject({ ok: false, code: "FAILED", effect: "unknown" });
    fail = true;
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 5);
    expect(await gate.call("refund", { orderId: "o1" }, { signal: ac.signal, callId: "cancelled" })).toMatchObject({ ok: false, code: "FAILED", effect: "none" });
    await new Promise((r) => setTimeout(r, 80));
    fail = false;
    expect((await inner.unresolved()).map((e) => [e.state, e.effect, e.keyHash !== null, e.callId])).toEqual([["settled", "unknown", true, "cancelled"]]);
    expect(await gate.call("refund", { orderId: "o1" })).toMatchObject({ ok: false, code: "FAILED", effect: "unknown", meta: { attempts: 0 } });
    expect([runs, reconciles]).toEqual([1, 2]);
  });
});
