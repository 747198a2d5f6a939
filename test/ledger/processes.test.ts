/** 50 calls with one key from 4 OS processes sharing one store: exactly one execution. */
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { postgresLedger, sqliteLedger, type Ledger } from "../../src/ledger/index.js";
import { spawnChild } from "./_child.js";
import { useLedgerFixtures } from "./_pg.js";

const fx = useLedgerFixtures("toolgate-procs-");
const dir = fx.dir;

const stores: { name: string; db: () => Promise<string>; open: (db: string) => Ledger }[] = [
  { name: "postgres", db: () => fx.server().newDatabase(), open: (db) => postgresLedger({ connectionString: db }) },
  { name: "sqlite", db: async () => join(dir, "race.db"), open: (db) => sqliteLedger({ path: db }) },
];

describe.each(stores)("4 processes, one key: $name", (store) => {
  it("executes exactly once; the other 49 calls replay or answer CONFLICT", { timeout: 60_000 }, async () => {
    const db = await store.db();
    const counts = [13, 13, 12, 12];
    const children = counts.map((c) => spawnChild(["race", db, String(c)]));
    await Promise.all(children.map((c) => c.waitFor((l) => l === "READY", 30_000)));
    for (const c of children) c.proc.stdin!.write("go\n");
    const results = await Promise.all(
      children.map(async (c) => JSON.parse((await c.waitFor((l) => l.startsWith("RESULT "), 30_000)).slice(7)) as { executions: number; codes: string[] }),
    );
    await Promise.all(children.map((c) => c.exited));
    const executions = results.reduce((a, r) => a + r.executions, 0);
    const codes = results.flatMap((r) => r.codes);
    expect(codes).toHaveLength(50);
    expect(executions).toBe(1);
    expect(codes.filter((c) => c === "OK")).toHaveLength(1);
    expect(codes.filter((c) => c === "REPLAY" || c === "CONFLICT")).toHaveLength(49);
    const ledger = store.open(db);
    const entries = await ledger.list();
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ state: "settled", code: "OK", key: "race-key", effects: [{ kind: "payment", ref: "pay_same" }] });
    await ledger.close();
  });
});
