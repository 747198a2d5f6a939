/** A key settled by one tool version and replayed after an upgrade: named by the version that stored it, and never data that breaks today's contract. */
import { describe, it, expect } from "vitest";
import { z } from "zod";
import { createGate, defineTool, type ToolResult } from "../../src/index.js";
import { memoryLedger } from "../../src/ledger/index.js";

const pay = (version: string, output: z.ZodType, out: unknown) =>
  defineTool({ name: "pay", version, description: "Pay", effect: "write", input: z.object({ orderId: z.string() }), output, execute: async () => out as never });
const V1 = z.object({ paymentId: z.string() });

async function replayAfterUpgrade(v2Output: z.ZodType): Promise<{ first: ToolResult; replay: ToolResult; runs: number }> {
  const ledger = memoryLedger();
  const first = await createGate({ tools: [pay("1.0.0", V1, { paymentId: "p_1" })], ledger }).call("pay", { orderId: "o" }, { idempotencyKey: "k" });
  let runs = 0;
  const v2 = defineTool({ name: "pay", version: "2.0.0", description: "Pay", effect: "write", input: z.object({ orderId: z.string() }), output: v2Output, execute: () => (runs++, { paymentId: "p_2", status: "settled" }) as never });
  const replay = await createGate({ tools: [v2], ledger }).call("pay", { orderId: "o" }, { idempotencyKey: "k" });
  return { first, replay, runs };
}

describe("a replay after the tool's version changed", () => {
  it("whose stored data breaks the new output contract is FAILED/applied, named by the version that stored it", async () => {
    const { first, replay, runs } = await replayAfterUpgrade(z.object({ paymentId: z.string(), status: z.enum(["pending", "settled"]) }));
    expect(first.ok).toBe(true);
    expect(replay).toMatchObject({ ok: false, code: "FAILED", effect: "applied", retryable: false, meta: { version: "1.0.0", replayed: true, attempts: 0 } });
    expect(runs).toBe(0); // the payment is not made twice
  });

  it("whose stored data the new contract accepts is the stored success, named by the version that stored it", async () => {
    const { replay, runs } = await replayAfterUpgrade(z.object({ paymentId: z.string(), status: z.string().optional() }));
    expect(replay).toMatchObject({ ok: true, data: { paymentId: "p_1" }, meta: { version: "1.0.0", replayed: true } });
    expect(runs).toBe(0);
  });

  it("is handed out as today's schema gives it: a new default filled in, a dropped field stripped; a non-idempotent transform is refused", async () => {
    const withDefault = await replayAfterUpgrade(z.object({ paymentId: z.string(), currency: z.string().default("EUR") }));
    expect(withDefault.replay).toMatchObject({ ok: true, data: { paymentId: "p_1", currency: "EUR" }, meta: { version: "1.0.0" } });
    const ledger = memoryLedger();
    await createGate({ tools: [pay("1.0.0", z.object({ paymentId: z.string(), note: z.string() }), { paymentId: "p_1", note: "internal" })], ledger }).call("pay", { orderId: "o" }, { idempotencyKey: "k" });
    const stripped = await createGate({ tools: [pay("2.0.0", V1, { paymentId: "p_2" })], ledger }).call("pay", { orderId: "o" }, { idempotencyKey: "k" });
    expect(stripped.ok ? stripped.data : stripped).toEqual({ paymentId: "p_1" });
    const doubled = await replayAfterUpgrade(z.object({ paymentId: z.string().transform((id) => `${id}!`) }));
    expect(doubled.replay).toMatchObject({ ok: false, code: "FAILED", effect: "applied" });
  });

  it("whose data today's schema turns into something JSON cannot carry (a Map) is FAILED/applied, as a fresh call would be INVALID_OUTPUT", async () => {
    const asMap = z.object({ paymentId: z.string() }).transform((o) => new Map(Object.entries(o)));
    const { replay, runs } = await replayAfterUpgrade(z.union([asMap, z.instanceof(Map)]));
    expect(replay).toMatchObject({ ok: false, code: "FAILED", effect: "applied", meta: { version: "1.0.0", replayed: true } });
    expect(runs).toBe(0);
  });

  it("parsed by an async output schema that never answers: bounded by the tool's timeout and the caller's cancel", async () => {
    const ledger = memoryLedger();
    await createGate({ tools: [pay("1.0.0", V1, { paymentId: "p_1" })], ledger }).call("pay", { orderId: "o" }, { idempotencyKey: "k" });
    const hanging = V1.refine(() => new Promise<boolean>(() => {}));
    const v2 = defineTool({ name: "pay", version: "2.0.0", description: "Pay", effect: "write", timeoutMs: 100, input: z.object({ orderId: z.string() }), output: hanging, execute: () => ({ paymentId: "p_2" }) });
    const gate = createGate({ tools: [v2], ledger });
    expect(await gate.call("pay", { orderId: "o" }, { idempotencyKey: "k" })).toMatchObject({ ok: false, code: "FAILED", effect: "applied", message: "The tool's result could not be checked in time; the tool had already run", meta: { replayed: true } });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 20);
    const cancelled = await gate.call("pay", { orderId: "o" }, { idempotencyKey: "k", signal: ac.signal });
    // The cancel, not the timeout, ended it.
    expect(cancelled).toMatchObject({ ok: false, code: "FAILED", effect: "applied", message: "The call was cancelled while its result was being checked; the tool had already run", meta: { replayed: true } });
  });

  it("parsed by an async schema that takes most of the timeout: each of its two parses gets the whole timeout, as a fresh call's check does", async () => {
    const ledger = memoryLedger();
    await createGate({ tools: [pay("1.0.0", V1, { paymentId: "p_1" })], ledger }).call("pay", { orderId: "o" }, { idempotencyKey: "k" });
    const slow = V1.refine(() => new Promise<boolean>((res) => setTimeout(() => res(true), 150)));
    const v2 = defineTool({ name: "pay", version: "2.0.0", description: "Pay", effect: "write", timeoutMs: 250, input: z.object({ orderId: z.string() }), output: slow, execute: () => ({ paymentId: "p_2" }) });
    expect(await createGate({ tools: [v2], ledger }).call("pay", { orderId: "o" }, { idempotencyKey: "k" })).toMatchObject({ ok: true, data: { paymentId: "p_1" }, meta: { version: "1.0.0", replayed: true } });
  });

  it("by the same version: the stored success as before, with the tool's version", async () => {
    const ledger = memoryLedger();
    const gate = createGate({ tools: [pay("1.0.0", V1, { paymentId: "p_1" })], ledger });
    await gate.call("pay", { orderId: "o" }, { idempotencyKey: "k" });
    expect(await gate.call("pay", { orderId: "o" }, { idempotencyKey: "k" })).toMatchObject({ ok: true, data: { paymentId: "p_1" }, meta: { version: "1.0.0", replayed: true } });
  });
});
