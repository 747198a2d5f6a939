/**
 * `toolgate ledger` prints stored text escaped (docs/ledger.md, "What is stored"): the line and
 * paragraph separators U+2028/U+2029 in table cells as control characters are, and the entry IDs of
 * rows toolgate did not write in its error messages (`E_AMBIGUOUS_ID`, `E_LEDGER_CORRUPT`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sqliteLedger } from "../../src/ledger/index.js";
import { ledgerCli } from "./_cli.js";

const dir = mkdtempSync(join(tmpdir(), "toolgate-cli-escapes-"));
const db = join(dir, "ledger.db");

const cli = ledgerCli;

/** What a terminal must never receive raw: C0/C1 controls, U+2028/U+2029, bidirectional overrides. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/** Rows toolgate did not write: copies of the first row with `set` applied (each its own id and key hash). */
async function addRows(rows: readonly Record<string, unknown>[]): Promise<void> {
  const { default: Database } = await import("better-sqlite3");
  const d = new Database(db);
  try {
    const cols = (d.prepare("PRAGMA table_info(toolgate_ledger)").all() as { name: string }[]).map((c) => c.name);
    const row = d.prepare("SELECT * FROM toolgate_ledger LIMIT 1").get() as Record<string, unknown>;
    rows.forEach((set, i) => {
      const r: Record<string, unknown> = { ...row, key_hash: `${String(row.key_hash)}-${String(set.id)}-${i}`, ...set };
      d.prepare(`INSERT INTO toolgate_ledger (${cols.join(",")}) VALUES (${cols.map(() => "?").join(",")})`).run(...cols.map((c) => r[c]));
    });
  } finally {
    d.close();
  }
}

beforeAll(async () => {
  const ledger = sqliteLedger({ path: db });
  const id = "00000000-0000-4000-8000-000000000001"; // no prefix the tests below use
  // An in flight call whose key and effect ref hold the line and paragraph separators.
  await ledger.claim({ id, owner: "o", callId: "c-1", tool: "pay", version: "1.0.0", principal: null, key: { display: "line\u2028sep\u2029para", hash: "h-1" }, fingerprint: "f", leaseMs: 60_000, takeover: false });
  await ledger.recordEffect(id, "o", { kind: "charge", ref: "ch\u2028forged" });
  await ledger.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("toolgate ledger escapes what it prints", () => {
  it("list and unresolved escape U+2028 and U+2029 in keys and effect refs, as --json does", async () => {
    const list = await cli("list", "--db", db);
    expect(list.code).toBe(0);
    expect(list.stdout).not.toMatch(RAW);
    expect(list.stdout).toContain("line\\u2028sep\\u2029para");
    const open = await cli("unresolved", "--db", db);
    expect(open.code).toBe(1);
    expect(open.stdout).not.toMatch(RAW);
    expect(open.stdout).toContain("charge:ch\\u2028forged");
    expect(open.stdout.trim().split("\n")).toHaveLength(2); // the header and one row: nothing forged
    expect((await cli("list", "--db", db, "--json")).stdout).toContain("line\\u2028sep\\u2029para");
  });

  it("an ambiguous prefix names the stored IDs escaped (E_AMBIGUOUS_ID)", async () => {
    await addRows([{ id: "abcd1-\u001b[2J\u001b[H\u001b[31mFAKE\u001b[0m" }, { id: "abcd2-\u202eevil\u2028x" }]);
    const r = await cli("show", "abcd", "--db", db);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("(E_AMBIGUOUS_ID)");
    expect(r.stderr).not.toMatch(RAW);
    expect(r.stderr).toContain("abcd1-\\x1b[2J\\x1b[H\\x1b[31mFAKE\\x1b[0m, abcd2-\\u202eevil\\u2028x");
  });

  it("a corrupt row is named by its ID escaped (E_LEDGER_CORRUPT), in show and in list", async () => {
    await addRows([{ id: "bcde-\u001b[31m\u2029x", result: "{not json" }]);
    const shown = await cli("show", "bcde", "--db", db);
    expect(shown.code).toBe(2);
    expect(shown.stderr).not.toMatch(RAW);
    expect(shown.stderr).toContain("entry bcde-\\x1b[31m\\u2029x: the stored result is not valid JSON");
    await addRows([{ id: "cdef-\u001b]0;TITLE\u0007", effects: "[oops" }]);
    const listed = await cli("list", "--db", db);
    expect(listed.code).toBe(2);
    expect(listed.stderr).not.toMatch(RAW);
    expect(listed.stderr).toContain("cannot read the ledger: entry cdef-\\x1b]0;TITLE\\x07: the stored effects list is not valid JSON");
    expect(listed.stderr).toContain("(E_LEDGER_CORRUPT)");
  });
});
