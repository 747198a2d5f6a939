/**
 * Importing `toolgate`, `toolgate/ledger` and starting the CLI load neither ledger driver; only
 * `sqliteLedger(...)` / `postgresLedger(...)` do. Each case is a fresh `node` (a module once
 * loaded stays in require.cache), with the drivers installed, then hidden as if they were not.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../..", import.meta.url));
const PROBE = "test/fixtures/ledger/driver-loads.ts";
const HIDE = ["--import", "./test/fixtures/ledger/hide-drivers.mjs"];

type Loaded = { sqlite: boolean; pg: boolean };
type Failure = { code: string; message: string; cause: boolean };
interface Report {
  afterImports: Loaded;
  helpCode: number;
  overview: string;
  sqlite: Loaded | Failure;
  pg: Loaded | Failure;
}

async function probe(hidden: boolean): Promise<Report> {
  const { stdout } = await run(process.execPath, [...(hidden ? HIDE : []), "--import", "tsx", PROBE], { cwd: root, timeout: 60_000 });
  return JSON.parse(stdout.trim().split("\n").pop()!) as Report;
}

/** The CLI as users run it, its exit code and output. */
async function cli(hidden: boolean, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [...(hidden ? HIDE : []), "--import", "tsx", "src/cli/main.ts", ...args], { cwd: root, timeout: 60_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const r = e as { code?: unknown; stdout?: string; stderr?: string };
    return { code: typeof r.code === "number" ? r.code : -1, stdout: r.stdout ?? "", stderr: r.stderr ?? "" };
  }
}

// Each case spawns node under tsx: generous timeouts for a loaded machine.
describe("ledger drivers load lazily", { timeout: 90_000 }, () => {
  it("with the drivers installed: absent after the imports and the CLI's overview, each loaded by its factory", async () => {
    const r = await probe(false);
    expect(r.helpCode).toBe(0);
    expect(r.afterImports).toEqual({ sqlite: false, pg: false });
    expect(r.sqlite).toEqual({ sqlite: true, pg: false });
    expect(r.pg).toEqual({ sqlite: true, pg: true });
  });

  it("with the drivers missing: the imports and the CLI's overview work; each factory throws E_LEDGER_DRIVER with the install command", async () => {
    const r = await probe(true);
    expect(r.helpCode).toBe(0);
    // Every command still lists its summary: none of their modules needs a driver to load.
    expect(r.overview).toMatch(/ {2}demo {2,}Run the orders story/);
    expect(r.overview).toMatch(/ {2}ledger {2,}\S/);
    expect(r.afterImports).toEqual({ sqlite: false, pg: false });
    expect(r.sqlite).toEqual({
      code: "E_LEDGER_DRIVER",
      message: "sqliteLedger needs the package better-sqlite3 (an optional peer dependency of toolgate), which is not installed: npm install better-sqlite3",
      cause: true,
    });
    expect(r.pg).toEqual({
      code: "E_LEDGER_DRIVER",
      message: "postgresLedger needs the package pg (an optional peer dependency of toolgate), which is not installed: npm install pg",
      cause: true,
    });
  });

  it("with the drivers missing: a CLI command that opens a ledger says which package to install (exit 2)", async () => {
    const [ledger, demo, help] = await Promise.all([
      cli(true, "ledger", "list", "--db", "postgres://nobody@127.0.0.1:1/none"),
      cli(true, "demo"),
      cli(true, "check", "--help"),
    ]);
    expect(ledger.code).toBe(2);
    expect(ledger.stderr).toContain("toolgate ledger: cannot open the ledger: postgresLedger needs the package pg");
    expect(ledger.stderr).toContain("npm install pg (E_LEDGER_DRIVER)");
    expect(demo.code).toBe(2);
    expect(demo.stderr).toContain("toolgate demo: sqliteLedger needs the package better-sqlite3");
    expect(demo.stderr).toContain("npm install better-sqlite3 (E_LEDGER_DRIVER)");
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: toolgate check");
  });
});
