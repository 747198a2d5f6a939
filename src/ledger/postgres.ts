/**
 * `postgresLedger({ connectionString })`: one ledger for many gate replicas (node-postgres pool).
 * A claim is one statement in the common case (insert the key or learn it exists), then a short
 * transaction holding the key's row lock to decide. Concurrent claims and settlements are
 * group-committed: one statement per event-loop turn. Schema created and migrated on first use,
 * under an advisory lock so replicas starting together do not race (or, `readonly`, only checked).
 * @module
 */
import type pg from "pg";
import { ToolgateConfigError } from "../errors.js";
import { _loadDriver } from "./_driver.js";
import type { EffectRef } from "../result.js";
import { _commonOptions, _decide, _limit, _newEntry, _PRUNE_WHERE, _takenOver } from "./_decide.js";
import { _COLUMNS, _fromRow, _toValues, type _Row } from "./_row.js";
import { _batcher } from "./_batch.js";
import { _storable, _storableClaim, _storableEffect, _storableSettlement } from "./_text.js";
import { postgresMigrations } from "./_postgres-schema.js";
import type { ClaimOutcome, ClaimRequest, Ledger, LedgerEntry, LedgerOptions, ListQuery, PruneQuery, Settlement } from "./types.js";

/** node-postgres, loaded on the first `postgresLedger(...)` (an optional peer dependency). */
const driver = (): typeof pg => _loadDriver<typeof pg>("pg", "postgresLedger");

/** Column types, for the batched statements' `unnest` of one array per column. */
const TYPES: Record<(typeof _COLUMNS)[number], string> = {
  id: "text", call_id: "text", tool: "text", version: "text", principal: "text", key_display: "text", key_hash: "text",
  fingerprint: "text", state: "text", code: "text", effect: "text", effects: "jsonb", result: "text", attempts: "int",
  claims: "int", owner: "text", created_at: "bigint", updated_at: "bigint", expires_at: "bigint", lease_until: "bigint",
};

/** Options of {@link postgresLedger}. */
export interface PostgresLedgerOptions extends LedgerOptions {
  /** `postgres://user:password@host:port/database`. */
  readonly connectionString: string;
  /** Connection pool size. Default 10. */
  readonly max?: number;
  /** Table name (`[a-z_][a-z0-9_]*`, at most 48 characters). Default `toolgate_ledger`; the store also uses `<table>_schema` and `<table>_calls`. */
  readonly table?: string;
  /**
   * Open an existing ledger without changing it. Default `false`. `true`: sessions are read-only
   * (`default_transaction_read_only`), nothing is created or migrated, and `ready()` rejects with
   * {@link ToolgateConfigError} `E_LEDGER_MISSING` (no table) or `E_LEDGER_SCHEMA` (another schema
   * version); `claim`, `recordEffect`, `settle` and `prune` reject (`E_LEDGER_READONLY`).
   */
  readonly readonly?: boolean;
  /**
   * How long to wait for a connection (a free pool slot, then the TCP connect and start-up), ms.
   * Default 5,000; an integer from 1 to 600,000. A claim that cannot connect in time answers
   * RETRYABLE (nothing ran); a settle that cannot still gives the caller the real outcome.
   */
  readonly connectTimeoutMs?: number;
  /**
   * How long one statement may take before it is abandoned, ms. Default 5,000; an integer from 1
   * to 600,000. Its connection is closed, not reused (the server rolls its transaction back).
   */
  readonly queryTimeoutMs?: number;
}

/** The longest connect or query timeout the options accept: 10 minutes. */
const MAX_TIMEOUT_MS = 600_000;

/** A statement the server refused for its data (class 22) or a constraint (23): refused for one row, not the connection. */
function refusedForData(e: unknown): boolean {
  return e instanceof driver().DatabaseError && typeof e.code === "string" && (e.code.startsWith("22") || e.code.startsWith("23"));
}

/**
 * The server answered with an error and the connection is still good: not a timeout, not a dropped
 * socket, and not the server ending the session (class 57P: shut down by an operator or a crash
 * recovery) or a connection exception (class 08).
 */
const answeredByServer = (e: unknown): boolean => e instanceof driver().DatabaseError && !/^(57P|08)/.test(e.code ?? "");

function bad(message: string): never {
  throw new ToolgateConfigError("E_LEDGER_OPTIONS", `postgresLedger: ${message}`);
}

/**
 * A durable ledger in PostgreSQL, shared by every gate replica that points at it. Needs the
 * optional peer `pg` (`npm install pg`), loaded here on first use: without it this throws
 * {@link ToolgateConfigError} `E_LEDGER_DRIVER`.
 * @example
 * const ledger = postgresLedger({ connectionString: process.env.DATABASE_URL! });
 * await ledger.ready(); // fail fast at start-up
 * const gate = createGate({ tools, ledger });
 * const view = postgresLedger({ connectionString: process.env.DATABASE_URL!, readonly: true }); // look, never write
 */
