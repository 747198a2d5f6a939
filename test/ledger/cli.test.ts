/** `toolgate ledger …` against a real SQLite file and a real PostgreSQL database, spawned as users run it. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { createGate, reject } from "../../src/index.js";
import { postgresLedger, sqliteLedger, type Ledger } from "../../src/ledger/index.js";
import { payTool, Reset } from "./_fixtures.js";
import { startPostgres, type TestPostgres } from "./_pg.js";
import { ledgerCli } from "./_cli.js";

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "toolgate-cli-"));
let pgServer: TestPostgres;
let pgUrl = "";

const cli = ledgerCli;

/** Run the CLI as users do: a child process. */
async function spawnCli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, ["--import", "tsx", "src/cli/main.ts", "ledger", ...args], { cwd: process.cwd() });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, stdout: x.stdout, stderr: x.stderr };
  }
}

/** One unkeyed OK, one settled OK, one settled REJECTED, one FAILED applied, one abandoned in flight (a crash two hours ago). */
async function seed(open: (now?: () => number) => Ledger): Promise<void> {
  const ledger = open();
  const pay = payTool(async (i, ctx) => {
    if (i.orderId === "declined") throw reject("declined");
    if (i.orderId === "lost") {
      await ctx.recordEffect({ kind: "charge", ref: "ch_lost" });
      throw new Reset("lost");
    }
    return { paymentId: "p_1", orderId: i.orderId };
  });
  const gate = createGate({ tools: [pay], ledger });
  await gate.call("pay", { orderId: "unkeyed", amountCents: 1 }); // holds no key: `prune --older-than` may remove it
  await gate.call("pay", { orderId: "ok", amountCents: 1 }, { idempotencyKey: "k-ok" });
  await gate.call("pay", { orderId: "declined", amountCents: 1 }, { idempotencyKey: "k-declined" });
  await gate.call("pay", { orderId: "lost", amountCents: 1 }, { idempotencyKey: "k-lost" });
  const past = open(() => Date.now() - 2 * 3_600_000);
  await past.claim({ id: crypto.randomUUID(), owner: "dead", callId: "c-dead", tool: "pay", version: "1.0.0", principal: null, key: { display: "k-dead", hash: "h-dead" }, fingerprint: "f", leaseMs: 60_000, takeover: false });
  await Promise.all([ledger.close(), past.close()]);
}

