/**
 * A decimal `multipleOf` (money to the cent) is judged on the advertised side in decimal, as JSON
 * Schema and zod mean it, not in Ajv's binary floating point (0.07 / 0.01 = 7.000000000000001):
 * a correct tool passes the drift check and the suite's output property.
 */
import { describe, it, expect } from "vitest";
import { z } from "zod";
import { defineTool } from "../../src/index.js";
import { checkTool, contractProperties } from "../../src/testing/index.js";
import { compileAdvertised } from "../../src/contract/verdict.js";

const amount = () => z.number().positive().multipleOf(0.01);

describe("decimal multipleOf", () => {
  it("a tool taking an amount to the cent is clean on every target", { timeout: 60_000 }, async () => {
    const refund = defineTool({ name: "refund", version: "1.0.0", description: "d", effect: "read", input: z.object({ amount: amount() }), output: z.object({ ok: z.boolean() }), execute: () => ({ ok: true }) });
    const report = await checkTool(refund, { runs: 200 });
    expect(report.targets.flatMap((t) => t.findings.map((f) => `${t.target}: ${f.kind} ${f.path}`))).toEqual([]);
    expect(report.ok).toBe(true);
  });

  it.each([0.1, 0.01])("the output property passes an output with multipleOf(%s)", async (m) => {
    const tool = defineTool({ name: "t", version: "1", description: "d", effect: "read", input: z.object({}), output: z.object({ v: z.number().multipleOf(m) }), execute: () => ({ v: 0 }) });
    const r = await contractProperties(tool, { runs: 100, drift: false })[1]!.run();
    expect(r.message).toBe("");
    expect(r.ok).toBe(true);
  });

  it("the advertised side accepts decimal multiples at any magnitude and still refuses what is not one", () => {
    for (const dialect of ["draft-2020-12", "draft-07"] as const) {
      const v = compileAdvertised({ type: "object", properties: { a: { type: "number", multipleOf: 0.01 }, n: { type: "integer", multipleOf: 5 } } }, dialect);
      if (!v.ok) throw new Error(v.reason);
      // 21051047.47 / 0.01 is off an integer by more than Ajv's multipleOfPrecision: 9 would allow.
      for (const a of [0.07, -0.28, 0.3, 21051047.47, 999999999.99]) expect(v.check({ a }).accepted, `${dialect} ${a}`).toBe(true);
      for (const a of [0.071, 0.005, 0.07500000000000001, 1e-7]) {
        expect(v.check({ a }), `${dialect} ${a}`).toEqual({ accepted: false, reasons: ["a: multipleOf must be multiple of 0.01"], path: "a", keyword: "multipleOf" });
      }
      expect(v.check({ n: 10 }).accepted).toBe(true);
      expect(v.check({ n: 11 }).accepted).toBe(false);
    }
  });
});
