/**
 * `sqliteLedger({ path })`: the embedded default. A real SQLite file (better-sqlite3) in WAL mode
 * with `synchronous=FULL`, so a commit is on disk before the call goes on. Concurrent operations
 * of one process are group-committed (one fsync per event-loop turn); several processes may share
 * the file (writes serialize on SQLite's lock, waiting up to `busyTimeoutMs`).
 * @module
 */
import { existsSync, statSync } from "node:fs";
import { resolve as resolvePath } from "node:path";
import type Database from "better-sqlite3";
import { ToolgateConfigError } from "../errors.js";
import { _sqliteDriver } from "./_sqlite-driver.js";
import type { EffectRef } from "../result.js";
import { _commonOptions, _decide, _limit, _newEntry, _PRUNE_WHERE, _takenOver } from "./_decide.js";
import { _COLUMNS, _fromRow, _toValues, type _Row } from "./_row.js";
import { SQLITE_MIGRATIONS } from "./_sqlite-schema.js";
import { _storable, _storableClaim, _storableEffect, _storableSettlement } from "./_text.js";
import { _nothingStored, type ClaimOutcome, type ClaimRequest, type Ledger, type LedgerOptions, type ListQuery, type PruneQuery, type Settlement } from "./types.js";
import { outsideCalls } from "../policy/shared-context.js";

/** Options of {@link sqliteLedger}. */
export interface SqliteLedgerOptions extends LedgerOptions {
  /** The database file (created if missing). `":memory:"` works but is not durable. */
  readonly path: string;
  /** How long to wait for another process's write lock, ms. Default 5,000. */
  readonly busyTimeoutMs?: number;
  /**
   * `"full"` (default): every commit is fsynced, durable across power loss. `"normal"`: WAL commits
   * survive a process crash (SIGKILL) but the last ones may roll back on power loss or an OS crash;
   * about 100× cheaper per commit on a slow disk.
   */
  readonly synchronous?: "full" | "normal";
  /**
   * Open an existing ledger without changing it. Default `false`. `true`: the file is opened
   * read-only and must already hold a ledger at this toolgate's schema version (otherwise a
   * {@link ToolgateConfigError} `E_LEDGER_MISSING` — no file, or no ledger in it — or
   * `E_LEDGER_SCHEMA`); nothing is created or migrated and the journal mode is left alone;
   * `claim`, `recordEffect`, `settle` and `prune` reject (`E_LEDGER_READONLY`). For tools that only look, such as `toolgate ledger list`.
   */
  readonly readonly?: boolean;
}

const toolFilter = (q: ListQuery): [string | null, string | null] => {
  const t = q.tool === undefined ? null : _storable(q.tool);
  return [t, t];
};

type Op = { fn: () => unknown; resolve: (v: unknown) => void; reject: (e: unknown) => void };

function bad(message: string): never {
  throw new ToolgateConfigError("E_LEDGER_OPTIONS", `sqliteLedger: ${message}`);
}

/** The toolgate-owned table holding the schema version (the application's `PRAGMA user_version` is left alone). */
const SCHEMA_TABLE = "toolgate_schema";

function hasTable(db: Database.Database, name: string): boolean {
  return db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(name) !== undefined;
}

/**
 * The applied migrations: `toolgate_schema.version`; a file with the ledger table and no version
 * table is version 1 (written by toolgate 0.1, which kept the version in `PRAGMA user_version`);
 * a file without the ledger table is 0.
 */
function schemaVersion(db: Database.Database): number {
  if (hasTable(db, SCHEMA_TABLE)) {
    const row = db.prepare(`SELECT max(version) AS v FROM ${SCHEMA_TABLE}`).get() as { v: number | null } | undefined;
    return Number(row?.v ?? 0);
  }
  return hasTable(db, "toolgate_ledger") ? 1 : 0;
}

/**
 * How long one statement may wait for another process's lock before it gives the event loop back:
 * better-sqlite3 waits synchronously, so a longer wait would freeze every call of the process. The
 * ledger's writes wait the rest of `busyTimeoutMs` in slices (see `flush`); opening waits it all.
 */
const BUSY_SLICE_MS = 25;
/** The pause between two tries of a write that found the file locked, ms. */
const BUSY_RETRY_MS = 10;

/** SQLite's "the file is locked by another connection" (SQLITE_BUSY and its extended codes). */
function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("SQLITE_BUSY");
}

