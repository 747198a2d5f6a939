/**
 * sqliteLedger in a file an application shares: the ledger's schema version lives in its own
 * table (`toolgate_schema`), never in `PRAGMA user_version`, which applications use for their own
 * migrations. A file written by toolgate 0.1 (version in `user_version`, no version table) opens
 * as version 1; version 2 adds the table of calls that claimed each entry.
 */
import { describe, expect, it } from "vitest";
import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { createGate, defineTool } from "../../src/index.js";
import { sqliteLedger } from "../../src/ledger/index.js";

/** The schema toolgate 0.1 wrote (its only migration), frozen here as that version's files hold it. */
const V1_SCHEMA = `CREATE TABLE toolgate_ledger (
     id TEXT PRIMARY KEY,
     call_id TEXT NOT NULL,
     tool TEXT NOT NULL,
     version TEXT NOT NULL,
     principal TEXT,
     key_display TEXT,
     key_hash TEXT UNIQUE,
     fingerprint TEXT NOT NULL,
     state TEXT NOT NULL CHECK (state IN ('in_flight', 'settled')),
     code TEXT,
     effect TEXT NOT NULL CHECK (effect IN ('none', 'applied', 'unknown')),
     effects TEXT NOT NULL DEFAULT '[]',
     result TEXT,
     attempts INTEGER NOT NULL DEFAULT 0,
     claims INTEGER NOT NULL DEFAULT 1,
     owner TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL,
     lease_until INTEGER NOT NULL
   );
   CREATE INDEX toolgate_ledger_call_id ON toolgate_ledger (call_id);
   CREATE INDEX toolgate_ledger_created ON toolgate_ledger (created_at);
   CREATE INDEX toolgate_ledger_open ON toolgate_ledger (state, effect);`;

const pay = defineTool({
  name: "pay",
  version: "1.0.0",
  description: "Pay",
  effect: "write",
  input: z.object({ orderId: z.string() }),
  output: z.object({ ok: z.boolean() }),
  execute: async () => ({ ok: true }),
});

function withFile(f: (path: string) => Promise<void>) {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), "toolgate-schema-"));
    try {
      await f(join(dir, "app.db"));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

const userVersion = (path: string): unknown => {
  const db = new Database(path, { readonly: true });
  try {
    return db.pragma("user_version", { simple: true });
  } finally {
    db.close();
  }
};

describe("sqlite schema version", () => {
  for (const appVersion of [0, 1, 3]) {
    it(`leaves an application's user_version ${appVersion} alone and works beside its tables`, withFile(async (path) => {
      const app = new Database(path);
      app.exec("CREATE TABLE orders (id TEXT PRIMARY KEY)");
      app.pragma(`user_version = ${appVersion}`);
      app.close();
      const ledger = sqliteLedger({ path });
      expect(await createGate({ tools: [pay], ledger }).call("pay", { orderId: "o" })).toMatchObject({ ok: true });
      await ledger.close();
      expect(userVersion(path)).toBe(appVersion);
      const again = sqliteLedger({ path }); // reopens without migrating again
      expect(await again.list()).toHaveLength(1);
      await again.close();
      const ro = sqliteLedger({ path, readonly: true });
      expect(await ro.list()).toHaveLength(1);
      await ro.close();
      expect(userVersion(path)).toBe(appVersion);
    }));
  }

  it("opens a file written by toolgate 0.1 (user_version 1, no version table) as version 1 and migrates it, keeping its entries", withFile(async (path) => {
    const old = new Database(path);
    old.exec(V1_SCHEMA);
    old.exec(`INSERT INTO toolgate_ledger (id, call_id, tool, version, principal, key_display, key_hash, fingerprint, state, code, effect, effects, result, attempts, claims, owner, created_at, updated_at, expires_at, lease_until)
      VALUES ('e1', 'c1', 'pay', '1.0.0', NULL, 'k', 'h', 'f', 'settled', 'OK', 'applied', '[]', '{"ok":true,"data":{"ok":true}}', 1, 1, 'o', 1, 1, 9007199254740000, 1)`);
    old.pragma("user_version = 1");
    old.close();
    // Read-only cannot migrate: version 1 is older than this toolgate's (2), and the file stays as it was.
    expect(() => sqliteLedger({ path, readonly: true })).toThrow(expect.objectContaining({ code: "E_LEDGER_SCHEMA" }));
    const rw = sqliteLedger({ path });
    expect((await rw.list()).map((e) => e.id)).toEqual(["e1"]);
    expect((await rw.get("c1"))?.id).toBe("e1");
    await rw.close();
    const db = new Database(path, { readonly: true });
    expect(db.prepare("SELECT version FROM toolgate_schema").all()).toEqual([{ version: 2 }]);
    db.close();
    expect(userVersion(path)).toBe(1);
    const ro = sqliteLedger({ path, readonly: true });
    expect((await ro.get("c1"))?.key).toBe("k");
    await ro.close();
  }));

  it("migrates a version 1 file (a taken-over entry's earlier call id was lost) to 2: every call id the file still holds finds its entry, and a takeover after it keeps the earlier one", withFile(async (path) => {
    const old = new Database(path);
    old.exec(V1_SCHEMA);
    old.exec("CREATE TABLE toolgate_schema (version INTEGER NOT NULL); INSERT INTO toolgate_schema VALUES (1)");
    const row = (id: string, callId: string, key: string, state: string, effect: string, createdAt: number) =>
      old.prepare(`INSERT INTO toolgate_ledger (id, call_id, tool, version, principal, key_display, key_hash, fingerprint, state, code, effect, effects, result, attempts, claims, owner, created_at, updated_at, expires_at, lease_until)
        VALUES (?, ?, 'pay', '1.0.0', NULL, ?, ?, 'f', ?, NULL, ?, '[]', NULL, 0, 2, 'o', ?, ?, 9007199254740000, 1)`).run(id, callId, key, `h-${key}`, state, effect, createdAt, createdAt);
    row("e1", "shared", "k1", "settled", "unknown", 1);
    row("e2", "shared", "k2", "in_flight", "unknown", 2); // the newer of two entries under one call id
    row("e3", "c3", "k3", "in_flight", "unknown", 3);
    old.close();
    let t = 10;
    const ledger = sqliteLedger({ path, now: () => t });
    expect((await ledger.get("shared"))?.id).toBe("e2"); // as before the migration: the newest
    expect((await ledger.get("c3"))?.id).toBe("e3");
    const taken = await ledger.claim({ id: "new", owner: "o2", callId: "c4", tool: "pay", version: "1.0.0", principal: null, key: { display: "k3", hash: "h-k3" }, fingerprint: "f", leaseMs: 1_000, takeover: true });
    expect(taken).toMatchObject({ status: "claimed", resumed: true, entry: { id: "e3", callId: "c4" } });
    t += 1;
    expect((await ledger.get("c3"))?.id).toBe("e3");
    expect((await ledger.get("c4"))?.id).toBe("e3");
    await ledger.close();
    const db = new Database(path, { readonly: true });
    expect(db.prepare("SELECT version FROM toolgate_schema").all()).toEqual([{ version: 2 }]);
    db.close();
  }));
});
