/**
 * `toolgate check` on a module with a tool whose input cannot be represented as JSON Schema
 * (`z.date()`, a plain valibot schema): reported as unrepresentable on every target, exit 1, as
 * docs/contract.md says, and the module's other tools are still checked (not a usage error, exit 2).
 */
import { afterAll, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runMain } from "../mcp/helpers.js";
import type { CheckReport } from "../../src/testing/index.js";

const MODULE = "test/cli/fixtures/unrepresentable-tools.ts";
const dir = mkdtempSync(join(tmpdir(), "toolgate-check-unrepresentable-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("toolgate check: a tool whose input cannot be represented", { timeout: 60_000 }, () => {
  it("is reported per target (--json), exit 1; the other tools are checked", async () => {
    const r = await runMain(["check", MODULE, "--runs", "10", "--json"]);
    expect(r.stderr).not.toContain("Usage:");
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as CheckReport;
    expect(report.ok).toBe(false);
    expect(report.tools.map((t) => [t.name, t.ok])).toEqual([["ping", true], ["remind", false], ["plain_valibot", false]]);
    for (const t of report.tools.slice(1)) {
      expect(t.targets.map((x) => x.target)).toEqual(["mcp", "draft-07", "openai", "anthropic"]);
      for (const x of t.targets) {
        expect(x.ok).toBe(false);
        expect(x.findings).toEqual([{ kind: "unrepresentable", side: "input", path: "", reason: expect.stringMatching(/^input schema cannot be represented: /) }]);
      }
    }
    expect(report.tools[1]!.targets[0]!.findings[0]).toMatchObject({ reason: expect.stringContaining("Date cannot be represented") });
    expect(report.tools[2]!.targets[0]!.findings[0]).toMatchObject({ reason: expect.stringContaining("does not implement Standard JSON Schema") });
  });

  it("prints the per-target report, not the usage text", async () => {
    const r = await runMain(["check", MODULE, "--runs", "10", "--target", "mcp"]);
    expect(r.code).toBe(1);
    expect(r.stderr).not.toContain("E_MODULE_TOOL");
    expect(r.stdout).toMatch(/remind 1\n {2}mcp +1 finding +\(0 payloads\)\n {4}✗ unrepresentable \(input\) at \(root\): input schema cannot be represented: /);
    expect(r.stdout).toContain("NOT clean: 2 finding(s)");
  });

  it("--snapshot holds the tools a gate serves; a fixture for the unservable tool fails, it does not crash", async () => {
    const snapshot = join(dir, "contracts.json");
    const fixtures = join(dir, "fixtures");
    mkdirSync(fixtures);
    writeFileSync(join(fixtures, "calls.json"), JSON.stringify([{ tool: "ping", args: {}, expect: "ok" }, { tool: "remind", args: { when: "2026-01-01" }, expect: "ok" }]));
    const r = await runMain(["check", MODULE, "--runs", "10", "--target", "mcp", "--json", "--snapshot", snapshot, "--fixtures", fixtures]);
    expect(r.code).toBe(1);
    expect(Object.keys((JSON.parse(readFileSync(snapshot, "utf8")) as { tools: object }).tools)).toEqual(["ping"]);
    const report = JSON.parse(r.stdout) as CheckReport;
    expect(report.fixtures!.results.map((x) => [x.tool, x.ok, x.got])).toEqual([["ping", true, "ok"], ["remind", false, "UNKNOWN_TOOL"]]);
  });

  it("two tools with one name are still a module error (exit 2)", async () => {
    const r = await runMain(["check", "test/cli/fixtures/unrepresentable-duplicate.ts", "--runs", "10"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('two tools are named "twice" (E_MODULE_TOOL)');
  });
});