const SLEEP = new Int32Array(new SharedArrayBuffer(4));

/**
 * @internal Run `fn`, trying again while the file is locked, for up to `budgetMs` in all. Synchronous (for
 * opening, which the constructor does): SQLite does not call its busy handler for every lock it
 * waits for (switching a new file to WAL, a lock upgrade that could deadlock), so it answers
 * SQLITE_BUSY at once there however long `busy_timeout` is.
 */
export function _whileBusy<T>(budgetMs: number, fn: () => T): T {
  const start = performance.now();
  for (let pause = 2; ; pause = Math.min(pause * 2, 50)) {
    try {
      return fn();
    } catch (e) {
      if (!isBusy(e) || performance.now() - start >= budgetMs) throw e;
      Atomics.wait(SLEEP, 0, 0, pause);
    }
  }
}

/** A file's device and inode; undefined when it is not there. */
function fileIdentity(path: string): { dev: number; ino: number } | undefined {
  try {
    const s = statSync(path);
    return { dev: s.dev, ino: s.ino };
  } catch {
    return undefined;
  }
}

function open(Sqlite: typeof Database, path: string, busyTimeoutMs: number, synchronous: "full" | "normal"): Database.Database {
  let db: Database.Database;
  try {
    db = new Sqlite(path);
  } catch (e) {
    throw new ToolgateConfigError("E_LEDGER_OPEN", `sqliteLedger: cannot open ${JSON.stringify(path)}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
  const migrate = db.transaction(() => {
    const v = schemaVersion(db);
    if (v > SQLITE_MIGRATIONS.length) {
      throw new ToolgateConfigError("E_LEDGER_SCHEMA", `sqliteLedger: ${JSON.stringify(path)} has schema version ${v}, newer than this toolgate (${SQLITE_MIGRATIONS.length})`);
    }
    for (let i = v; i < SQLITE_MIGRATIONS.length; i++) db.exec(SQLITE_MIGRATIONS[i]!);
    if (!hasTable(db, SCHEMA_TABLE)) {
      db.exec(`CREATE TABLE ${SCHEMA_TABLE} (version INTEGER NOT NULL)`);
      db.prepare(`INSERT INTO ${SCHEMA_TABLE} (version) VALUES (?)`).run(SQLITE_MIGRATIONS.length);
    } else if (v !== SQLITE_MIGRATIONS.length) db.prepare(`UPDATE ${SCHEMA_TABLE} SET version = ?`).run(SQLITE_MIGRATIONS.length);
    // One real write, always: SQLite opens a file it may not write read-only without a word, and
    // only a write says so. Better at start-up than as every write call's RETRYABLE.
    db.exec(`UPDATE ${SCHEMA_TABLE} SET version = version`);
  });
  try {
    db.pragma(`busy_timeout = ${Math.min(busyTimeoutMs, BUSY_SLICE_MS)}`);
    _whileBusy(busyTimeoutMs, () => {
      if (db.pragma("journal_mode", { simple: true }) !== "wal") db.pragma("journal_mode = WAL");
    });
    db.pragma(`synchronous = ${synchronous === "normal" ? "NORMAL" : "FULL"}`);
    _whileBusy(busyTimeoutMs, () => migrate.immediate());
  } catch (e) {
    db.close();
    if (e instanceof ToolgateConfigError) throw e;
    throw new ToolgateConfigError("E_LEDGER_OPEN", `sqliteLedger: cannot open ${JSON.stringify(path)} for writing: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
  return db;
}

/** Open an existing ledger file read-only and check its schema; creates and changes nothing. */
function openReadonly(Sqlite: typeof Database, path: string, busyTimeoutMs: number): Database.Database {
  if (path === ":memory:") bad('readonly needs a database file, not ":memory:"');
  let db: Database.Database;
  try {
    db = new Sqlite(path, { readonly: true, fileMustExist: true });
  } catch (e) {
    if (!existsSync(path)) throw new ToolgateConfigError("E_LEDGER_MISSING", `sqliteLedger: no ledger database at ${JSON.stringify(path)}`);
    throw new ToolgateConfigError("E_LEDGER_OPEN", `sqliteLedger: cannot open ${JSON.stringify(path)}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
  try {
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    let table: unknown;
    let v: number;
    try {
      table = hasTable(db, "toolgate_ledger") ? true : undefined;
      v = schemaVersion(db);
    } catch (e) {
      throw new ToolgateConfigError("E_LEDGER_OPEN", `sqliteLedger: cannot read ${JSON.stringify(path)}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    }
    if (table === undefined) {
      throw new ToolgateConfigError("E_LEDGER_MISSING", `sqliteLedger: ${JSON.stringify(path)} holds no toolgate ledger (no table toolgate_ledger)`);
    }
    checkVersion(path, v);
    return db;
  } catch (e) {
    db.close();
    throw e;
  }
}

/** A read-only open needs the schema this toolgate writes: it cannot migrate. */
function checkVersion(path: string, v: number): void {
  const n = SQLITE_MIGRATIONS.length;
  if (v > n) throw new ToolgateConfigError("E_LEDGER_SCHEMA", `sqliteLedger: ${JSON.stringify(path)} has schema version ${v}, newer than this toolgate (${n})`);
  if (v < n) {
    throw new ToolgateConfigError("E_LEDGER_SCHEMA", `sqliteLedger: ${JSON.stringify(path)} has schema version ${v}, older than this toolgate (${n}); a gate opening it read-write migrates it`);
  }
}

/**
 * A durable ledger in a SQLite file; creates and migrates its schema on open (throws
 * {@link ToolgateConfigError} if the file cannot be opened or is from a newer schema), unless
 * opened `readonly`, which changes nothing and needs an existing ledger. Needs the optional peer
 * `better-sqlite3` (`npm install better-sqlite3`), loaded here on first use: without it this
 * throws `E_LEDGER_DRIVER`.
 * @example
 * const ledger = sqliteLedger({ path: "toolgate.db" });
 * const gate = createGate({ tools, ledger });
 * const view = sqliteLedger({ path: "toolgate.db", readonly: true }); // look, never write
 * console.log(await view.unresolved());
 */
export function sqliteLedger(options: SqliteLedgerOptions): Ledger {
  if (typeof options !== "object" || options === null) bad("expected an options object with a path");
  if (typeof options.path !== "string" || options.path.length === 0) bad("path must be a non-empty string");
  const busyTimeoutMs = options.busyTimeoutMs ?? 5_000;
  if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0) bad("busyTimeoutMs must be an integer ≥ 0 (ms)");
  const synchronous = options.synchronous ?? "full";
  if (synchronous !== "full" && synchronous !== "normal") bad('synchronous must be "full" or "normal"');
  const readonly = options.readonly ?? false;
  if (typeof readonly !== "boolean") bad("readonly must be a boolean");
  const { ttlMs, now } = _commonOptions("sqliteLedger", options);
  const Sqlite = _sqliteDriver();
  const db = readonly ? openReadonly(Sqlite, options.path, busyTimeoutMs) : open(Sqlite, options.path, busyTimeoutMs, synchronous);
  // Resolved once, as SQLite resolved it: a later process.chdir must not make the file look moved.
  const path = options.path === ":memory:" || options.path === "" ? options.path : resolvePath(options.path);
  /**
   * The file this process writes: its device and inode when opened. A ledger file deleted or
   * replaced under a running gate (an operator's `rm`, a restore by rename) would go on taking this
   * process's claims unseen by every other (WAL mode does not notice), and a new process would
   * create a fresh ledger and run the same key again. Checked once per group commit (one stat).
   */
  const opened = readonly || path === ":memory:" || path === "" ? undefined : fileIdentity(path);
  let moved = false;
  const movedAway = (): boolean => {
    if (opened === undefined || moved) return moved;
    const now = fileIdentity(path);
    moved = now === undefined || now.dev !== opened.dev || now.ino !== opened.ino;
    return moved;
  };

  const T = "toolgate_ledger";
  const C = "toolgate_ledger_calls";
  const q = {
    insert: db.prepare(`INSERT INTO ${T} (${_COLUMNS.join(", ")}) VALUES (${_COLUMNS.map(() => "?").join(", ")})`),
    takenFrom: db.prepare(`INSERT INTO ${C} (call_id, id) VALUES (?, ?)`),
    byKey: db.prepare(`SELECT * FROM ${T} WHERE key_hash = ?`),
    freeKey: db.prepare(`UPDATE ${T} SET key_hash = NULL WHERE id = ?`),
    takeover: db.prepare(
      `UPDATE ${T} SET call_id = ?, version = ?, owner = ?, state = 'in_flight', code = NULL, effect = 'unknown', result = NULL, attempts = 0, claims = ?, updated_at = ?, lease_until = ?, expires_at = ? WHERE id = ?`,
    ),
    effect: db.prepare(
      `UPDATE ${T} SET effects = json_insert(effects, '$[#]', json(?)), updated_at = ? WHERE id = ? AND owner = ? AND state = 'in_flight'`,
    ),
    settle: db.prepare(
      `UPDATE ${T} SET state = 'settled', code = ?, effect = ?, result = ?, attempts = ?, key_hash = CASE WHEN ? THEN NULL ELSE key_hash END, expires_at = MAX(expires_at, ?), updated_at = ? WHERE id = ? AND owner = ? AND state = 'in_flight'`,
    ),
    byId: db.prepare(`SELECT * FROM ${T} WHERE id = ?`),
    byCallId: db.prepare(`SELECT * FROM ${T} WHERE call_id = ? ORDER BY created_at DESC, rowid DESC LIMIT 1`),
    byEarlierCallId: db.prepare(`SELECT l.* FROM ${C} c JOIN ${T} l ON l.id = c.id WHERE c.call_id = ? ORDER BY c.seq DESC LIMIT 1`),
    list: db.prepare(`SELECT * FROM ${T} WHERE (? IS NULL OR tool = ?) ORDER BY created_at DESC, rowid DESC LIMIT ?`),
    unresolved: db.prepare(
      `SELECT * FROM ${T} WHERE (state = 'in_flight' OR effect = 'unknown') AND (? IS NULL OR tool = ?) ORDER BY created_at ASC, rowid ASC LIMIT ?`,
    ),
    pruneCalls: db.prepare(`DELETE FROM ${C} WHERE id IN (SELECT id FROM ${T} WHERE ${_PRUNE_WHERE("?", "?")})`),
    prune: db.prepare(`DELETE FROM ${T} WHERE ${_PRUNE_WHERE("?", "?")}`),
  };

  // Group commit: writes queued in one event-loop turn share one transaction (one fsync); each
  // runs in its own savepoint so one failing write does not undo the others.
  let queue: Op[] = [];
  let closed = false;
  type Results = ({ ok: true; v: unknown } | { ok: false; e: unknown })[];
  const savepoint = db.transaction((fn: () => unknown) => fn()); // nested inside a transaction: a SAVEPOINT
  const batchTx = db.transaction((batch: readonly Op[], results: Results) => {
    if (batch.length === 1) {
      results.push({ ok: true, v: batch[0]!.fn() }); // alone: a throw rolls back only this write
      return;
    }
    for (const op of batch) {
      try {
        results.push({ ok: true, v: savepoint(op.fn) });
      } catch (e) {
        results.push({ ok: false, e });
      }
    }
  });
  /** When the batch waiting to be written first found the file locked by another process. */
  let busySince: number | undefined;
  /** The timer of that batch's next try. */
  let retry: ReturnType<typeof setTimeout> | undefined;
  const flush = (): void => {
    const batch = queue;
    queue = [];
    if (movedAway()) {
      const e = new ToolgateConfigError("E_LEDGER_MOVED", `sqliteLedger: ${JSON.stringify(path)} was deleted or replaced since this process opened it; it writes no more (restart the process on the ledger file)`);
      for (const op of batch) op.reject(_nothingStored(e));
      return;
    }
    const results: Results = [];
    try {
      batchTx.immediate(batch, results);
    } catch (e) {
      // The transaction rolled back (or never began): nothing of the batch was stored, so it may be
      // tried again. While another process holds the lock, the batch waits in slices, the event
      // loop free between them, for up to busyTimeoutMs; writes queued meanwhile join it.
      if (isBusy(e) && !closed) {
        const t = performance.now();
        busySince ??= t;
        if (t - busySince < busyTimeoutMs) {
          queue = batch;
          retry = outsideCalls(() =>
            setTimeout(() => {
              retry = undefined;
              flush();
            }, BUSY_RETRY_MS),
          );
          return;
        }
      }
      busySince = undefined;
      for (const op of batch) op.reject(_nothingStored(e));
      return;
    }
    busySince = undefined;
    batch.forEach((op, i) => {
      const r = results[i]!;
      if (r.ok) op.resolve(r.v);
      else op.reject(_nothingStored(r.e)); // its savepoint rolled back
    });
  };
  const write = <V>(fn: () => V): Promise<V> =>
    new Promise<V>((resolve, reject) => {
      if (closed) return reject(new Error("sqliteLedger: the ledger is closed"));
      if (readonly) return reject(new ToolgateConfigError("E_LEDGER_READONLY", "sqliteLedger: opened read-only; it cannot write"));
      // The flush serves every call queued (and reads the clock, `now`): it runs in none of their contexts.
      if (queue.length === 0) outsideCalls(() => setImmediate(flush));
      queue.push({ fn, resolve: resolve as (v: unknown) => void, reject });
    });
  /** A read; one that finds the file locked (rare in WAL mode: a checkpoint, a recovery) tries again, for up to busyTimeoutMs. */
  const read = <V>(fn: () => V): Promise<V> => {
    if (closed) return Promise.reject(new Error("sqliteLedger: the ledger is closed"));
    const start = performance.now();
    const attempt = (): Promise<V> =>
      Promise.resolve()
        .then(fn)
        .catch((e: unknown) => {
          if (!isBusy(e) || closed || performance.now() - start >= busyTimeoutMs) throw e;
          return new Promise<void>((r) => setTimeout(r, BUSY_RETRY_MS)).then(attempt);
        });
    return attempt();
  };

  const claimNow = (req: ClaimRequest): ClaimOutcome => {
    const t = now();
    const row = req.key === undefined ? undefined : (q.byKey.get(req.key.hash) as _Row | undefined);
    const d = _decide(row === undefined ? undefined : _fromRow(row), req, t);
    if (d.do === "answer") return d.outcome;
    if (d.do === "takeover") {
      const e = _takenOver(d.entry, req, t, ttlMs);
      q.takeover.run(e.callId, e.version, e.owner, e.claims, e.updatedAt, e.leaseUntil, e.expiresAt, e.id);
      q.takenFrom.run(d.entry.callId, e.id); // the call id it overwrote still finds the entry
      return { status: "claimed", entry: e, resumed: true };
    }
    if (d.expired !== undefined) q.freeKey.run(d.expired.id);
    const e = _newEntry(req, t, ttlMs);
    q.insert.run(..._toValues(e));
    return { status: "claimed", entry: e, resumed: false };
  };

  return {
    kind: "sqlite",
    ready: () => read(() => undefined),
    claim: (req) => {
      const r = _storableClaim(req);
      return write(() => claimNow(r));
    },
    recordEffect: (id: string, owner: string, effect: EffectRef) =>
      write(() => {
        const r = q.effect.run(JSON.stringify(_storableEffect(effect)), now(), id, owner);
        if (r.changes !== 1) throw new Error("sqliteLedger: the claim is no longer held");
      }),
    settle: (id: string, owner: string, settlement: Settlement) =>
      write(() => {
        const s = _storableSettlement(settlement);
        const t = now();
        return q.settle.run(s.code, s.effect, s.result, s.attempts, s.releaseKey ? 1 : 0, t + ttlMs, t, id, owner).changes === 1;
      }),
    get: (idOrCallId: string) =>
      read(() => {
        const k = _storable(idOrCallId);
        const row = (q.byId.get(k) ?? q.byCallId.get(k) ?? q.byEarlierCallId.get(k)) as _Row | undefined;
        return row === undefined ? undefined : _fromRow(row);
      }),
    list: (lq: ListQuery = {}) => read(() => (q.list.all(...toolFilter(lq), _limit(lq.limit)) as _Row[]).map(_fromRow)),
    unresolved: (lq: ListQuery = {}) =>
      read(() => (q.unresolved.all(...toolFilter(lq), _limit(lq.limit)) as _Row[]).map(_fromRow)),
    prune: (pq: PruneQuery = {}) =>
      write(() => {
        const t = now();
        const cutoff = pq.olderThanMs === undefined ? Number.MIN_SAFE_INTEGER : t - pq.olderThanMs;
        q.pruneCalls.run(t, cutoff); // in the same transaction as the entries they name
        return q.prune.run(t, cutoff).changes;
      }),
    close: async () => {
      if (closed) return;
      closed = true;
      if (retry !== undefined) {
        // A batch waiting for another process's lock: it was never written, and will not be now.
        clearTimeout(retry);
        retry = undefined;
        const waiting = queue;
        queue = [];
        for (const op of waiting) op.reject(_nothingStored(new Error("sqliteLedger: the ledger is closed")));
      }
      if (queue.length > 0) await new Promise<void>((r) => setImmediate(r));
      db.close();
    },
  };
}
