/**
 * How fast the gate refuses adversarial payloads (the same cases as test/adversarial): each must
 * be rejected as INVALID_INPUT in under 50 ms. Payloads are built once, outside the timing; a row
 * is the median per-call time over a few rounds. Two extra rows probe shapes beyond the issue's
 * list (a 1 MB text nested 500,000 deep, a 10^6-key object) to show where the time goes.
 * Also: the cost of the telemetry recorders on a valid call.
 */
import { ADVERSARIAL_CASES, adversarialGate } from "../test/adversarial/_inputs.js";
import { createGate } from "../src/index.js";
import { createCallLog } from "../src/log/index.js";
import { createGateTelemetry } from "../src/otel/index.js";
import { createFakeOrders, makeOrderTools } from "../examples/orders/index.js";
import { compare, printTable, verdict } from "./harness.js";

const LIMIT_MS = 50;

function wide(n: number): Record<string, number> {
  const o: Record<string, number> = {};
  for (let i = 0; i < n; i++) o[`k${i}`] = 0;
  return o;
}

const EXTRA = [
  { name: "extra: depth 500,000 arrays, 1 MB JSON text", tool: "get_order", args: () => `{"customerId":${"[".repeat(499_990)}${"]".repeat(499_990)}}` },
  { name: "extra: object with 10^6 keys, value", tool: "get_order", args: () => ({ customerId: "c_1", w: wide(1_000_000) }) },
];

export default async function run(): Promise<void> {
  const { gate } = adversarialGate();
  const rows = [];
  const misses: string[] = [];
  for (const c of [...ADVERSARIAL_CASES, ...EXTRA]) {
    const args = c.args();
    const first = await gate.call(c.tool, args);
    if (first.ok || first.code !== "INVALID_INPUT") misses.push(`${c.name}: answered ${first.ok ? "OK" : first.code}`);
    const [row] = await compare({ [c.name]: () => gate.call(c.tool, args) }, { iterations: 3, rounds: 3, warmup: 1 });
    rows.push(row!);
  }
  printTable("adversarial payload → INVALID_INPUT (per call)", rows);
  let worst = rows[0]!;
  for (const r of rows) {
    if (r.nsPerOp > worst.nsPerOp) worst = r;
    if (r.nsPerOp / 1e6 > LIMIT_MS) misses.push(`${r.name}: ${(r.nsPerOp / 1e6).toFixed(1)} ms`);
  }
  const listed = rows.filter((r) => !r.name.startsWith("extra:"));
  const worstListed = listed.reduce((a, b) => (b.nsPerOp > a.nsPerOp ? b : a));
  verdict(`slowest listed case (${worstListed.name}) ms`, worstListed.nsPerOp / 1e6, LIMIT_MS, " ms");
  verdict(`slowest of all incl. extras (${worst.name}) ms`, worst.nsPerOp / 1e6, LIMIT_MS, " ms");
  for (const m of misses) process.stdout.write(`MISS ${m}\n`);

  // Telemetry overhead on the valid path.
  const make = (extra: object) => createGate({ tools: makeOrderTools(createFakeOrders()), ...extra });
  const plain = make({});
  const otel = createGateTelemetry(); // global no-op providers: the recorder's own cost
  const withOtel = otel.instrument(make(otel.hooks));
  const log = createCallLog({ sink: () => undefined });
  const withLog = log.instrument(make(log.hooks));
  const hooksOnly = make(createCallLog({ sink: () => undefined }).hooks);
  const valid = { customerId: "c_1" };
  const t = await compare({
    "gate.call (no telemetry)": () => plain.call("get_order", valid),
    "gate.call + otel instrument (no-op SDK)": () => withOtel.call("get_order", valid),
    "gate.call + call log, hooks only": () => hooksOnly.call("get_order", valid),
    "gate.call + call log, instrument": () => withLog.call("get_order", valid),
  });
  printTable("telemetry cost on a valid get_order call", t, "gate.call (no telemetry)");
}
