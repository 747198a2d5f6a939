/**
 * better-sqlite3, loaded on first use. Its own file, imported by no public module's types, so the
 * published declarations never name the optional peer `better-sqlite3` (a user without it, or without
 * its types, type-checks toolgate as well).
 * @module
 */
import type Database from "better-sqlite3";
import { _loadDriver } from "./_driver.js";

/**
 * better-sqlite3, loaded on the first `sqliteLedger(...)` (an optional peer dependency;
 * `toolgate demo` checks for it before it starts). It loads its native addon on the first open, not
 * on `require`: opening an in-memory database here makes a missing or foreign build (compiled for
 * another Node) a driver that could not be loaded, not a ledger file that cannot be opened.
 */
export function _sqliteDriver(): typeof Database {
  return _loadDriver<typeof Database>("better-sqlite3", "sqliteLedger", (D) => new D(":memory:").close());
}
