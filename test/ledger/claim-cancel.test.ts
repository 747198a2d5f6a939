/** A caller's cancel while the ledger decides a claim: nothing runs, and a late claim is freed only when it holds no earlier call's unknown effect. */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createGate, defineTool } from "../../src/index.js";
import { memoryLedger, type Ledger } from "../../src/ledger/index.js";

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
});
