/**
 * The gate's cost on the valid and invalid paths against the bare minimum a careful developer
 * would write by hand: safeParse(input), await execute, safeParse(output).
 * Targets: gate.call ≤ 1.5× bare (valid), ≤ 1.2× bare (invalid).
 *
 * The measured tool does what bare does: it calls the service without reading `ctx.signal`.
 * A tool that reads `ctx.signal` pays for Node's AbortSignal (about 2.4 µs to create one on
 * Node 20, more than the whole bare path); that row is printed separately so the price of
 * cancellation is visible rather than hidden in the gate's ratio.
 *
 * A last table measures a floor: the gate's compiled fast paths in and out, one promise, the two
 * clock reads `durationMs` needs and the envelope — and nothing else (no timeout, context, policy,
 * call scope). Any gate that answers with this envelope pays at least that much on this machine.
 * A second floor adds what timing a call out takes at the least — a promise the deadline can
 * settle before the tool does, and the deadline itself — which any gate that enforces a timeout
 * pays too.
 */
import { createGate, defineTool, type CallRecord } from "../src/index.js";
import { createFakeOrders } from "../examples/orders/index.js";
import { GetOrderInput, GetOrderOutput } from "../examples/orders/schemas.js";
import { compare, printTable, verdict } from "./harness.js";
import { compileFastInput, compileFastOutput, NO } from "../src/fast-path.js";
import { compileLimits, DEFAULT_LIMITS } from "../src/harden.js";
import { scheduleDeadline } from "../src/policy/deadline.js";

