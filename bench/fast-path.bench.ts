/**
 * The compiled fast path (src/fast-path.ts) against what it replaces: `hardenValue` plus zod's
 * Standard Schema `validate` on the input side (and, for information, plus the Ajv unknown-key
 * check the gate also runs), zod's `validate` alone on the output side.
 * `compare` awaits every call (~100 ns of its own), so each timed call runs a batch of 100 and
 * the table shows nanoseconds per batch; the ratio is what the targets speak of.
 */
import { compare, printTable, verdict } from "./harness.js";
import { compileFastInput, compileFastOutput, NO } from "../src/fast-path.js";
import { compileLimits, DEFAULT_LIMITS, hardenValue } from "../src/harden.js";
import { compileUnknownKeyCheck } from "../src/unknown-keys.js";
import { closeObjects } from "../src/json-schema.js";
import type { JsonSchema } from "../src/standard.js";
import { z } from "zod";
import { GetOrderInput, GetOrderOutput } from "../examples/orders/schemas.js";

const BATCH = 100;

function batch(fn: () => unknown): () => unknown {
  return () => {
    let last: unknown;
    for (let i = 0; i < BATCH; i++) last = fn();
    return last;
  };
}

export default async (): Promise<void> => {
  const limits = compileLimits(DEFAULT_LIMITS);
  const fastIn = compileFastInput(GetOrderInput, limits);
  const fastOut = compileFastOutput(GetOrderOutput);
  if (fastIn === undefined || fastOut === undefined) throw new Error("the example schemas must compile");
  const input = { customerId: "c_1" };
  const output = { found: true, customerId: "c_1", orders: [{ id: "o_100", status: "paid" }, { id: "o_101", status: "pending" }] };
  if (fastIn(input) === NO || fastOut(output) === NO) throw new Error("the fast path must accept the sample values");
  const validateIn = GetOrderInput["~standard"].validate;
  const validateOut = GetOrderOutput["~standard"].validate;
  // what the gate runs today on a value: harden, validate, then the unknown-key check (Ajv)
  const unknownKeys = compileUnknownKeyCheck(closeObjects(z.toJSONSchema(GetOrderInput, { io: "input" }) as JsonSchema));
  const redact = (t: string): string => t;

  const inRows = await compare(
    {
      "harden + validate (×100)": batch(() => {
        const h = hardenValue(input, limits);
        return h.ok ? validateIn(h.value) : h;
      }),
      "harden + validate + unknown keys (×100)": batch(() => {
        const h = hardenValue(input, limits);
        if (!h.ok) return h;
        const r = validateIn(h.value);
        return unknownKeys(h.value, redact).length === 0 ? r : undefined;
      }),
      "fast input (×100)": batch(() => fastIn(input)),
    },
    { iterations: 300, rounds: 20, warmup: 300 },
  );
  printTable("fast path: GetOrderInput { customerId }", inRows, "harden + validate (×100)");
  const fastNs = inRows[2]!.nsPerOp;
  verdict("fused input speed-up vs harden+validate", inRows[0]!.nsPerOp / fastNs, 4, "×", true);
  process.stdout.write(`(info) fused input speed-up vs harden+validate+unknown keys: ${(inRows[1]!.nsPerOp / fastNs).toFixed(2)}×\n`);

  const outRows = await compare(
    {
      "zod validate (×100)": batch(() => validateOut(output)),
      "fast output (×100)": batch(() => fastOut(output)),
    },
    { iterations: 300, rounds: 20, warmup: 300 },
  );
  printTable("fast path: GetOrderOutput (2 orders)", outRows, "zod validate (×100)");
  verdict("output speed-up vs zod validate", outRows[0]!.nsPerOp / outRows[1]!.nsPerOp, 3, "×", true);
};
