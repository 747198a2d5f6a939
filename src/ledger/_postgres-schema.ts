/**
 * The PostgreSQL schema, one migration per version (`<table>_schema.version` holds the applied
 * count). Append a migration for a change; never edit a released one.
 * @module
 */
export function postgresMigrations(t: string): readonly string[] {
  return [
    `CREATE TABLE ${t} (
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
       effects JSONB NOT NULL DEFAULT '[]'::jsonb,
       result TEXT,
       attempts INTEGER NOT NULL DEFAULT 0,
       claims INTEGER NOT NULL DEFAULT 1,
       owner TEXT NOT NULL,
       created_at BIGINT NOT NULL,
       updated_at BIGINT NOT NULL,
       expires_at BIGINT NOT NULL,
       lease_until BIGINT NOT NULL,
       seq BIGINT GENERATED ALWAYS AS IDENTITY
     );
     CREATE INDEX ${t}_call_id ON ${t} (call_id);
     CREATE INDEX ${t}_created ON ${t} (created_at);
     CREATE INDEX ${t}_open ON ${t} (state, effect) WHERE state = 'in_flight' OR effect = 'unknown';`,
    // 2: a takeover overwrites the entry's call_id; one row per takeover keeps the call id it had
    // before, so `get(<that call's id>)` still finds the entry. Only takeovers write here (rare):
    // a new claim costs what it did.
    `CREATE TABLE ${t}_calls (
       seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
       call_id TEXT NOT NULL,
       id TEXT NOT NULL
     );
     CREATE INDEX ${t}_calls_call_id ON ${t}_calls (call_id, seq);
     CREATE INDEX ${t}_calls_id ON ${t}_calls (id);`,
  ];
}
