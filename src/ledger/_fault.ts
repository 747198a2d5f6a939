/**
 * Which ledger failures waiting will not mend. The gate answers a ledger it cannot reach with
 * RETRYABLE (a restart, a failover, a lock: later may work); a ledger that is misconfigured or
 * damaged answers the same way for ever, and an agent told "try again later" would loop. Those are
 * FAILED, not retryable: an operator has to act.
 * @module
 */
import { isToolgateConfigError } from "../errors.js";

/**
 * PostgreSQL SQLSTATEs that name the configuration, not the moment: refused credentials (class
 * 28), a database or schema that does not exist, missing privileges, a read-only transaction (a
 * standby, `default_transaction_read_only`), the ledger's table gone.
 */
const PG_PERMANENT = /^(28...|3D000|3F000|42501|25006|42P01)$/;
/** SQLite result codes of a file that is damaged, not a database, not writable or not openable. */
const SQLITE_PERMANENT = /^SQLITE_(CORRUPT|NOTADB|READONLY|CANTOPEN|PERM|AUTH)/;

/** SQLite's generic error code, permanent when its message says the ledger's table is gone (PostgreSQL's 42P01). */
const SQLITE_NO_TABLE = /^no such table\b/;

/** @internal Whether a ledger's failure is one that retrying will not mend (see the module). */
export function _permanentLedgerFault(e: unknown): boolean {
  if (isToolgateConfigError(e)) return true; // E_LEDGER_READONLY, E_LEDGER_SCHEMA, E_LEDGER_MISSING…
  if (typeof e !== "object" || e === null) return false;
  let code: unknown;
  let message: unknown;
  try {
    ({ code, message } = e as { code?: unknown; message?: unknown });
  } catch {
    return false;
  }
  if (typeof code !== "string") return false;
  // E_LEDGER_CORRUPT: a row the store cannot read back (./_row.ts), edited or damaged outside it.
  if (code === "E_LEDGER_CORRUPT" || PG_PERMANENT.test(code) || SQLITE_PERMANENT.test(code)) return true;
  return code === "SQLITE_ERROR" && typeof message === "string" && SQLITE_NO_TABLE.test(message);
}