beforeAll(async () => {
  pgServer = await startPostgres();
  pgUrl = await pgServer.newDatabase();
  await seed((now) => sqliteLedger({ path: join(dir, "cli.db"), ...(now ? { now } : {}) }));
  await seed((now) => postgresLedger({ connectionString: pgUrl, ...(now ? { now } : {}) }));
}, 120_000);
afterAll(async () => {
  await pgServer?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe.each([
  { name: "sqlite", db: () => join(dir, "cli.db") },
  { name: "postgres", db: () => pgUrl },
])("toolgate ledger ($name)", ({ db }) => {
  it("list --json shows every write call, newest first, without arguments", async () => {
    const r = await cli("list", "--db", db(), "--json");
    expect(r.code).toBe(0);
    const rows = JSON.parse(r.stdout) as { key: string; status: string; effect: string }[];
    expect(rows.map((x) => [x.key, x.status, x.effect])).toEqual([
      ["k-lost", "FAILED", "applied"],
      ["k-declined", "REJECTED", "none"],
      ["k-ok", "ok", "applied"],
      [null, "ok", "applied"],
      ["k-dead", "abandoned", "unknown"],
    ]);
    expect(r.stdout).not.toContain("amountCents");
  });

  it("unresolved lists the abandoned call with age and effects, and exits 1 (as a process)", async () => {
    const r = await spawnCli("unresolved", "--db", db());
    expect(r.code).toBe(1);
    const lines = r.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^ID\s+AGE\s+TOOL\s+STATUS\s+EFFECT\s+KEY\s+EFFECTS$/);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/\s2h\s+pay@1\.0\.0\s+abandoned\s+unknown\s+k-dead\s+-$/);
    const j = JSON.parse((await cli("unresolved", "--db", db(), "--json")).stdout) as { callId: string; ageMs: number }[];
    expect(j.map((x) => x.callId)).toEqual(["c-dead"]);
    expect(j[0]!.ageMs).toBeGreaterThan(7_000_000);
  });

  it("show prints one entry with its stored result; prune removes resolved entries, keeps the unresolved", async () => {
    const list = JSON.parse((await cli("list", "--db", db(), "--json")).stdout) as { id: string; key: string; callId: string }[];
    const lost = list.find((x) => x.key === "k-lost")!;
    const r = await cli("show", lost.callId, "--db", db(), "--json");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ id: lost.id, effects: [{ kind: "charge", ref: "ch_lost" }], result: { ok: false, code: "FAILED", effect: "applied" } });
    expect((await cli("show", "nope", "--db", db())).code).toBe(1);
    expect(JSON.parse((await cli("prune", "--db", db(), "--json")).stdout)).toEqual({ removed: 0 }); // nothing expired
    const p = await cli("prune", "--db", db(), "--older-than", "0s", "--json");
    expect(p.code).toBe(0);
    const after = (JSON.parse((await cli("list", "--db", db(), "--json")).stdout) as { key: string | null }[]).map((x) => x.key);
    expect(JSON.parse(p.stdout)).toEqual({ removed: list.length - after.length });
    // Entries holding a live key stay (a retry must still replay), and so does the unresolved one; the unkeyed goes.
    expect(after).toEqual(expect.arrayContaining(["k-lost", "k-ok", "k-dead"]));
    expect(after).not.toContain(null);
  });

  it("show accepts the 8-character ID that list prints", async () => {
    const table = (await cli("list", "--db", db())).stdout.trim().split("\n").slice(1);
    const lost = table.find((l) => /\sk-lost$/.test(l))!;
    const short = lost.split(/\s+/)[0]!;
    expect(short).toMatch(/^[0-9a-f]{8}$/);
    const r = await cli("show", short, "--db", db(), "--json");
    expect(r.code).toBe(0);
    const shown = JSON.parse(r.stdout) as { id: string; key: string };
    expect(shown.key).toBe("k-lost");
    expect(shown.id.startsWith(short)).toBe(true);
  });
});

describe("toolgate ledger show <ID prefix>", () => {
  const file = join(dir, "prefix.db");
  const ids = ["abcd1234-0000-4000-8000-000000000001", "abcd5678-0000-4000-8000-000000000002", "ffff9999-0000-4000-8000-000000000003"];
  beforeAll(async () => {
    const ledger = sqliteLedger({ path: file });
    for (const [i, id] of ids.entries()) {
      // The third entry's call id is also the first entry's ID prefix.
      await ledger.claim({ id, owner: "o", callId: i === 2 ? "abcd12" : `c-${i}`, tool: "pay", version: "1.0.0", principal: null, key: { display: `k-${i}`, hash: `h-${i}` }, fingerprint: "f", leaseMs: 60_000, takeover: false });
    }
    await ledger.close();
  });

  it("a full ID in upper case is found; a call id that is also another entry's ID prefix is ambiguous (exit 2)", async () => {
    const upper = await cli("show", ids[0]!.toUpperCase(), "--db", file, "--json");
    expect([upper.code, (JSON.parse(upper.stdout || "{}") as { id?: string }).id]).toEqual([0, ids[0]]);
    const both = await cli("show", "abcd12", "--db", file);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/ID prefix "abcd12" is ambiguous: it matches abcd1234-0000-4000-8000-000000000001, ffff9999-0000-4000-8000-000000000003/);
  });

  it("a unique prefix shows that entry; the full ID and the call id still work", async () => {
    for (const arg of ["abcd1234", "abcd5", ids[1]!, "c-1"]) {
      const r = await cli("show", arg, "--db", file, "--json");
      expect(r.code, arg).toBe(0);
      expect((JSON.parse(r.stdout) as { id: string }).id).toBe(arg === "abcd1234" ? ids[0] : ids[1]);
    }
  });

  it("an ambiguous prefix is refused with the matching IDs, exit 2", async () => {
    const r = await cli("show", "abcd", "--db", file);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/ID prefix "abcd" is ambiguous: it matches abcd1234-0000-4000-8000-000000000001, abcd5678-0000-4000-8000-000000000002; give more characters \(E_AMBIGUOUS_ID\)/);
  });

  it("no match is exit 1, a prefix shorter than 4 characters too (with the hint)", async () => {
    const none = await cli("show", "ffff0000", "--db", file);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/no entry "ffff0000"/);
    const short = await cli("show", "abc", "--db", file);
    expect(short.code).toBe(1);
    expect(short.stderr).toMatch(/an ID prefix needs at least 4 characters/);
  });

  it("the usage names the prefix form", async () => {
    const r = await cli("--help");
    expect(r.stdout).toMatch(/show <id>\s+one entry \(by entry ID, a unique prefix of it as list prints it, or call id\)/);
  });
});

