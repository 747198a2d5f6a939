/**
 * Drift check cost: `checkTool` with the default runs (300 per target, four targets) on the example
 * tools and on a larger schema. Target: a few seconds per tool; we hold it to ≤ 3 s per tool.
 * Also the per-payload cost of the two verdicts (Ajv on the advertised schema vs the runtime path).
 */
import { z } from "zod";
import { defineTool } from "../src/index.js";
import { checkTool, targetContract } from "../src/testing/index.js";
import { compileAdvertised, runtimeProbe, runtimeVerdict } from "../src/contract/verdict.js";
import { createFakeOrders, makeOrderTools } from "../examples/orders/index.js";
import { compare, printTable, verdict } from "./harness.js";

const big = defineTool({
  name: "place_order",
  version: "1",
  description: "a larger input: nested arrays, unions, enums, formats, bounds",
  input: z.object({
    customer: z.object({ id: z.string().min(1), email: z.email().optional(), tier: z.enum(["free", "pro", "team"]).default("free") }),
    lines: z.array(z.object({ sku: z.string().min(1).max(32), qty: z.number().int().min(1).max(99), note: z.string().max(200).optional() })).min(1).max(20),
    shipping: z.discriminatedUnion("kind", [z.object({ kind: z.literal("pickup"), store: z.string() }), z.object({ kind: z.literal("post"), zip: z.string().regex(/^\d{5}$/) })]),
    coupon: z.string().nullish(),
    tags: z.array(z.string()).max(5).optional(),
  }),
  output: z.object({ id: z.string() }),
  effect: "write",
  execute: () => ({ id: "o_1" }),
});

export default async function run(): Promise<void> {
  const tools = [...makeOrderTools(createFakeOrders()), big];
  process.stdout.write("\n## checkTool, default options (300 runs × 4 targets)\n");
  let worst = 0;
  for (const tool of tools) {
    await checkTool(tool, { runs: 50 }); // warm-up
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      const r = await checkTool(tool);
      times.push(performance.now() - t0);
      if (!r.ok && tool !== big) throw new Error(`${tool.name} is expected to be clean`);
    }
    const median = times.sort((a, b) => a - b)[1]!;
    worst = Math.max(worst, median);
    process.stdout.write(`${tool.name.padEnd(48)} ${median.toFixed(0).padStart(9)} ms per tool (median of 3)\n`);
  }
  verdict("checkTool per tool, seconds", worst / 1000, 3, " s");

  const [getOrder] = tools;
  const c = targetContract(getOrder!, "mcp");
  if (!c.ok) throw new Error(c.reason);
  const ajv = compileAdvertised(c.contract.schema, c.contract.dialect);
  if (!ajv.ok) throw new Error(ajv.reason);
  const probe = runtimeProbe(getOrder!);
  const payload = { customerId: "c_1", includeHistory: true, unexpectedField: "x" };
  const rows = await compare(
    {
      "ajv verdict (advertised)": () => ajv.check(payload),
      "runtime verdict (gate.call, stub execute)": () => runtimeVerdict(probe, c.contract.mapArgs, payload),
    },
    { iterations: 2_000, rounds: 5, warmup: 500 },
  );
  printTable("one payload, both verdicts", rows, "ajv verdict (advertised)");
}
