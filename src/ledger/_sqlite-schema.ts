/**
 * The SQLite schema, one migration per version (`toolgate_schema.version` holds the applied count;
 * `PRAGMA user_version` belongs to the application sharing the file). Append a migration for a
 * change; never edit a released one.
 * @module
 */
export const SQLITE_MIGRATIONS: readonly string[] = [
  `CREATE TABLE toolgate_ledger (
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
   CREATE INDEX toolgate_ledger_open ON toolgate_ledger (state, effect);`,
  // 2: a takeover overwrites the entry's call_id; one row per takeover keeps the call id it had
  // before, so `get(<that call's id>)` still finds the entry. Only takeovers write here (rare):
  // a new claim costs what it did.
  `CREATE TABLE toolgate_ledger_calls (
     seq INTEGER PRIMARY KEY,
     call_id TEXT NOT NULL,
     id TEXT NOT NULL
   );
   CREATE INDEX toolgate_ledger_calls_call_id ON toolgate_ledger_calls (call_id);
   CREATE INDEX toolgate_ledger_calls_id ON toolgate_ledger_calls (id);`,
];
