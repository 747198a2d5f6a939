import { describe, it, expect } from "vitest";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { z } from "zod";
import type { StandardJSONSchemaV1, StandardSchemaV1 } from "@standard-schema/spec";
import { createGate, defineTool } from "../../src/index.js";
import { checkContracts, checkTool, contractProperties, contractSuite, targetContract } from "../../src/testing/index.js";
import { createFakeOrders, makeOrderTools } from "../../examples/orders/index.js";

const [getOrder, createRefund] = makeOrderTools(createFakeOrders());

describe("contractSuite on the example tools (vitest)", () => {
  contractSuite(getOrder, { it, runs: 60, drift: { runs: 100 } });
  contractSuite(createRefund, { it, runs: 60, drift: { runs: 100 } });
});

describe("contractProperties catch what they claim to", () => {
  const run = async (tool: Parameters<typeof contractProperties>[0], name: string) => {
    const p = contractProperties(tool, { runs: 60, drift: { runs: 60, targets: ["mcp"] } }).find((x) => x.name.includes(name))!;
    return p.run();
  };

  it("names one property per guarantee", () => {
    expect(contractProperties(getOrder).map((p) => p.name)).toEqual([
      "get_order: invalid input never reaches execute",
      "get_order: output that breaks the output schema answers INVALID_OUTPUT",
      "get_order: transient failures stay within the retry cap",
      "get_order: advertised contracts match the runtime (drift check)",
    ]);
    expect(contractProperties(getOrder, { drift: false })).toHaveLength(3);
  });

  it("the input option is typed by the tool's arguments (a default field optional)", () => {
    expect(contractProperties(getOrder, { drift: false, input: { customerId: "c_1" } })).toHaveLength(3);
    // @ts-expect-error -- customerId is a string: a wrong input would make the output and retry properties blame the tool
    contractProperties(getOrder, { drift: false, input: { customerId: 1 } });
  });

  it("the drift property fails with the report when the tool drifts", async () => {
    const tool = defineTool({
      name: "drifty", version: "1", description: "d", effect: "read",
      input: z.object({ n: z.number().int().min(0).max(100).refine((n) => n < 50) }),
      output: z.object({}), execute: () => ({}),
    });
    const r = await run(tool, "drift check");
    expect(r.ok).toBe(false);
    expect(r.message).toContain("✗ drift at n");
  });

  it("a property reports a tool no gate can serve instead of throwing", async () => {
    const noJson: StandardSchemaV1 = { "~standard": { version: 1, vendor: "test", validate: (v) => ({ value: v }) } };
    const tool = defineTool({ name: "nojson", version: "1", description: "d", effect: "read", input: noJson, output: z.unknown(), execute: () => null });
    for (const p of contractProperties(tool, { drift: { targets: ["mcp"] } })) {
      const r = await p.run();
      expect(r.ok).toBe(false);
      expect(r.message).toMatch(/cannot be represented|Standard JSON Schema/);
    }
  });

  it("the input property fails when a validator lets through what it refuses on a second look", async () => {
    // A schema that says yes the first time a value is seen and no afterwards: the gate executes,
    // the suite's own check of the same value refuses it, so the property must report it.
    const seen = new Set<string>();
    const flaky: StandardSchemaV1 & StandardJSONSchemaV1 = {
      "~standard": {
        version: 1, vendor: "test",
        jsonSchema: { input: () => ({ type: "object" }), output: () => ({ type: "object" }) },
        validate: (v) => {
          const k = JSON.stringify(v);
          if (typeof v === "object" && v !== null && !Array.isArray(v) && !seen.has(k)) return seen.add(k), { value: v };
          return { issues: [{ message: "no" }] };
        },
      },
    };
    const tool = defineTool({ name: "flaky", version: "1", description: "d", effect: "read", input: flaky, output: z.unknown(), execute: () => null });
    const r = await run(tool, "invalid input");
    expect(r.ok).toBe(false);
    expect(r.message).toContain("execute ran on input the schema refuses");
  });

  it("the output property fails when INVALID_OUTPUT does not follow the output schema", async () => {
    // The output schema refuses a value on its second look only: the gate accepts, the suite refuses.
    let calls = 0;
    const twoFaced: StandardSchemaV1 = {
      "~standard": { version: 1, vendor: "test", validate: (v) => (++calls % 2 === 1 ? { value: v } : { issues: [{ message: "no" }] }) },
    };
    const tool = defineTool({ name: "twofaced", version: "1", description: "d", effect: "read", input: z.object({}), output: twoFaced, execute: () => null });
    const r = await run(tool, "INVALID_OUTPUT");
    expect(r.ok).toBe(false);
    expect(r.message).toContain("output the schema refuses was answered ok");
  });

  it("the output property passes a schema whose accepted value JSON cannot carry: the gate's INVALID_OUTPUT is the expected answer", async () => {
    const tool = defineTool({ name: "maps", version: "1", description: "d", effect: "read", input: z.object({}), output: z.any().transform(() => new Map()), execute: () => null });
    const r = await run(tool, "INVALID_OUTPUT");
    expect(r).toMatchObject({ ok: true, message: "" });
  });
});

