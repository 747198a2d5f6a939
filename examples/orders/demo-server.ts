/**
 * The module `toolgate serve` loads for `toolgate demo`: the orders tools over a SQLite orders
 * database, behind a gate with a SQLite ledger. Paths come from the environment the demo sets:
 * `TOOLGATE_DEMO_DB` (orders) and `TOOLGATE_DEMO_LEDGER` (the ledger file).
 */
import { createGate } from "../../src/index.js";
import { sqliteLedger } from "../../src/ledger/index.js";
import { makeOrderTools } from "./tools.js";
import { openSqliteOrders } from "./sqlite-service.js";

function required(name: string): string {
  const v = process.env[name];
  if (v === undefined || v.length === 0) throw new Error(`${name} is not set; this module is started by \`toolgate demo\``);
  return v;
}

const orders = openSqliteOrders(required("TOOLGATE_DEMO_DB"));

// create_refund has an idempotency key and a service that deduplicates on it, so the gate may retry
// a refund whose response was lost: the retry carries the same key and gets the refund already
// committed. The ledger replays a resent call with the same key without executing it.
export default createGate({
  tools: makeOrderTools(orders),
  ledger: sqliteLedger({ path: required("TOOLGATE_DEMO_LEDGER") }),
});
