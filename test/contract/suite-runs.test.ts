/**
 * contractSuite's `runs` is "cases per property" (docs/contract.md): it reaches the drift check,
 * property 4, as `seed` does; `drift.runs` still wins, and without either the drift check runs 300.
 */
import { describe, it, expect } from "vitest";
import { z } from "zod";
import { defineTool } from "../../src/index.js";
import { contractProperties, type ContractSuiteOptions } from "../../src/testing/index.js";

// A refinement that accepts everything: the drift check reports it as unrepresentable (so property 4
// fails and prints its report) but finds no disagreement, so nothing is shrunk: the payloads the
// report counts are exactly the runs.
const tool = defineTool({
  name: "t",
  version: "1",
  description: "d",
  effect: "read",
  input: z.object({ n: z.number().int().refine(() => true) }),
  output: z.object({}),
  execute: () => ({}),
});

async function driftPayloads(options: ContractSuiteOptions<{ n: number }>): Promise<string> {
  const r = await contractProperties(tool, options)[3]!.run();
  expect(r.message).toContain("unrepresentable (input) at n: custom refinement");
  return /mcp +1 finding +\((\d+) payloads\)/.exec(r.message)?.[1] ?? r.message;
}

describe("contractSuite's runs and the drift property", () => {
  it("runs reaches the drift check", async () => {
    expect(await driftPayloads({ runs: 5, drift: { targets: ["mcp"] } })).toBe("5");
  });

  it("drift.runs wins over runs", async () => {
    expect(await driftPayloads({ runs: 5, drift: { targets: ["mcp"], runs: 7 } })).toBe("7");
  });

  it("with neither, the drift check runs its default of 300", async () => {
    expect(await driftPayloads({ drift: { targets: ["mcp"] } })).toBe("300");
  });
});