describe("toolgate ledger on something that is not a ledger", () => {
  it("list, show and unresolved refuse a SQLite file without a ledger (exit 2) and change nothing in it", async () => {
    const { default: Database } = await import("better-sqlite3");
    const path = join(dir, "other.db");
    const other = new Database(path);
    other.exec("CREATE TABLE notes (x TEXT)");
    other.close();
    for (const args of [["list"], ["unresolved"], ["show", "abc"], ["prune", "--older-than", "1h"]]) {
      const r = await cli(...args, "--db", path);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("holds no toolgate ledger");
      expect(r.stderr).toContain("E_LEDGER_MISSING");
    }
    const db = new Database(path, { readonly: true });
    expect(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all()).toEqual([{ name: "notes" }]);
    expect(db.pragma("user_version", { simple: true })).toBe(0);
    expect(db.pragma("journal_mode", { simple: true })).toBe("delete");
    db.close();
  });

  it("list on a ledger file leaves the database file byte-for-byte unchanged", async () => {
    const { readFileSync } = await import("node:fs");
    const path = join(dir, "cli.db");
    const before = readFileSync(path);
    expect((await cli("list", "--db", path)).code).toBe(0);
    expect((await cli("unresolved", "--db", path)).code).toBe(1);
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it("a flag the subcommand does not use, or a --limit out of range, is a usage error (exit 2), not ignored", async () => {
    const db = join(dir, "flags.db");
    for (const args of [["list", "--older-than", "7d"], ["show", "x", "--limit", "3"], ["prune", "--tool", "pay"], ["list", "--limit", "10001"], ["list", "--limit", "0"], ["list", "--limit", "0x10"], ["list", "--limit", "1e2"], ["list", "--limit", " 5"]]) {
      const r = await cli(...args, "--db", db);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toMatch(/does not apply|--limit must be/);
    }
  });

  it("a directory given as --db is named as one (exit 2), not a disk I/O error", async () => {
    const r = await cli("list", "--db", dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("is a directory; --db takes the ledger's SQLite file (E_DB_NOT_FOUND)");
  });

  it("a stored value toolgate did not write is reported by entry and column (E_LEDGER_CORRUPT, exit 2); a bad time or code prints as ?", async () => {
    const { default: Database } = await import("better-sqlite3");
    const path = join(dir, "corrupt.db");
    const ledger = sqliteLedger({ path });
    const gate = createGate({ tools: [payTool(async (i) => ({ paymentId: "p_1", orderId: i.orderId }))], ledger });
    const r0 = await gate.call("pay", { orderId: "o", amountCents: 1 }, { idempotencyKey: "k-corrupt" });
    expect(r0.ok).toBe(true);
    await ledger.close();
    const id = String((new Database(path, { readonly: true }).prepare("SELECT id FROM toolgate_ledger").get() as { id: string }).id);
    const edit = (sql: string) => {
      const db = new Database(path);
      db.exec(sql);
      db.close();
    };
    edit("UPDATE toolgate_ledger SET result = '{not json'");
    const shown = await cli("show", id.slice(0, 8), "--db", path);
    expect(shown.code).toBe(2);
    expect(shown.stderr).toContain(`entry ${id}: the stored result is not valid JSON`);
    expect(shown.stderr).toContain("(E_LEDGER_CORRUPT)");
    edit("UPDATE toolgate_ledger SET effects = '[oops'");
    const listed = await cli("list", "--db", path);
    expect(listed.code).toBe(2);
    expect(listed.stderr).toContain(`cannot read the ledger: entry ${id}: the stored effects list is not valid JSON`);
    edit("UPDATE toolgate_ledger SET effects = '[]', created_at = 'soon', code = NULL");
    const odd = await cli("list", "--db", path);
    expect(odd.code).toBe(0);
    expect(odd.stdout.split("\n")[1]).toMatch(new RegExp(`^${id.slice(0, 8)}  \\? +pay@1\\.0\\.0 +\\? +`));
  });

  it("list and unresolved print stored text with control characters escaped: a key cannot erase a line or forge a row", async () => {
    const path = join(dir, "escapes.db");
    const ledger = sqliteLedger({ path });
    const key = "abc\u001b[2K\rFORGED\nf00dbeef  9s  pay@1.0.0  ok  none  fake\u202e";
    const gate = createGate({ tools: [payTool(async (i) => ({ paymentId: "p_1", orderId: i.orderId }))], ledger });
    expect((await gate.call("pay", { orderId: "o", amountCents: 1 }, { idempotencyKey: key })).ok).toBe(true);
    await ledger.close();
    const r = await cli("list", "--db", path);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(2); // the header and the one entry: no forged row
    // eslint-disable-next-line no-control-regex -- finding control characters is the point
    expect(r.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
    expect(lines[1]).toContain("abc\\x1b[2K\\x0dFORGED\\x0af00dbeef  9s  pay@1.0.0  ok  none  fake\\u202e");
    // show and --json print JSON: it escapes C0 controls itself; the bidi override is escaped too, and reads back the same.
    const id = (JSON.parse((await cli("list", "--db", path, "--json")).stdout) as { id: string }[])[0]!.id;
    for (const args of [["show", id], ["show", id, "--json"], ["list", "--json"], ["unresolved", "--json"]]) {
      const out = await cli(...args, "--db", path);
      expect(out.stdout, args.join(" ")).not.toMatch(/[\u007f-\u009f\u202e]/);
    }
    const shown = JSON.parse((await cli("show", id, "--db", path, "--json")).stdout) as { key: string };
    expect(shown.key).toBe(key);
  });

  it("refuses a file that is not a database, exit 2", async () => {
    const { writeFileSync } = await import("node:fs");
    const path = join(dir, "notes.txt");
    writeFileSync(path, "not a database, just text that is long enough to have a header".repeat(4));
    const r = await cli("list", "--db", path);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("cannot open the ledger");
  });

  it("postgres: refuses a database without a ledger table and creates none", async () => {
    const { default: pg } = await import("pg");
    const url = await pgServer.newDatabase();
    for (const args of [["list"], ["unresolved"], ["prune"]]) {
      const r = await cli(...args, "--db", url);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("E_LEDGER_MISSING");
    }
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      expect((await c.query("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'")).rows).toEqual([{ n: 0 }]);
    } finally {
      await c.end();
    }
  });

  it("unresolved exits 2, not 1, when the ledger cannot be reached (as a process)", async () => {
    const { createServer } = await import("node:net");
    const port = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, "127.0.0.1", () => {
        const a = s.address();
        s.close(() => resolve(typeof a === "object" && a !== null ? a.port : 0));
      });
    });
    const r = await spawnCli("unresolved", "--db", `postgres://nobody:x@127.0.0.1:${port}/none`);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("cannot open the ledger");
  });
});

describe("toolgate ledger usage errors", () => {
  it("exits 2 with usage for a missing --db, an unknown subcommand or a missing file", async () => {
    const first = await spawnCli("list");
    expect(first.code).toBe(2);
    expect(first.stderr).toContain("--db is required (E_USAGE)");
    for (const args of [["frobnicate", "--db", "x.db"], ["list", "--db", join(dir, "missing.db")], ["prune", "--db", join(dir, "cli.db"), "--older-than", "soon"]]) {
      const r = await cli(...args);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("Usage: toolgate ledger");
    }
  });
});
