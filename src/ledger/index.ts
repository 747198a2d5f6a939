/**
 * `toolgate/ledger`: durable records of write calls, so writes are exactly-once across retries,
 * replicas and crashes. Pass one to `createGate({ ledger })`. The SQLite and PostgreSQL stores
 * need their driver installed (`better-sqlite3`, `pg`: optional peer dependencies, loaded when the
 * store is created, never by importing this module).
 *
 * @example
 * import { createGate } from "toolgate";
 * import { sqliteLedger } from "toolgate/ledger";
 * const gate = createGate({ tools, ledger: sqliteLedger({ path: "toolgate.db" }) });
 * await gate.call("create_refund", args, { idempotencyKey: "refund-o_100" });
 * @module
 */
export { memoryLedger } from "./memory.js";
export type { MemoryLedgerOptions } from "./memory.js";
export { sqliteLedger } from "./sqlite.js";
export type { SqliteLedgerOptions } from "./sqlite.js";
export { postgresLedger } from "./postgres.js";
export type { PostgresLedgerOptions } from "./postgres.js";
export { DEFAULT_TTL_MS, MAX_TTL_MS } from "./_decide.js";
export type {
  ClaimOutcome,
  ClaimRequest,
  EntryState,
  Ledger,
  LedgerEntry,
  LedgerOptions,
  ListQuery,
  PruneQuery,
  Settlement,
} from "./types.js";
