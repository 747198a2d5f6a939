import { describe, expect, it } from "vitest";
import { loadGate } from "../../src/cli/load.js";
import { CliError } from "../../src/cli/command.js";
import { fixture, runMain } from "./helpers.js";

describe("loadGate", () => {
  it("loads a gate default export and an array of tools", async () => {
    expect((await loadGate(fixture("codes.ts"))).list().length).toBeGreaterThan(5);
    expect((await loadGate("examples/orders/index.ts")).list().map((t) => t.name)).toEqual(["get_order", "create_refund"]);
  });

  it.each([
    ["test/fixtures/mcp/missing.ts", "E_MODULE_NOT_FOUND", /module not found/],
    [fixture("no-default.ts"), "E_MODULE_NO_TOOLS", /has no default export/],
    [fixture("empty.ts"), "E_MODULE_NO_TOOLS", /empty array/],
    [fixture("bad-tool.ts"), "E_MODULE_TOOL", /name must match/],
    [fixture("throws.ts"), "E_MODULE_IMPORT", /database unreachable at import time/],
    ["package.json", "E_MODULE_NO_TOOLS", /neither a gate nor an array/],
  ])("%s → %s", async (path, code, message) => {
    const err = await loadGate(path).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(CliError);
    expect((err as CliError).code).toBe(code);
    expect((err as CliError).message).toMatch(message);
  });
});

describe("toolgate serve: usage errors exit 2 with a clear message", () => {
  it.each([
    [["serve"], /expected a module path \(E_USAGE\)/],
    [["serve", "test/fixtures/mcp/missing.ts"], /module not found: test\/fixtures\/mcp\/missing.ts \(E_MODULE_NOT_FOUND\)/],
    [["serve", fixture("bad-tool.ts")], /a tool definition is invalid: defineTool\("bad name!"\): name must match .* \(E_MODULE_TOOL\)/],
    [["serve", fixture("codes.ts"), "--http", "nohost"], /--http expects host:port/],
    [["serve", fixture("codes.ts"), "--http", "0.0.0.0:0"], /refusing to bind 0.0.0.0: not a loopback address/],
    [["serve", fixture("codes.ts"), "--token-env", "X"], /apply to --http only/],
  ])("%j", async (args, message) => {
    const r = await runMain(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe("");
  });
});
