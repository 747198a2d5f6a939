/**
 * A gate process killed with SIGKILL mid-write: after restart the record is there, marked
 * unknown with the effects it recorded — never absent, never silently "none". And a process
 * killed during a stream of writes loses no acknowledged one.
 */
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import Database from "better-sqlite3";
import { z } from "zod";
import { createGate, defineTool } from "../../src/index.js";
import { postgresLedger, sqliteLedger, type Ledger } from "../../src/ledger/index.js";
import { spawnChild } from "./_child.js";
import { useLedgerFixtures } from "./_pg.js";

const fx = useLedgerFixtures("toolgate-crash-");
const dir = fx.dir;

let n = 0;
const stores: { name: string; db: () => Promise<string>; open: (db: string, now?: () => number) => Ledger }[] = [
  { name: "sqlite", db: async () => join(dir, `crash${++n}.db`), open: (db, now) => sqliteLedger({ path: db, ...(now ? { now } : {}) }) },
  { name: "postgres", db: () => fx.server().newDatabase(), open: (db, now) => postgresLedger({ connectionString: db, ...(now ? { now } : {}) }) },
];

const later = () => Date.now() + 60 * 60_000; // the restarted process runs after every lease

function plainPay(runs: { n: number }) {
  return defineTool({
    name: "pay", version: "1.0.0", description: "Pay an order",
    input: z.object({ orderId: z.string(), amountCents: z.number().int() }),
    output: z.object({ paymentId: z.string() }),
    effect: "write",
    execute: () => (runs.n++, { paymentId: "second" }),
  });
}

describe.each(stores)("SIGKILL mid-write: $name", (store) => {
  it("keeps the in-flight record with its recorded effect; a retry answers applied, never runs again", async () => {
    const db = await store.db();
    const child = spawnChild(["hang", db, "1"]);
    await child.waitFor((l) => l === "EFFECT");
    child.proc.kill("SIGKILL");
    expect((await child.exited).signal).toBe("SIGKILL");

    const ledger = store.open(db, later);
    const open = await ledger.unresolved();
    expect(open).toHaveLength(1);
    expect(open[0]).toMatchObject({ state: "in_flight", effect: "unknown", key: "crash-key", tool: "pay", effects: [{ kind: "payment", ref: "pay_o_1" }] });
    const runs = { n: 0 };
    const gate = createGate({ tools: [plainPay(runs)], ledger });
    const r = await gate.call("pay", { orderId: "o_1", amountCents: 100 }, { idempotencyKey: "crash-key" });
    expect(r).toMatchObject({ ok: false, code: "FAILED", effect: "applied", retryable: false, effects: [{ kind: "payment", ref: "pay_o_1" }] });
    expect(runs.n).toBe(0);
    expect(await ledger.unresolved()).toHaveLength(1); // still for an operator to resolve
    await ledger.close();
  });

  it("keeps the in-flight record when nothing was recorded; a retry answers unknown", async () => {
    const db = await store.db();
    const child = spawnChild(["hang", db, "0"]);
    await child.waitFor((l) => l === "EFFECT");
    child.proc.kill("SIGKILL");
    await child.exited;
    const ledger = store.open(db, later);
    const [entry] = await ledger.unresolved();
    expect(entry).toMatchObject({ state: "in_flight", effect: "unknown", effects: [] });
    const runs = { n: 0 };
    const gate = createGate({ tools: [plainPay(runs)], ledger });
    const r = await gate.call("pay", { orderId: "o_1", amountCents: 100 }, { idempotencyKey: "crash-key" });
    expect(r).toMatchObject({ ok: false, code: "FAILED", effect: "unknown", retryable: false });
    expect(runs.n).toBe(0);
    await ledger.close();
  });

  it("loses no acknowledged write when killed during a stream of writes", async () => {
    const db = await store.db();
    const child = spawnChild(["loop", db]);
    await child.waitFor((l) => l === "ACK loop-24");
    child.proc.kill("SIGKILL");
    await child.exited;
    const acked = child.lines.filter((l) => l.startsWith("ACK ")).map((l) => l.slice(4));
    expect(acked.length).toBeGreaterThanOrEqual(25);
    if (store.name === "sqlite") {
      const raw = new Database(db, { readonly: true });
      expect(raw.pragma("integrity_check", { simple: true })).toBe("ok");
      raw.close();
    }
    const ledger = store.open(db);
    const entries = await ledger.list({ limit: 10_000 });
    const byKey = new Map(entries.map((e) => [e.key, e]));
    for (const key of acked) expect(byKey.get(key)).toMatchObject({ state: "settled", code: "OK", effect: "applied" });
    expect(entries.filter((e) => e.state === "in_flight").length).toBeLessThanOrEqual(1);
    expect(entries.length - acked.length).toBeLessThanOrEqual(1);
    await ledger.close();
  });
});
