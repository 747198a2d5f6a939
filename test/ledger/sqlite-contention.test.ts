/**
 * A SQLite ledger file that another process locks, or that this process may not write: the gate's
 * event loop stays free while a write waits (better-sqlite3 waits synchronously), the wait is
 * bounded by busyTimeoutMs, and a file it cannot write fails at open, not at every call.
 */
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { createGate } from "../../src/index.js";
import { sqliteLedger } from "../../src/ledger/index.js";
import { _whileBusy } from "../../src/ledger/sqlite.js";
import { payTool } from "./_fixtures.js";

const FIXTURES = fileURLToPath(new URL("../fixtures/ledger/", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "toolgate-contention-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Another process holds the file's write lock for `ms`; resolves once it holds it, with its release. */
async function lockFor(path: string, ms: number): Promise<{ released: Promise<void> }> {
  const child = spawn(process.execPath, [join(FIXTURES, "hold-write-lock.mjs"), path, String(ms)], { stdio: ["ignore", "pipe", "inherit"] });
  const released = new Promise<void>((r) => child.once("exit", () => r()));
  await new Promise((r) => child.stdout.once("data", r));
  return { released };
}

/** The longest the event loop went without running a 5 ms interval, while `p` was pending. */
async function longestStall<T>(p: Promise<T>): Promise<{ value: T; stallMs: number }> {
  let last = performance.now();
  let stallMs = 0;
  const tick = setInterval(() => {
    const t = performance.now();
    stallMs = Math.max(stallMs, t - last);
    last = t;
  }, 5);
  try {
    return { value: await p, stallMs };
  } finally {
    clearInterval(tick);
  }
}

const busy = () => Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" });

describe("sqliteLedger under another process's lock", () => {
  it("_whileBusy tries again only while the file is locked, and within its budget", () => {
    let n = 0;
    expect(_whileBusy(1_000, () => (++n < 3 ? (() => { throw busy(); })() : "done"))).toBe("done");
    expect(n).toBe(3);
    n = 0;
    expect(() => _whileBusy(1_000, () => { n++; throw new Error("disk I/O error"); })).toThrow("disk I/O error");
    expect(n).toBe(1);
    const t0 = performance.now();
    expect(() => _whileBusy(60, () => { throw busy(); })).toThrow("database is locked");
    const waited = performance.now() - t0;
    expect(waited).toBeGreaterThanOrEqual(60);
    expect(waited).toBeLessThan(400); // the budget, plus one slice and a slow machine's slack; not ten budgets
  });

  it("a write waits for the lock with the event loop free, then lands", async () => {
    const path = join(dir, "wait.db");
    const ledger = sqliteLedger({ path, busyTimeoutMs: 5_000 });
    const pay = payTool(async (i) => ({ paymentId: `p_${i.orderId}`, orderId: i.orderId }));
    const gate = createGate({ tools: [pay], ledger });
    const { released } = await lockFor(path, 600);
    const { value, stallMs } = await longestStall(gate.call("pay", { orderId: "o1", amountCents: 5 }, { idempotencyKey: "k1" }));
    await released;
    expect(value).toMatchObject({ ok: true, meta: { attempts: 1 } });
    expect(stallMs).toBeLessThan(300); // before: one synchronous wait of the whole 600 ms
    await ledger.close();
  });

  it("a lock held past busyTimeoutMs: RETRYABLE, nothing ran, and the event loop stayed free", async () => {
    const path = join(dir, "past.db");
    const ledger = sqliteLedger({ path, busyTimeoutMs: 400 });
    let runs = 0;
    const pay = payTool(async (i) => (runs++, { paymentId: `p_${i.orderId}`, orderId: i.orderId }));
    const gate = createGate({ tools: [pay], ledger, onHookError: () => undefined });
    const { released } = await lockFor(path, 3_000);
    const { value, stallMs } = await longestStall(gate.call("pay", { orderId: "o1", amountCents: 5 }, { idempotencyKey: "k1" }));
    expect(value).toMatchObject({ ok: false, code: "RETRYABLE", effect: "none" });
    expect(runs).toBe(0);
    expect(stallMs).toBeLessThan(300);
    await released;
    expect((await gate.call("pay", { orderId: "o1", amountCents: 5 }, { idempotencyKey: "k1" })).ok).toBe(true); // nothing was left held
    await ledger.close();
  });

  it("a ledger opened read-only given to a gate: writes answer FAILED, not retryable (no 'try again later' for ever)", async () => {
    const path = join(dir, "view.db");
    await sqliteLedger({ path }).close();
    const view = sqliteLedger({ path, readonly: true });
    let runs = 0;
    const pay = payTool(async (i) => (runs++, { paymentId: "p", orderId: i.orderId }));
    const r = await createGate({ tools: [pay], ledger: view, onHookError: () => undefined }).call("pay", { orderId: "o1", amountCents: 5 }, { idempotencyKey: "k1" });
    expect(r).toMatchObject({ ok: false, code: "FAILED", retryable: false, effect: "none" });
    expect(runs).toBe(0);
    await view.close();
  });

  it("a ledger file deleted or replaced under a running gate: writes stop (FAILED, nothing runs), no second ledger in secret", async () => {
    const { copyFileSync, renameSync } = await import("node:fs");
    for (const how of ["deleted", "replaced"] as const) {
      const path = join(dir, `moved-${how}.db`);
      const ledger = sqliteLedger({ path });
      let runs = 0;
      const pay = payTool(async (i) => (runs++, { paymentId: "p", orderId: i.orderId }));
      const errors: unknown[] = [];
      const gate = createGate({ tools: [pay], ledger, onHookError: (_h, e) => void errors.push(e) });
      expect((await gate.call("pay", { orderId: "o1", amountCents: 5 }, { idempotencyKey: "k1" })).ok).toBe(true);
      if (how === "deleted") rmSync(path);
      else {
        copyFileSync(path, `${path}.restored`);
        renameSync(`${path}.restored`, path); // a restore by rename: another inode at the same path
      }
      const r = await gate.call("pay", { orderId: "o2", amountCents: 5 }, { idempotencyKey: "k2" });
      expect(r, how).toMatchObject({ ok: false, code: "FAILED", retryable: false, effect: "none" });
      expect(runs, how).toBe(1);
      expect(errors.map((e) => (e as { code?: unknown }).code), how).toContain("E_LEDGER_MOVED");
      await ledger.close();
    }
  });

  it("a relative ledger path is not taken for a moved file after process.chdir", async () => {
    const { mkdirSync } = await import("node:fs");
    const cwd = process.cwd();
    mkdirSync(join(dir, "rel"), { recursive: true });
    process.chdir(join(dir, "rel"));
    let ledger: ReturnType<typeof sqliteLedger> | undefined;
    try {
      ledger = sqliteLedger({ path: "ledger.db" });
    } finally {
      process.chdir(cwd);
    }
    const pay = payTool(async (i) => ({ paymentId: "p", orderId: i.orderId }));
    expect((await createGate({ tools: [pay], ledger }).call("pay", { orderId: "o1", amountCents: 5 }, { idempotencyKey: "k1" })).ok).toBe(true);
    await ledger.close();
  });

  it("close() while a write waits for another process's lock: the write is rejected as closed, at once", async () => {
    const path = join(dir, "close-busy.db");
    const ledger = sqliteLedger({ path, busyTimeoutMs: 5_000 });
    const { released } = await lockFor(path, 1_500);
    const claim = ledger.claim({ id: "e1", owner: "o", callId: "c1", tool: "pay", version: "1", principal: null, fingerprint: "f", leaseMs: 1_000, takeover: false });
    const outcome = claim.then(() => "claimed", (e: unknown) => (e as Error).message);
    await new Promise((r) => setTimeout(r, 60)); // the claim found the file locked and waits
    const t0 = performance.now();
    await ledger.close();
    expect(await outcome).toBe("sqliteLedger: the ledger is closed");
    expect(performance.now() - t0).toBeLessThan(500);
    await released;
  });

  // Root writes whatever a file's mode says: as root the file is opened by an unprivileged user (setpriv, util-linux).
  const asRoot = process.getuid?.() === 0;
  const noSetpriv = asRoot && spawnSync("setpriv", ["--version"]).status !== 0;
  it.skipIf(noSetpriv)("a file this process may not write fails at open (E_LEDGER_OPEN), not at each write (as root: needs setpriv)", async () => {
    const path = join(dir, "ro.db");
    await sqliteLedger({ path }).close(); // a ledger that exists
    chmodSync(dir, 0o755);
    chmodSync(path, 0o444);
    const tsx = ["--import", "tsx", join(FIXTURES, "open-ledger.ts"), path];
    const run = asRoot
      ? spawnSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, ...tsx], { encoding: "utf8", cwd: join(FIXTURES, "../../..") })
      : spawnSync(process.execPath, tsx, { encoding: "utf8", cwd: join(FIXTURES, "../../..") });
    expect(run.stdout.trim(), run.stderr).toMatch(/^E_LEDGER_OPEN sqliteLedger: cannot open .* for writing: attempt to write a readonly database/);
  });
});
