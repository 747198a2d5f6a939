/**
 * PostgreSQL ends a connection while a claim holds it (a server restart, a failover, an operator's
 * pg_terminate_backend): the call answers, the process lives. The pool listens for a client's
 * death only while it is idle; a claim deciding under the key's row lock has its client checked out.
 */
import { describe, expect, it } from "vitest";
import pg from "pg";
import { createGate } from "../../src/index.js";
import { postgresLedger } from "../../src/ledger/index.js";
import { payTool } from "./_fixtures.js";
import { useLedgerFixtures } from "./_pg.js";

const fx = useLedgerFixtures("toolgate-pg-loss-");

describe("postgresLedger: a connection ended under a claim", () => {
  it("answers the call (nothing ran), keeps the process alive, and serves the next call", async () => {
    const ledger = postgresLedger({ connectionString: fx.url(), table: "loss_ledger" });
    let runs = 0;
    const pay = payTool(async (i) => (runs++, { paymentId: `p_${i.orderId}`, orderId: i.orderId }));
    const gate = createGate({ tools: [pay], ledger, onHookError: () => undefined });
    expect((await gate.call("pay", { orderId: "o1", amountCents: 5 }, { idempotencyKey: "k1" })).ok).toBe(true);

    // Another session holds the key's row: the replay decides under the lock, and waits.
    const holder = new pg.Client({ connectionString: fx.url() });
    const admin = new pg.Client({ connectionString: fx.url() });
    await holder.connect();
    await admin.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT id FROM loss_ledger WHERE key_hash IS NOT NULL FOR UPDATE");
      const replay = gate.call("pay", { orderId: "o1", amountCents: 5 }, { idempotencyKey: "k1" });
      let pid: number | undefined;
      for (let i = 0; i < 200 && pid === undefined; i++) {
        const r = await admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()");
        pid = r.rows[0]?.pid;
        if (pid === undefined) await new Promise((r) => setTimeout(r, 25));
      }
      expect(pid).toBeDefined();
      await admin.query("SELECT pg_terminate_backend($1)", [pid]);
      expect(await replay).toMatchObject({ ok: false, code: "RETRYABLE", effect: "none" });
      await holder.query("ROLLBACK");
    } finally {
      await holder.end();
      await admin.end();
    }
    expect(await gate.call("pay", { orderId: "o1", amountCents: 5 }, { idempotencyKey: "k1" })).toMatchObject({ ok: true, meta: { replayed: true } });
    expect(runs).toBe(1);
    await ledger.close();
  });
});

describe("a ledger that waiting will not mend", () => {
  it("postgres refusing the credentials: FAILED, not retryable, nothing ran (a RETRYABLE would have the agent loop)", async () => {
    const url = new URL(fx.url());
    url.password = "not-the-password";
    const ledger = postgresLedger({ connectionString: url.toString(), table: "loss_ledger" });
    let runs = 0;
    const pay = payTool(async (i) => (runs++, { paymentId: "p", orderId: i.orderId }));
    const errors: unknown[] = [];
    const gate = createGate({ tools: [pay], ledger, onHookError: (_h, e) => void errors.push(e) });
    const r = await gate.call("pay", { orderId: "o1", amountCents: 5 }, { idempotencyKey: "k2" });
    expect(r).toMatchObject({ ok: false, code: "FAILED", retryable: false, effect: "none", message: expect.stringContaining("misconfigured or damaged") });
    expect(runs).toBe(0);
    expect(errors.map((e) => (e as { code?: unknown }).code)).toContain("28P01");
    await ledger.close();
  });
});
