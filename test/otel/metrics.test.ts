import { describe, it, expect } from "vitest";
import type { DataPoint, Histogram, MetricData } from "@opentelemetry/sdk-metrics";
import { createGate } from "../../src/index.js";
import { createGateTelemetry, METRICS, UNKNOWN_TOOL_METRIC_NAME, BREAKER_STATE_VALUE } from "../../src/otel/index.js";
import { createFakeOrders, makeOrderTools } from "../../examples/orders/index.js";
import { memoryMetrics, memoryTracing } from "./_otel.js";
import { flakyRead } from "./_tools.js";

function points<T>(ms: MetricData[], name: string): DataPoint<T>[] {
  return (ms.find((m) => m.descriptor.name === name)?.dataPoints ?? []) as DataPoint<T>[];
}

function byAttrs<T>(ps: DataPoint<T>[]): Record<string, T> {
  return Object.fromEntries(ps.map((p) => [Object.values(p.attributes).join("|"), p.value]));
}

describe("gate metrics", () => {
  it("counts calls by tool and code, records durations, retries and breaker state", async () => {
    const m = memoryMetrics();
    const t = memoryTracing();
    const otel = createGateTelemetry({ tracerProvider: t.provider, meterProvider: m.provider });
    const flaky = { failures: 0, calls: 0 };
    const gate = otel.instrument(
      createGate({
        tools: [...makeOrderTools(createFakeOrders()), flakyRead(flaky)],
        breaker: { threshold: 3, halfOpenAfterMs: 60_000 },
        retry: { budget: false },
        ...otel.hooks,
        random: () => 0.5,
      }),
    );
    await gate.call("get_order", { customerId: "c_1" });
    await gate.call("get_order", { customerId: "c_2" });
    await gate.call("get_order", { customerId: 1 });
    await gate.call("invented_tool_1", {});
    await gate.call("invented_tool_2", {});
    flaky.failures = 3; // 3 attempts fail: 2 retries, then the breaker opens
    await gate.call("flaky_read", { q: "a" });
    const open = await gate.call("flaky_read", { q: "b" });
    expect(open.ok === false && open.code).toBe("RETRYABLE");
    expect(open.meta.attempts).toBe(0);

    const ms = await m.collect();
    expect(byAttrs(points<number>(ms, METRICS.calls))).toEqual({
      "get_order|OK": 2,
      "get_order|INVALID_INPUT|INVALID_INPUT": 1,
      [`${UNKNOWN_TOOL_METRIC_NAME}|UNKNOWN_TOOL|UNKNOWN_TOOL`]: 2,
      "flaky_read|RETRYABLE|RETRYABLE": 2,
    });
    const hist = byAttrs(points<Histogram>(ms, METRICS.duration));
    expect(hist["get_order|OK"]!.count).toBe(2);
    expect(hist["get_order|OK"]!.sum).toBeGreaterThan(0);
    expect(hist["get_order|OK"]!.sum).toBeLessThan(1); // seconds
    expect(byAttrs(points<number>(ms, METRICS.retries))).toEqual({ flaky_read: 2 });
    expect(byAttrs(points<number>(ms, METRICS.breakerState))).toEqual({
      get_order: BREAKER_STATE_VALUE.closed,
      create_refund: BREAKER_STATE_VALUE.closed,
      flaky_read: BREAKER_STATE_VALUE.open,
    });
    expect(byAttrs(points<number>(ms, METRICS.breakerTransitions))).toEqual({ "flaky_read|open": 1 });
    await m.shutdown();
  });

  it("records no metrics with metrics: false", async () => {
    const m = memoryMetrics();
    const otel = createGateTelemetry({ meterProvider: m.provider, metrics: false });
    const gate = otel.instrument(createGate({ tools: makeOrderTools(createFakeOrders()), ...otel.hooks }));
    await gate.call("get_order", { customerId: "c_1" });
    expect(points<number>(await m.collect(), METRICS.calls)).toEqual([]);
    await m.shutdown();
  });
});