describe("contract suite and checks: bad arguments are refused before anything runs", () => {
  const [getOrder] = makeOrderTools(createFakeOrders());
  it.each([
    [{ runs: 2.5 }, /runs must be an integer from 1 to 1,000,000/],
    [{ runs: 0 }, /runs must be an integer/],
    [{ runs: -1 }, /runs must be an integer/],
    [{ runs: "x" }, /runs must be an integer/],
    [{ seed: 1.5 }, /seed must be an integer/],
    [{ drift: { runs: 0.5 } }, /contractProperties \(drift\): runs must be an integer/],
  ])("contractProperties(%j) throws E_CHECK_OPTIONS", (options, message) => {
    expect(() => contractProperties(getOrder!, options as never)).toThrow(expect.objectContaining({ code: "E_CHECK_OPTIONS", message: expect.stringMatching(message) }));
  });

  it("a tool that is not one, or no test function, is named", async () => {
    expect(() => contractProperties(undefined as never)).toThrow(/contractProperties: the first argument must be a defineTool/);
    expect(() => contractSuite(getOrder!, {} as never)).toThrow(/contractSuite: options.it must be/);
    await expect(checkTool({} as never)).rejects.toThrow(/checkTool: the first argument must be a defineTool/);
    await expect(checkTool(getOrder!, null as never)).rejects.toThrow(/checkTool: options must be an object/);
    await expect(checkTool(getOrder!, { advertised: 5 } as never)).rejects.toThrow(/advertised must be a function/);
    await expect(checkContracts(createGate({ tools: [getOrder!] }) as never)).rejects.toThrow(/checkContracts: the first argument must be an array of defineTool/);
    expect(targetContract(getOrder!, "bogus" as never)).toEqual({ ok: false, reason: 'unknown target "bogus"; the targets are mcp, draft-07, openai, anthropic' });
  });
});

describe("contractSuite: the advertised outputSchema", () => {
  it("the output property fails when returned data breaks the advertised outputSchema", async () => {
    // Validation turns the string into its length, but the advertised output says string.
    const lying: StandardSchemaV1 & StandardJSONSchemaV1 = {
      "~standard": {
        version: 1, vendor: "test",
        jsonSchema: { input: () => ({ type: "string" }), output: () => ({ type: "string" }) },
        validate: (v) => (typeof v === "string" ? { value: v.length } : { issues: [{ message: "expected a string" }] }),
      },
    };
    const tool = defineTool({ name: "lying", version: "1", description: "d", effect: "read", input: z.object({}), output: lying, execute: () => "x" });
    const p = contractProperties(tool, { runs: 40, drift: false }).find((x) => x.name.includes("INVALID_OUTPUT"))!;
    const r = await p.run();
    expect(r.ok).toBe(false);
    expect(r.message).toContain("data the gate returned breaks the advertised outputSchema");
  });
});

describe("contractSuite under node:test", { timeout: 120_000 }, () => {
  it("runs the four properties and passes", async () => {
    const root = join(import.meta.dirname, "..", "..");
    const out = await new Promise<{ code: number; stdout: string }>((resolve) => {
      execFile(process.execPath, ["--import", "tsx", "--test", "--test-reporter=tap", "test/contract/modules/node-test-suite.ts"], { cwd: root, timeout: 110_000 }, (err, stdout) =>
        resolve({ code: err === null ? 0 : typeof err.code === "number" ? err.code : 99, stdout }),
      );
    });
    expect(out.stdout).toContain("# pass 4");
    expect(out.stdout).toContain("# fail 0");
    expect(out.code).toBe(0);
  });
});
