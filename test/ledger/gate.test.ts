/** The gate's side of the ledger: options, keys, effects and write retries with and without a store. */
import { describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { z } from "zod";
import { createGate, defineTool, isToolgateConfigError } from "../../src/index.js";
import { memoryLedger, sqliteLedger, type Ledger } from "../../src/ledger/index.js";
import { fakeBank, payTool, PayInput, PayOutput, Reset } from "./_fixtures.js";

function configError(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (isToolgateConfigError(e)) return e.code;
    throw e;
  }
  throw new Error("expected a ToolgateConfigError");
}

describe("configuration", () => {
  const base = { name: "w", version: "1", description: "d", input: PayInput, output: PayOutput, execute: () => ({ paymentId: "p", orderId: "o" }) };
  it("refuses guarantees on read tools and malformed guarantee fields", () => {
    expect(configError(() => defineTool({ ...base, effect: "read", idempotentDownstream: true }))).toBe("E_TOOL_IDEMPOTENCY");
    expect(configError(() => defineTool({ ...base, effect: "read", reconcile: async () => ({ status: "none" }) }))).toBe("E_TOOL_IDEMPOTENCY");
    expect(configError(() => defineTool({ ...base, effect: "read", idempotencyKey: () => "k" }))).toBe("E_TOOL_IDEMPOTENCY");
    expect(configError(() => defineTool({ ...base, effect: "write", idempotentDownstream: "yes" as never }))).toBe("E_TOOL_IDEMPOTENCY");
    expect(configError(() => defineTool({ ...base, effect: "write", reconcile: 1 as never }))).toBe("E_TOOL_HOOK");
    expect(configError(() => createGate({ tools: [defineTool({ ...base, effect: "write" })], ledger: {} as Ledger }))).toBe("E_GATE_LEDGER");
  });

  it("refuses bad store options and a database from a newer schema", () => {
    expect(configError(() => memoryLedger({ ttlMs: 0 }))).toBe("E_LEDGER_OPTIONS");
    expect(configError(() => sqliteLedger({ path: "" }))).toBe("E_LEDGER_OPTIONS");
    expect(configError(() => sqliteLedger({ path: "/nonexistent-dir/x/y.db" }))).toBe("E_LEDGER_OPEN");
    const dir = mkdtempSync(join(tmpdir(), "toolgate-schema-"));
    try {
      const path = join(dir, "newer.db");
      const raw = new Database(path);
      raw.exec("CREATE TABLE toolgate_schema (version INTEGER NOT NULL); INSERT INTO toolgate_schema VALUES (99)");
      raw.close();
      expect(configError(() => sqliteLedger({ path }))).toBe("E_LEDGER_SCHEMA");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("migrates once and keeps entries across reopen (a real file)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "toolgate-reopen-"));
    try {
      const path = join(dir, "l.db");
      const pay = payTool(async (i) => ({ paymentId: "p1", orderId: i.orderId }));
      const a = sqliteLedger({ path });
      await createGate({ tools: [pay], ledger: a }).call("pay", { orderId: "o", amountCents: 1 }, { idempotencyKey: "k" });
      await a.close();
      const raw = new Database(path, { readonly: true });
      expect(raw.prepare("SELECT version FROM toolgate_schema").all()).toEqual([{ version: 2 }]);
      expect(raw.pragma("user_version", { simple: true })).toBe(0); // the application's, untouched
      expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
      raw.close();
      const b = sqliteLedger({ path });
      let ran = false;
      const again = await createGate({ tools: [payTool(async () => ((ran = true), { paymentId: "p2", orderId: "o" }))], ledger: b }).call(
        "pay",
        { orderId: "o", amountCents: 1 },
        { idempotencyKey: "k" },
      );
      expect(again).toMatchObject({ ok: true, data: { paymentId: "p1" }, meta: { replayed: true } });
      expect(ran).toBe(false);
      await b.close();
      await expect(b.list()).rejects.toThrow(/closed/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("without a ledger", () => {
  it("passes the tool's own key to the tool and retries a write whose downstream honours it", async () => {
    const bank = fakeBank();
    let calls = 0;
    const keys: (string | undefined)[] = [];
    const pay = payTool(
      async (i, ctx) => {
        calls++;
        keys.push(ctx.idempotencyKey);
        const id = bank.pay(i.orderId, ctx.idempotencyKey, true);
        if (calls === 1) throw new Reset("lost");
        return { paymentId: id, orderId: i.orderId };
      },
      { idempotentDownstream: true, idempotencyKey: (i) => `pay:${i.orderId}` },
    );
    const r = await createGate({ tools: [pay] }).call("pay", { orderId: "o", amountCents: 1 });
    expect(r).toMatchObject({ ok: true, meta: { attempts: 2 } });
    expect(keys).toEqual(["pay:o", "pay:o"]);
    expect(bank.applied).toHaveLength(1);
  });

  it("still reports recorded effects of a failed write", async () => {
    const pay = payTool(async (_i, ctx) => {
      await ctx.recordEffect({ kind: "charge", ref: "ch_9" });
      throw new Error("boom");
    });
    const r = await createGate({ tools: [pay] }).call("pay", { orderId: "o", amountCents: 1 });
    expect(r).toMatchObject({ ok: false, code: "FAILED", effect: "applied", effects: [{ kind: "charge", ref: "ch_9" }] });
  });

  it("rejects a malformed effect reference and the tool sees it", async () => {
    let seen = "";
    const pay = payTool(async (_i, ctx) => {
      await ctx.recordEffect({ kind: "", ref: "x" }).catch((e: Error) => (seen = e.message));
      return { paymentId: "p", orderId: "o" };
    });
    expect((await createGate({ tools: [pay] }).call("pay", { orderId: "o", amountCents: 1 })).ok).toBe(true);
    expect(seen).toMatch(/recordEffect: kind and ref/);
  });
});

describe("with a ledger", () => {
  it("answers FAILED without running when the tool's key derivation throws", async () => {
    let ran = false;
    const pay = payTool(async () => ((ran = true), { paymentId: "p", orderId: "o" }), {
      idempotencyKey: () => {
        throw new Error("no key");
      },
    });
    const ledger = memoryLedger();
    const r = await createGate({ tools: [pay], ledger }).call("pay", { orderId: "o", amountCents: 1 });
    expect(r).toMatchObject({ ok: false, code: "FAILED", effect: "none", meta: { attempts: 0 } });
    expect(ran).toBe(false);
    expect(await ledger.list()).toEqual([]);
  });

  it("answers RETRYABLE and runs nothing when the ledger cannot claim", async () => {
    let ran = false;
    const pay = payTool(async () => ((ran = true), { paymentId: "p", orderId: "o" }));
    const down = memoryLedger();
    await down.close();
    const errors: string[] = [];
    const r = await createGate({ tools: [pay], ledger: down, onHookError: (h) => void errors.push(h) }).call("pay", { orderId: "o", amountCents: 1 }, { idempotencyKey: "k" });
    expect(r).toMatchObject({ ok: false, code: "RETRYABLE", retryable: true, effect: "none", retryAfterMs: 1000 });
    expect(ran).toBe(false);
    expect(errors).toEqual(["ledger"]);
  });

  it("returns the real outcome when settling fails, and the entry stays unresolved", async () => {
    const inner = memoryLedger();
    const flaky: Ledger = Object.assign(Object.create(inner) as Ledger, {
      claim: inner.claim.bind(inner),
      recordEffect: inner.recordEffect.bind(inner),
      settle: async () => {
        throw new Error("disk full");
      },
    });
    const pay = payTool(async (i) => ({ paymentId: "p", orderId: i.orderId }));
    const errors: string[] = [];
    const r = await createGate({ tools: [pay], ledger: flaky, onHookError: (h) => void errors.push(h) }).call("pay", { orderId: "o", amountCents: 1 }, { idempotencyKey: "k" });
    expect(r.ok).toBe(true);
    expect(errors).toEqual(["ledger"]);
    expect(await inner.unresolved()).toHaveLength(1);
  });

  it("reads never touch the ledger, even with a key", async () => {
    const ledger = memoryLedger();
    const read = defineTool({
      name: "r", version: "1", description: "d", input: z.object({}), output: z.object({ k: z.string().optional() }), effect: "read",
      execute: (_i, ctx) => (ctx.idempotencyKey === undefined ? {} : { k: ctx.idempotencyKey }),
    });
    const r = await createGate({ tools: [read], ledger }).call("r", {}, { idempotencyKey: "abc" });
    expect(r).toMatchObject({ ok: true, data: { k: "abc" } });
    expect(await ledger.list()).toEqual([]);
  });
});
