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
      expect((await c.query("SELECT version FROM together_schema")).rows).toEqual([{ version: 2 }]);
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

describe("postgres schema version 1 (before the claims table)", () => {
  it("migrates to 2: the call ids the table holds find their entries, and a takeover after it keeps the earlier one", async () => {
    const { default: pg } = await import("pg");
    const { postgresMigrations } = await import("../../src/ledger/_postgres-schema.js");
    const table = `v1_${++n}`;
    const c = new pg.Client({ connectionString: fx.url() });
    await c.connect();
    try {
      await c.query(postgresMigrations(table)[0]!);
      await c.query(`CREATE TABLE ${table}_schema (version INTEGER NOT NULL); INSERT INTO ${table}_schema VALUES (1)`);
      const row = `INSERT INTO ${table} (id, call_id, tool, version, principal, key_display, key_hash, fingerprint, state, code, effect, effects, result, attempts, claims, owner, created_at, updated_at, expires_at, lease_until)
        VALUES ($1, $2, 'pay', '1.0.0', NULL, $3, $4, 'f', $5, NULL, 'unknown', '[]', NULL, 0, 2, 'o', $6, $6, 9007199254740000, 1)`;
      await c.query(row, ["e1", "shared", "k1", "h-k1", "settled", 1]);
      await c.query(row, ["e2", "shared", "k2", "h-k2", "in_flight", 2]);
      await c.query(row, ["e3", "c3", "k3", "h-k3", "in_flight", 3]);
    } finally {
      await c.end();
    }
    const ledger = postgresLedger({ connectionString: fx.url(), table, now: () => 10 });
    expect((await ledger.get("shared"))?.id).toBe("e2"); // as before the migration: the newest
    expect((await ledger.get("c3"))?.id).toBe("e3");
    const taken = await ledger.claim({ id: "new", owner: "o2", callId: "c4", tool: "pay", version: "1.0.0", principal: null, key: { display: "k3", hash: "h-k3" }, fingerprint: "f", leaseMs: 1_000, takeover: true });
    expect(taken).toMatchObject({ status: "claimed", resumed: true, entry: { id: "e3", callId: "c4" } });
    expect((await ledger.get("c3"))?.id).toBe("e3");
    expect((await ledger.get("c4"))?.id).toBe("e3");
    await ledger.close();
    const ro = postgresLedger({ connectionString: fx.url(), table, readonly: true });
    await expect(ro.ready()).resolves.toBeUndefined();
    await ro.close();
  });
});

describe("read-only stores (what `toolgate ledger list|show|unresolved` open)", () => {
  const claim = (id: string) => ({ id, owner: "o", callId: `c-${id}`, tool: "t", version: "1", principal: null, fingerprint: "f", leaseMs: 1_000, takeover: false, key: { display: id, hash: `h-${id}` } });

  it("sqlite: reads an existing ledger without changing the file; refuses writes", async () => {
    const { default: Database } = await import("better-sqlite3");
    const { readFileSync } = await import("node:fs");
    const path = join(dir, `ro${++n}.db`);
    const rw = sqliteLedger({ path });
    await rw.claim(claim("a"));
    await rw.close();
    const before = readFileSync(path);
    const ro = sqliteLedger({ path, readonly: true });
    await ro.ready();
    expect((await ro.list()).map((e) => e.key)).toEqual(["a"]);
    expect((await ro.unresolved()).map((e) => e.key)).toEqual(["a"]);
    await expect(ro.claim(claim("b"))).rejects.toMatchObject({ code: "E_LEDGER_READONLY" });
    await expect(ro.settle("x", "o", { code: "OK", effect: "applied", result: "{}", attempts: 1, releaseKey: false })).rejects.toMatchObject({ code: "E_LEDGER_READONLY" });
    await expect(ro.prune()).rejects.toMatchObject({ code: "E_LEDGER_READONLY" });
    await ro.close();
    expect(readFileSync(path).equals(before)).toBe(true);
    const db = new Database(path, { readonly: true });
    expect(db.prepare("SELECT count(*) AS n FROM toolgate_ledger").get()).toEqual({ n: 1 });
    db.close();
  });

  it("sqlite: refuses a file without a ledger and leaves it as it was (no table, no schema version, no WAL)", async () => {
    const { default: Database } = await import("better-sqlite3");
    const path = join(dir, `other${++n}.db`);
    const other = new Database(path);
    other.exec("CREATE TABLE notes (x TEXT)");
    other.close();
    expect(() => sqliteLedger({ path, readonly: true })).toThrow(expect.objectContaining({ code: "E_LEDGER_MISSING" }));
    expect(() => sqliteLedger({ path: join(dir, "absent.db"), readonly: true })).toThrow(expect.objectContaining({ code: "E_LEDGER_MISSING" }));
    expect(() => sqliteLedger({ path: ":memory:", readonly: true })).toThrow(expect.objectContaining({ code: "E_LEDGER_OPTIONS" }));
    const db = new Database(path, { readonly: true });
    expect(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all()).toEqual([{ name: "notes" }]);
    expect(db.pragma("user_version", { simple: true })).toBe(0);
    expect(db.pragma("journal_mode", { simple: true })).toBe("delete");
    db.close();
    // A newer schema is refused too.
    const newer = new Database(path);
    newer.exec("CREATE TABLE toolgate_ledger (id TEXT); CREATE TABLE toolgate_schema (version INTEGER NOT NULL); INSERT INTO toolgate_schema VALUES (99)");
    newer.close();
    expect(() => sqliteLedger({ path, readonly: true })).toThrow(expect.objectContaining({ code: "E_LEDGER_SCHEMA" }));
  });

  it("postgres: reads an existing ledger, refuses writes, and creates nothing where there is no ledger", async () => {
    const { default: pg } = await import("pg");
    const table = `ro${++n}`;
    const rw = postgresLedger({ connectionString: fx.url(), table });
    await rw.claim(claim("a"));
    await rw.close();
    const ro = postgresLedger({ connectionString: fx.url(), table, readonly: true });
    await ro.ready();
    expect((await ro.list()).map((e) => e.key)).toEqual(["a"]);
    await expect(ro.claim(claim("b"))).rejects.toMatchObject({ code: "E_LEDGER_READONLY" });
    await expect(ro.prune({ olderThanMs: 0 })).rejects.toMatchObject({ code: "E_LEDGER_READONLY" });
    await ro.close();
    const missing = postgresLedger({ connectionString: fx.url(), table: `none${++n}`, readonly: true });
    await expect(missing.ready()).rejects.toMatchObject({ code: "E_LEDGER_MISSING" });
    await expect(missing.list()).rejects.toMatchObject({ code: "E_LEDGER_MISSING" });
    await missing.close();
    const c = new pg.Client({ connectionString: fx.url() });
    await c.connect();
    try {
      const r = await c.query("SELECT to_regclass($1)::text AS t, to_regclass($2)::text AS s", [`none${n}`, `none${n}_schema`]);
      expect(r.rows).toEqual([{ t: null, s: null }]);
      expect((await c.query(`SELECT count(*)::int AS n FROM ${table}`)).rows).toEqual([{ n: 1 }]);
    } finally {
      await c.end();
    }
  });
});
