import { describe, it, expect } from "vitest";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CheckReport } from "../../src/testing/index.js";

const ROOT = join(import.meta.dirname, "..", "..");

function check(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ["--import", "tsx", "src/cli/main.ts", "check", ...args], { cwd: ROOT, env: { ...process.env, ...env }, timeout: 110_000 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === "number" ? err.code : 99;
      resolve({ code, stdout, stderr });
    });
  });
}

// Each test spawns the CLI (tsx start-up plus the check): generous timeouts for a loaded machine.
describe.concurrent("toolgate check", { timeout: 120_000 }, () => {
  it("is clean on the example tools (exit 0), with progress on stderr", async () => {
    const r = await check(["examples/orders/index.ts"]);
    expect(r.stderr).toContain("checking get_order × mcp (1/4)");
    expect(r.stdout).toContain("clean: 2 tool(s), seed 1, 300 runs per target");
    expect(r.stdout).toMatch(/openai\s+ok .*nullable → absent: includeHistory/);
    expect(r.code).toBe(0);
  });

  it("exits 1 on a drifting module and explains the finding", async () => {
    const r = await check(["test/contract/modules/drifting.ts", "--target", "mcp", "--runs", "100"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("✗ unrepresentable (input) at day: custom refinement");
    expect(r.stdout).toMatch(/✗ drift at day: a refinement the JSON Schema cannot express refuses `day`/);
    expect(r.stdout).toMatch(/counterexample: \{"day":6,"who":"."\}/);
    expect(r.stdout).toContain("NOT clean");
  });

  it("--json prints the documented shape, the same for the same --seed", async () => {
    const args = ["test/contract/modules/drifting.ts", "--json", "--seed", "5", "--runs", "60", "--target", "mcp,openai"];
    const [a, b] = await Promise.all([check(args), check(args)]);
    expect(a.code).toBe(1);
    expect(a.stdout).toBe(b.stdout);
    const report = JSON.parse(a.stdout) as CheckReport;
    expect(report).toMatchObject({ format: "toolgate-check", version: 1, ok: false, seed: 5, runs: 60 });
    expect(report.tools.map((t) => [t.name, t.version, t.targets.map((x) => x.target)])).toEqual([["book_slot", "1.0.0", ["mcp", "openai"]]]);
    const f = report.tools[0]!.targets[0]!.findings.find((x) => x.kind === "drift");
    expect(f).toMatchObject({ kind: "drift", path: "day", accepted: "advertised", advertised: { accepted: true }, runtime: { accepted: false, code: "INVALID_INPUT" } });
    expect(Object.keys(f!).sort()).toEqual(["accepted", "advertised", "counterexample", "explanation", "kind", "mutation", "path", "runtime"]);
  });

  it("exits 2 on usage errors", async () => {
    const cases = await Promise.all([
      check([]),
      check(["examples/orders/index.ts", "--runs", "ten"]),
      check(["examples/orders/index.ts", "--target", "gemini"]),
      check(["test/contract/modules/nope.ts"]),
      check(["examples/orders/index.ts", "--against", join(tmpdir(), "toolgate-no-such-snapshot.json")]),
      check(["examples/orders/index.ts", "--bogus"]),
      check(["examples/orders/index.ts", "--fixtures", mkdtempSync(join(tmpdir(), "toolgate-empty-fixtures-"))]),
    ]);
    expect(cases.map((c) => c.code)).toEqual([2, 2, 2, 2, 2, 2, 2]);
    expect(cases[6]!.stderr).toMatch(/holds no fixture \(\*\.json\) \(E_FIXTURES\)/);
    expect(cases[1]!.stderr).toContain("--runs expects an integer");
    expect(cases[2]!.stderr).toContain("--target must be one of mcp, draft-07, openai, anthropic");
    expect(cases[3]!.stderr).toContain("E_MODULE_NOT_FOUND");
    expect(cases[4]!.stderr).toContain("E_SNAPSHOT");
  });

  it("--snapshot then --against: breaking without a bump fails, with a bump or compatible passes; fixtures must still parse", async () => {
    const dir = mkdtempSync(join(tmpdir(), "toolgate-check-"));
    try {
      const file = join(dir, "contracts.json");
      const wrote = await check(["examples/orders/index.ts", "--snapshot", file, "--runs", "20"]);
      expect(wrote.code).toBe(0);
      const snap = JSON.parse(readFileSync(file, "utf8")) as { format: string; tools: Record<string, { version: string }> };
      expect(snap.format).toBe("toolgate-contracts");
      expect(Object.keys(snap.tools)).toEqual(["create_refund", "get_order"]);

      const v2 = "test/contract/modules/orders-v2.ts";
      const fixtures = "test/contract/fixtures-calls";
      const [breaking, bumped, compatible] = await Promise.all([
        check([v2, "--against", file, "--runs", "20", "--json", "--fixtures", fixtures], { TOOLGATE_TEST_VARIANT: "breaking" }),
        check([v2, "--against", file, "--runs", "20"], { TOOLGATE_TEST_VARIANT: "bumped" }),
        check([v2, "--against", file, "--runs", "20", "--fixtures", fixtures], { TOOLGATE_TEST_VARIANT: "compatible" }),
      ]);
      expect(breaking.code).toBe(1);
      const report = JSON.parse(breaking.stdout) as CheckReport;
      expect(report.tools.every((t) => t.ok)).toBe(true); // no drift: only the contract change fails
      const get = report.breaking!.tools.find((t) => t.name === "get_order")!;
      expect(get).toMatchObject({ breaking: true, versionBumped: false, ok: false });
      expect(get.changes.filter((c) => c.breaking).map((c) => `${c.kind} ${c.path}`)).toEqual(["field_added region"]);
      expect(report.fixtures!.results.filter((x) => !x.ok).map((x) => `${x.name}: ${x.got}`)).toEqual([
        "plain lookup: INVALID_INPUT",
        "with history, as text: INVALID_INPUT",
        "strict-mode null: INVALID_INPUT",
      ]);

      expect(bumped.code).toBe(0);
      expect(bumped.stdout).toContain("get_order: breaking, version bumped (version 1.0.0 → 2.0.0)");
      expect(compatible.stdout).toContain("get_order: compatible (version 1.0.0 unchanged)");
      expect(compatible.stdout).toContain("fixtures in test/contract/fixtures-calls: 5 as expected, 0 not");
      expect(compatible.code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
