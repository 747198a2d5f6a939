import { describe, it, expect } from "vitest";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { z } from "zod";
import { createGate, defineTool, type ToolResult } from "../../src/index.js";
import { composeHooks, createCallLog } from "../../src/log/index.js";
import { createGateTelemetry } from "../../src/otel/index.js";
import { memoryTracing } from "../otel/_otel.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

function heapAfterGc(): number {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

const CALLS = 10_000;

function loadGate() {
  const inFlight = { slow: 0, slowMax: 0, fast: 0, fastMax: 0 };
  const slow = defineTool({
    name: "slow_read",
    version: "1",
    description: "waits a little",
    input: z.object({ n: z.number().int() }),
    output: z.object({ n: z.number() }),
    effect: "read",
    concurrency: 50,
    execute: async ({ n }) => {
      inFlight.slowMax = Math.max(inFlight.slowMax, ++inFlight.slow);
      await new Promise((r) => setTimeout(r, 2));
      inFlight.slow--;
      return { n };
    },
  });
  const fast = defineTool({
    name: "fast_write",
    version: "1",
    description: "answers on the next turn",
    input: z.object({ n: z.number().int() }),
    output: z.object({ n: z.number() }),
    effect: "write",
    concurrency: 1_000,
    execute: async ({ n }) => {
      inFlight.fastMax = Math.max(inFlight.fastMax, ++inFlight.fast);
      await new Promise((r) => setImmediate(r));
      inFlight.fast--;
      return { n };
    },
  });
  const t = memoryTracing();
  const otel = createGateTelemetry({ tracerProvider: t.provider, metrics: false });
  let lines = 0;
  const log = createCallLog({ sink: () => void lines++ });
  const gate = otel.instrument(createGate({ tools: [slow, fast], breaker: false, ...composeHooks(otel.hooks, log.hooks) }));
  return { gate, inFlight, spans: () => t.exporter, flush: () => t.provider.forceFlush(), lines: () => lines };
}

async function burst(gate: ReturnType<typeof loadGate>["gate"]): Promise<ToolResult[]> {
  const calls: Promise<ToolResult>[] = [];
  for (let i = 0; i < CALLS; i++) {
    const kind = i % 10;
    if (kind < 4) calls.push(gate.call("slow_read", { n: i }));
    else if (kind < 8) calls.push(gate.call("fast_write", JSON.stringify({ n: i })));
    else if (kind === 8) calls.push(gate.call("fast_write", { n: "not a number" }));
    else calls.push(gate.call("nope", {}));
  }
  return Promise.all(calls);
}

describe("load: 10,000 concurrent calls through one gate", () => {
  it("every call answers, concurrency limits hold, memory returns to baseline", async () => {
    const { gate, inFlight, spans, flush, lines } = loadGate();
    // warm-up round: JIT, lazily allocated module state, heap sizing
    await burst(gate);
    await flush(); // the in-memory exporter acknowledges on a timer: settle before measuring
    spans().reset();
    const baseline = heapAfterGc();

    const rounds: number[] = [];
    for (let round = 0; round < 2; round++) {
      const results = await burst(gate);
      expect(results).toHaveLength(CALLS);
      const codes = new Map<string, number>();
      for (const r of results) {
        const c = r.ok ? "OK" : r.code;
        codes.set(c, (codes.get(c) ?? 0) + 1);
        if (!r.ok) expect(typeof r.message).toBe("string");
      }
      expect(codes.get("INVALID_INPUT")).toBe(CALLS / 10);
      expect(codes.get("UNKNOWN_TOOL")).toBe(CALLS / 10);
      // 4,000 slow reads against a limit of 50: the rest are refused as busy, never queued unbounded
      expect((codes.get("OK") ?? 0) + (codes.get("RETRYABLE") ?? 0)).toBe((CALLS * 8) / 10);
      expect(codes.get("RETRYABLE")).toBeGreaterThan(0);
      // each limit reached and held: 4,000 calls of each tool start in one turn
      expect(inFlight.slowMax).toBe(50);
      expect(inFlight.fastMax).toBe(1_000);
      expect(inFlight.slow + inFlight.fast).toBe(0);
      expect(spans().getFinishedSpans()).toHaveLength(CALLS);
      await flush();
      spans().reset();
      results.length = 0;
      rounds.push(heapAfterGc() - baseline);
    }
    expect(lines()).toBe(CALLS * 3);
    // 10,000 envelopes and spans are several MB; what stays after they are dropped must not grow
    for (const growth of rounds) expect(growth).toBeLessThan(2 * 1024 * 1024);
    expect(Math.max(...rounds) - Math.min(...rounds)).toBeLessThan(2 * 1024 * 1024);
  }, 60_000);
});
