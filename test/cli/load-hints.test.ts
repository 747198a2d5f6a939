/** Module-loading mistakes a new user makes, answered with what to do. */
import { describe, expect, it } from "vitest";
import { runMain } from "../mcp/helpers.js";

describe("toolgate serve: loading hints", () => {
  it("a default export that is a single tool: wrap it in [ ]", async () => {
    const r = await runMain(["serve", "test/cli/fixtures/single-tool.ts"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/default export is a single tool \("ping"\), not an array; wrap it in \[ \] \(E_MODULE_NO_TOOLS\)/);
    expect(r.stdout).toBe("");
  });

  it("a directory: name the file", async () => {
    const r = await runMain(["serve", "examples/orders"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/examples\/orders is a directory; name the module file, e.g\. examples\/orders\/index\.ts \(E_MODULE_NOT_FOUND\)/);
  });

  it("a path without its extension: names the file that exists", async () => {
    const r = await runMain(["serve", "examples/orders/demo-server"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/module not found: examples\/orders\/demo-server; did you mean examples\/orders\/demo-server\.ts\? \(E_MODULE_NOT_FOUND\)/);
  });

  it("a path that does not exist at all is plain 'module not found'", async () => {
    const r = await runMain(["serve", "examples/orders/nothing-here"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/module not found: examples\/orders\/nothing-here \(E_MODULE_NOT_FOUND\)/);
  });
});