export function postgresLedger(options: PostgresLedgerOptions): Ledger {
  if (typeof options !== "object" || options === null) bad("expected an options object with a connectionString");
  if (typeof options.connectionString !== "string" || options.connectionString.length === 0) bad("connectionString must be a non-empty string");
  const max = options.max ?? 10;
  if (!Number.isInteger(max) || max < 1 || max > 1000) bad("max must be an integer from 1 to 1000");
  const T = options.table ?? "toolgate_ledger";
  if (typeof T !== "string" || !/^[a-z_][a-z0-9_]{0,47}$/.test(T)) bad("table must match [a-z_][a-z0-9_]{0,47}");
  const readonly = options.readonly ?? false;
  if (typeof readonly !== "boolean") bad("readonly must be a boolean");
  const connectTimeoutMs = options.connectTimeoutMs ?? 5_000;
  if (!Number.isInteger(connectTimeoutMs) || connectTimeoutMs < 1 || connectTimeoutMs > MAX_TIMEOUT_MS) bad("connectTimeoutMs must be an integer from 1 to 600000 (ms)");
  const queryTimeoutMs = options.queryTimeoutMs ?? 5_000;
  if (!Number.isInteger(queryTimeoutMs) || queryTimeoutMs < 1 || queryTimeoutMs > MAX_TIMEOUT_MS) bad("queryTimeoutMs must be an integer from 1 to 600000 (ms)");
  const { ttlMs, now } = _commonOptions("postgresLedger", options);
  const { Pool } = driver();
  const pool = new Pool({
    connectionString: options.connectionString,
    max,
    connectionTimeoutMillis: connectTimeoutMs,
    query_timeout: queryTimeoutMs,
    ...(readonly ? { options: "-c default_transaction_read_only=on" } : {}),
  });
  pool.on("error", () => {
    // An idle client died (e.g. the server restarted); the pool replaces it on next use.
  });
  // The pool listens for a client's death only while the client is idle: one that dies while it is
  // checked out (a transaction under the key's row lock, the migration) would emit an unhandled
  // 'error' and end the process. Its query rejects as well; that rejection is the call's answer.
  pool.on("connect", (client) => void client.on("error", () => undefined));
  // Read-only: the session option above, and the code refuses writes regardless (a connection
  // string's own `options=` replaces the config's). No per-connection SET: pg runs it beside the
  // pooled query and warns (DeprecationWarning) on every command.

  let closed = false;
  let migrated: Promise<void> | undefined;
  const ready = (): Promise<void> => {
    if (closed) return Promise.reject(new Error("postgresLedger: the ledger is closed"));
    migrated ??= (readonly ? checkSchema(pool, T) : migrate(pool, T)).catch((e: unknown) => {
      migrated = undefined; // try again on the next call
      throw e;
    });
    return migrated;
  };
  const writable = (): Promise<void> =>
    readonly ? Promise.reject(new ToolgateConfigError("E_LEDGER_READONLY", "postgresLedger: opened read-only; it cannot write")) : ready();

  const cols = _COLUMNS.join(", ");
  const params = _COLUMNS.map((c, i) => (c === "effects" ? `$${i + 1}::jsonb` : `$${i + 1}`)).join(", ");
  const INSERT = `INSERT INTO ${T} (${cols}) VALUES (${params})`;
  const C = `${T}_calls`; // the call ids takeovers overwrote (see _postgres-schema.ts)
  // A takeover keeps the call id it overwrites ($8), in the same statement, so that call still finds the entry.
  const TAKEOVER = `WITH earlier AS (INSERT INTO ${C} (call_id, id) VALUES ($8, $7))
    UPDATE ${T} SET call_id = $1, version = $2, owner = $3, state = 'in_flight', code = NULL, effect = 'unknown', result = NULL,
      attempts = 0, claims = $4, updated_at = $5, lease_until = $6, expires_at = $9 WHERE id = $7`;

  // Group commit: concurrent claims insert in one statement, concurrent settlements update in one.
  const INSERT_MANY = `INSERT INTO ${T} (${cols}) SELECT * FROM unnest(${_COLUMNS.map((c, i) => `$${i + 1}::${TYPES[c]}[]`).join(", ")})
    ON CONFLICT (key_hash) DO NOTHING RETURNING id`;
  const insertMany = _batcher(async (entries: readonly LedgerEntry[]) => {
    const rows = entries.map(_toValues);
    const r = await pool.query<{ id: string }>({ name: `tg_${T}_claims`, text: INSERT_MANY, values: _COLUMNS.map((_c, i) => rows.map((v) => v[i])) });
    const inserted = new Set(r.rows.map((x) => x.id));
    return entries.map((e) => inserted.has(e.id));
  }, refusedForData);
  const SETTLE_MANY = `UPDATE ${T} AS t SET state = 'settled', code = v.code, effect = v.effect, result = v.result, attempts = v.attempts,
      key_hash = CASE WHEN v.release THEN NULL ELSE t.key_hash END, expires_at = GREATEST(t.expires_at, v.updated_at + $9::bigint), updated_at = v.updated_at
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::boolean[], $8::bigint[])
      AS v(id, owner, code, effect, result, attempts, release, updated_at)
    WHERE t.id = v.id AND t.owner = v.owner AND t.state = 'in_flight' RETURNING t.id`;
  type SettleItem = { id: string; owner: string; s: Settlement; at: number };
  const settleMany = _batcher(async (items: readonly SettleItem[]) => {
    const col = <V>(f: (x: SettleItem) => V) => items.map(f);
    const r = await pool.query<{ id: string }>({
      name: `tg_${T}_settles`,
      text: SETTLE_MANY,
      values: [col((x) => x.id), col((x) => x.owner), col((x) => x.s.code), col((x) => x.s.effect), col((x) => x.s.result), col((x) => x.s.attempts), col((x) => x.s.releaseKey), col((x) => x.at), ttlMs],
    });
    const settled = new Set(r.rows.map((x) => x.id));
    return items.map((x) => settled.has(x.id));
  }, refusedForData);

  const claim = async (request: ClaimRequest): Promise<ClaimOutcome> => {
    await writable();
    const req = _storableClaim(request);
    const key = req.key;
    // Fast path: an unkeyed write, or a key that is new.
    const fresh = _newEntry(req, now(), ttlMs);
    const inserted = await insertMany(fresh);
    if (inserted) return { status: "claimed", entry: fresh, resumed: false };
    if (key === undefined) throw new Error("postgresLedger: an unkeyed claim was not inserted");
    // The key exists: decide under its row lock. A concurrent claim can free and re-take the key
    // between our statements; the unique index then refuses our insert and we decide again.
    for (let round = 1; ; round++) {
      try {
        return await claimLocked({ ...req, key });
      } catch (e) {
        if (round >= 3 || (e as { code?: unknown }).code !== "23505") throw e;
      }
    }
  };

  const claimLocked = async (req: ClaimRequest & { key: NonNullable<ClaimRequest["key"]> }): Promise<ClaimOutcome> => {
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      const r = await client.query<_Row>(`SELECT * FROM ${T} WHERE key_hash = $1 FOR UPDATE`, [req.key.hash]);
      const row = r.rows[0];
      const t = now();
      const d = _decide(row === undefined ? undefined : _fromRow(row), req, t);
      let out: ClaimOutcome;
      if (d.do === "answer") out = d.outcome;
      else if (d.do === "takeover") {
        const e = _takenOver(d.entry, req, t, ttlMs);
        await client.query(TAKEOVER, [e.callId, e.version, e.owner, e.claims, e.updatedAt, e.leaseUntil, e.id, d.entry.callId, e.expiresAt]);
        out = { status: "claimed", entry: e, resumed: true };
      } else {
        if (d.expired !== undefined) await client.query(`UPDATE ${T} SET key_hash = NULL WHERE id = $1`, [d.expired.id]);
        const e = _newEntry(req, t, ttlMs);
        await client.query(INSERT, _toValues(e));
        out = { status: "claimed", entry: e, resumed: false };
      }
      await client.query("COMMIT");
      client.release();
      return out;
    } catch (e) {
      releaseAfter(client, e);
      throw e;
    }
  };

  const rows = async (text: string, values: unknown[]) => {
    await ready();
    return (await pool.query<_Row>(text, values)).rows.map(_fromRow);
  };

  return {
    kind: "postgres",
    ready,
    claim,
    async recordEffect(id: string, owner: string, effect: EffectRef): Promise<void> {
      await writable();
      const r = await pool.query({
        name: `tg_${T}_effect`,
        text: `UPDATE ${T} SET effects = effects || $1::jsonb, updated_at = $2 WHERE id = $3 AND owner = $4 AND state = 'in_flight'`,
        values: [JSON.stringify([_storableEffect(effect)]), now(), id, owner],
      });
      if (r.rowCount !== 1) throw new Error("postgresLedger: the claim is no longer held");
    },
    async settle(id: string, owner: string, s: Settlement): Promise<boolean> {
      await writable();
      return settleMany({ id, owner, s: _storableSettlement(s), at: now() });
    },
    async get(idOrCallId: string) {
      // The entry with this id; else the newest whose last claim this call made; else the one
      // most recently taken over from this call (the order every store answers in, see Ledger.get).
      const r = await rows(
        `(SELECT l.*, 0 AS rank FROM ${T} l WHERE l.id = $1)
         UNION ALL (SELECT l.*, 1 FROM ${T} l WHERE l.call_id = $1 ORDER BY l.created_at DESC, l.seq DESC LIMIT 1)
         UNION ALL (SELECT l.*, 2 FROM ${C} c JOIN ${T} l ON l.id = c.id WHERE c.call_id = $1 ORDER BY c.seq DESC LIMIT 1)
         ORDER BY rank LIMIT 1`,
        [_storable(idOrCallId)],
      );
      return r[0];
    },
    list: async (q: ListQuery = {}) =>
      rows(`SELECT * FROM ${T} WHERE ($1::text IS NULL OR tool = $1) ORDER BY created_at DESC, seq DESC LIMIT $2`, [q.tool === undefined ? null : _storable(q.tool), _limit(q.limit)]),
    unresolved: async (q: ListQuery = {}) =>
      rows(
        `SELECT * FROM ${T} WHERE (state = 'in_flight' OR effect = 'unknown') AND ($1::text IS NULL OR tool = $1) ORDER BY created_at ASC, seq ASC LIMIT $2`,
        [q.tool === undefined ? null : _storable(q.tool), _limit(q.limit)],
      ),
    async prune(q: PruneQuery = {}): Promise<number> {
      await writable();
      const t = now();
      // The entries and the call ids their takeovers overwrote, in one statement (one transaction).
      const r = await pool.query<{ n: number }>(
        `WITH e AS (DELETE FROM ${T} WHERE ${_PRUNE_WHERE("$1", "$2")} RETURNING id),
           c AS (DELETE FROM ${C} USING e WHERE ${C}.id = e.id)
         SELECT count(*)::int AS n FROM e`,
        [t, q.olderThanMs === undefined ? Number.MIN_SAFE_INTEGER : t - q.olderThanMs],
      );
      return r.rows[0]?.n ?? 0;
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
}

/** For a read-only ledger: the table must exist at this toolgate's schema version (nothing is changed). */
async function checkSchema(pool: pg.Pool, table: string): Promise<void> {
  const n = postgresMigrations(table).length;
  const r = await pool.query<{ t: string | null; s: string | null }>("SELECT to_regclass($1)::text AS t, to_regclass($2)::text AS s", [table, `${table}_schema`]);
  if (r.rows[0]?.t == null) throw new ToolgateConfigError("E_LEDGER_MISSING", `postgresLedger: no toolgate ledger here (no table ${table})`);
  const v = r.rows[0].s == null ? 0 : ((await pool.query<{ version: number }>(`SELECT version FROM ${table}_schema`)).rows[0]?.version ?? 0);
  if (v !== n) {
    const rel = v > n ? "newer" : "older";
    const hint = v > n ? "" : "; a gate opening it read-write migrates it";
    throw new ToolgateConfigError("E_LEDGER_SCHEMA", `postgresLedger: table ${table} has schema version ${v}, ${rel} than this toolgate (${n})${hint}`);
  }
}

async function migrate(pool: pg.Pool, table: string): Promise<void> {
  const migrations = postgresMigrations(table);
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`toolgate:${table}`]);
    await client.query(`CREATE TABLE IF NOT EXISTS ${table}_schema (version INTEGER NOT NULL)`);
    const r = await client.query<{ version: number }>(`SELECT version FROM ${table}_schema`);
    const v = r.rows[0]?.version ?? 0;
    if (v > migrations.length) {
      throw new ToolgateConfigError("E_LEDGER_SCHEMA", `postgresLedger: table ${table} has schema version ${v}, newer than this toolgate (${migrations.length})`);
    }
    for (let i = v; i < migrations.length; i++) await client.query(migrations[i]!);
    if (r.rows.length === 0) await client.query(`INSERT INTO ${table}_schema (version) VALUES ($1)`, [migrations.length]);
    else if (v !== migrations.length) await client.query(`UPDATE ${table}_schema SET version = $1`, [migrations.length]);
    await client.query("COMMIT");
    client.release();
  } catch (e) {
    releaseAfter(client, e);
    throw e;
  }
}

/**
 * Give a client back after a failed transaction. A server error leaves the connection usable: roll
 * back, then reuse it. A timeout or a dropped socket leaves it mid-statement: close it (the
 * server rolls the transaction back), never queue a ROLLBACK behind a statement that never ends.
 */
function releaseAfter(client: pg.PoolClient, e: unknown): void {
  if (!answeredByServer(e)) return client.release(e instanceof Error ? e : new Error(String(e)));
  client.query("ROLLBACK").then(
    () => client.release(),
    (r: unknown) => client.release(r instanceof Error ? r : new Error(String(r))),
  );
}
