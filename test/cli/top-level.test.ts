/** `toolgate --version`, `-v`, and the top-level help with one line per command. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { runCli, runMain } from "../mcp/helpers.js";
import { commands } from "../../src/cli/commands.js";

const VERSION = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;

describe("toolgate --version", () => {
  it.each([["--version"], ["-v"]])("%s prints the package version, exit 0", async (flag) => {
    const r = await runMain([flag]);
    expect(r).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: "" });
  });

  it("works from the spawned entry point too", async () => {
    const r = await runCli(["--version"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${VERSION}\n`);
  });
});

describe("toolgate --help", () => {
  it("lists every command with its one-line summary", async () => {
    const r = await runMain(["--help"]);
    expect(r.code).toBe(0);
    for (const [name, load] of Object.entries(commands)) {
      const { summary } = (await load()).default;
      expect(r.stdout).toMatch(new RegExp(`^  ${name} +${summary.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`, "m"));
    }
    expect(r.stdout).toMatch(/--version/);
  });

  it("an unknown command still exits 2 with the overview", async () => {
    const r = await runMain(["--versoin"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown command "--versoin" \(E_UNKNOWN_COMMAND\)/);
  });
});

describe("a command ends, whatever the module it loads does", () => {
  it("a module whose import never finishes: exit 2 naming it, never a silent exit 0", async () => {
    for (const command of ["check", "serve"]) {
      const r = await runCli([command, "test/cli/fixtures/never-loads.mjs"]);
      expect(r.code, command).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`^toolgate ${command}: cannot load test/cli/fixtures/never-loads\\.mjs: its import never finished .*\\(E_MODULE_IMPORT\\)$`, "m"));
    }
  });

  it("a module that keeps a handle open: check reports and exits (the test's kill timer never fires)", async () => {
    const r = await runCli(["check", "test/cli/fixtures/keeps-a-timer.ts", "--runs", "5", "--target", "mcp"], { timeoutMs: 15_000 });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^clean: 1 tool\(s\)/m);
  });
});
