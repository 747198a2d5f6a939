import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { memoryLedger, postgresLedger, sqliteLedger } from "../../src/ledger/index.js";
import { ledgerContract } from "./contract.js";
import { useLedgerFixtures } from "./_pg.js";

const fx = useLedgerFixtures("toolgate-ledger-");
const dir = fx.dir;
let n = 0;

describe("stores", () => {
  ledgerContract("memory", async (o) => memoryLedger(o));
  ledgerContract("sqlite", async (o) => sqliteLedger({ path: join(dir, `l${++n}.db`), ...o }));
  ledgerContract("postgres", async (o) => {
    const l = postgresLedger({ connectionString: fx.url(), table: `t${++n}`, ...o });
    await l.ready();
    return l;
  });
});

describe("postgres schema", () => {
  it("migrates once when replicas start together, and refuses a newer schema", async () => {
    const { default: pg } = await import("pg");
    const replicas = Array.from({ length: 4 }, () => postgresLedger({ connectionString: fx.url(), table: "together", max: 1 }));
    await Promise.all(replicas.map((l) => l.ready()));
    await Promise.all(replicas.map((l) => l.close()));
    const c = new pg.Client({ connectionString: fx.url() });
    await c.connect();
    try {
      expect((await c.query("SELECT version FROM together_schema")).rows).toEqual([{ version: 1 }]);
      await c.query("CREATE TABLE newer_schema (version INTEGER NOT NULL); INSERT INTO newer_schema VALUES (99)");
    } finally {
      await c.end();
    }
    const newer = postgresLedger({ connectionString: fx.url(), table: "newer" });
    await expect(newer.ready()).rejects.toMatchObject({ code: "E_LEDGER_SCHEMA" });
    await expect(newer.list()).rejects.toMatchObject({ code: "E_LEDGER_SCHEMA" });
    await newer.close();
  });
});