export default async function run(): Promise<void> {
  const service = createFakeOrders();
  const execute = (input: { customerId: string; includeHistory: boolean }) =>
    service.findOrders(input.customerId, { includeHistory: input.includeHistory });
  const valid = { customerId: "c_1" };
  const invalid = { customerId: 42 };

  const bare = async (args: unknown) => {
    const parsed = GetOrderInput.safeParse(args);
    if (!parsed.success) return { ok: false, error: parsed.error };
    const out = await execute(parsed.data);
    const checked = GetOrderOutput.safeParse(out);
    return checked.success ? { ok: true, data: checked.data } : { ok: false, error: checked.error };
  };
  const base = {
    name: "get_order",
    version: "1.0.0",
    description: "Look up a customer's orders",
    input: GetOrderInput,
    output: GetOrderOutput,
    effect: "read",
  } as const;
  const getOrder = defineTool({ ...base, execute });
  const readsSignal = defineTool({
    ...base,
    execute: (input, ctx) => service.findOrders(input.customerId, { includeHistory: input.includeHistory, signal: ctx.signal }),
  });
  const gate = createGate({ tools: [getOrder] });
  const withSignal = createGate({ tools: [readsSignal] });
  let seen = 0;
  const hooked = createGate({ tools: [getOrder], onCall: (r: CallRecord) => void (seen += r.attempts) });

  // The target's rows, measured together and nothing else: a row that makes an AbortSignal per
  // call leaves garbage that slows every row measured with it, bare included.
  const validRows = await compare({
    "bare (safeParse, execute, safeParse)": () => bare(valid),
    "gate.call, no hooks": () => gate.call("get_order", valid),
    "gate.call, onCall hook": () => hooked.call("get_order", valid),
  });
  printTable("valid path (get_order)", validRows, "bare (safeParse, execute, safeParse)");

  const fastIn = compileFastInput(GetOrderInput, compileLimits(DEFAULT_LIMITS));
  const fastOut = compileFastOutput(GetOrderOutput);
  if (fastIn === undefined || fastOut === undefined) throw new Error("bench setup: the example's schemas have no fast path");
  let n = 0;
  const floor = (args: unknown): Promise<unknown> => {
    const t0 = performance.now();
    const input = fastIn(args) as { customerId: string; includeHistory: boolean } | typeof NO;
    if (input === NO) return Promise.resolve({ ok: false });
    const callId = `floor_${(n++).toString(36)}`;
    return execute(input).then((out) => {
      const data = fastOut(out);
      const durationMs = Math.round((performance.now() - t0) * 1000) / 1000;
      return data === NO ? { ok: false } : { ok: true, data, meta: { tool: "get_order", version: "1.0.0", callId, attempts: 1, durationMs } };
    });
  };
  // The same floor, able to time the call out: a promise the deadline can settle before the
  // tool does, and a deadline armed and cancelled (the gate's own queue). Still no context,
  // policy, call scope, caller signal or hooks.
  const timedFloor = (args: unknown): Promise<unknown> => {
    const t0 = performance.now();
    const input = fastIn(args) as { customerId: string; includeHistory: boolean } | typeof NO;
    if (input === NO) return Promise.resolve({ ok: false });
    const callId = `floor_${(n++).toString(36)}`;
    return new Promise((resolve) => {
      const d = scheduleDeadline(30_000, { onDeadline: () => resolve({ ok: false, code: "RETRYABLE" }) }, t0);
      execute(input).then(
        (out) => {
          d.cancel();
          const data = fastOut(out);
          const durationMs = Math.round((performance.now() - t0) * 1000) / 1000;
          resolve(data === NO ? { ok: false } : { ok: true, data, meta: { tool: "get_order", version: "1.0.0", callId, attempts: 1, durationMs } });
        },
        () => {
          d.cancel();
          resolve({ ok: false });
        },
      );
    });
  };
  const floorRows = await compare({
    "bare (safeParse, execute, safeParse)": () => bare(valid),
    "floor: fast paths, clocks, envelope": () => floor(valid),
    "floor + a timeout (promise, deadline)": () => timedFloor(valid),
    "gate.call, no hooks": () => gate.call("get_order", valid),
  });
  printTable("valid path, against a floor (no target)", floorRows, "bare (safeParse, execute, safeParse)");
  const invalidRows = await compare({
    "bare (safeParse, execute, safeParse)": () => bare(invalid),
    "gate.call, no hooks": () => gate.call("get_order", invalid),
    "gate.call, onCall hook": () => hooked.call("get_order", invalid),
  });
  printTable("invalid path (customerId: 42)", invalidRows, "bare (safeParse, execute, safeParse)");

  const ratio = (rows: typeof validRows, name: string) => rows.find((r) => r.name === name)!.nsPerOp / rows[0]!.nsPerOp;
  verdict("valid: gate.call / bare", ratio(validRows, "gate.call, no hooks"), 1.5);
  verdict("valid: gate.call with onCall / bare", ratio(validRows, "gate.call, onCall hook"), 1.5);
  verdict("invalid: gate.call / bare", ratio(invalidRows, "gate.call, no hooks"), 1.2);
  if (seen === 0) throw new Error("the onCall hook never ran");

  // Last: the ctx.signal row leaves AbortSignal garbage that would slow every table after it.
  const otherRows = await compare({
    "bare (safeParse, execute, safeParse)": () => bare(valid),
    "gate.call, JSON text": () => gate.call("get_order", '{"customerId":"c_1"}'),
    "gate.call, tool reads ctx.signal": () => withSignal.call("get_order", valid),
  });
  printTable("valid path, other forms (no target)", otherRows, "bare (safeParse, execute, safeParse)");

  // Memory: what a gate keeps after calls, each with a fresh AbortSignal (as MCP and HTTP requests
  // bring), awaited back to back without yielding to the event loop.
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc !== undefined) {
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 50_000; i++) await gate.call("get_order", valid, { signal: new AbortController().signal });
    gc();
    const grown = (process.memoryUsage().heapUsed - before) / 1e6;
    process.stdout.write(`\n## memory\nheap kept after 50,000 calls with fresh signals: ${grown.toFixed(2)} MB\n`);
    verdict("heap kept after 50,000 calls", grown, 2, " MB");
  }
}
