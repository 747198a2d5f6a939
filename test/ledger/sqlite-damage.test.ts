/**
 * A SQLite ledger damaged outside toolgate (a row's effects column that is not JSON, the ledger's
 * table dropped) is answered as a ledger waiting will not mend: FAILED, not retryable, nothing
 * ran, and the hook hears why. Before, both answered RETRYABLE "try again later" on every call.
 */
import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { createGate } from "../../src/index.js";
import { sqliteLedger } from "../../src/ledger/index.js";
import { payTool } from "./_fixtures.js";

const BROKEN = { ok: false, code: "FAILED", retryable: false, effect: "none", message: "The ledger cannot record this call (misconfigured or damaged); nothing was executed; an operator must fix it" };

describe("a damaged sqlite ledger", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  async function setup() {
    const dir = mkdtempSync(join(tmpdir(), "toolgate-damage-"));
    dirs.push(dir);
    const path = join(dir, "ledger.db");
    const runs = { n: 0 };
    const hooks: unknown[] = [];
    const tool = payTool(async (i) => ({ paymentId: `p${++runs.n}`, orderId: i.orderId }));
    const ledger = sqliteLedger({ path });
    const gate = createGate({ tools: [tool], ledger, onHookError: (_h, e) => void hooks.push(e) });
    expect(await gate.call("pay", { orderId: "o_1", amountCents: 5 }, { idempotencyKey: "k" })).toMatchObject({ ok: true });
    return { path, runs, hooks, ledger, gate };
  }

  it("a row whose effects are not JSON: FAILED, not retryable, on every try; the write never runs again", async () => {
    const { path, runs, hooks, ledger, gate } = await setup();
    const other = new Database(path);
    other.prepare("UPDATE toolgate_ledger SET effects = 'garbage'").run();
    other.close();
    for (let i = 0; i < 2; i++) expect(await gate.call("pay", { orderId: "o_1", amountCents: 5 }, { idempotencyKey: "k" })).toMatchObject(BROKEN);
    expect(runs.n).toBe(1);
    expect(hooks).toContainEqual(expect.objectContaining({ code: "E_LEDGER_CORRUPT" }));
    await ledger.close();
  });

  it("the ledger's table dropped under a running gate: FAILED, not retryable (as PostgreSQL's 42P01)", async () => {
    const { path, runs, hooks, ledger, gate } = await setup();
    const other = new Database(path);
    other.prepare("DROP TABLE toolgate_ledger").run();
    other.close();
    expect(await gate.call("pay", { orderId: "o_2", amountCents: 5 }, { idempotencyKey: "k2" })).toMatchObject(BROKEN);
    expect(runs.n).toBe(1);
    expect(hooks).toContainEqual(expect.objectContaining({ code: "SQLITE_ERROR", message: expect.stringMatching(/^no such table/) }));
    await ledger.close();
  });
});
