import { describe, it, expect } from "vitest";
import { Writable } from "node:stream";
import { createGate, isToolgateConfigError, type ToolResult } from "../../src/index.js";
import { composeHooks, createCallLog, jsonLineSink, type LogEvent } from "../../src/log/index.js";
import { createGateTelemetry, ATTR } from "../../src/otel/index.js";
import { createFakeOrders, makeOrderTools } from "../../examples/orders/index.js";
import { memoryTracing } from "./_otel.js";
import { flakyRead, login } from "./_tools.js";

function collect() {
  const lines: string[] = [];
  const events: LogEvent[] = [];
  return { lines, events, sink: (line: string, e: LogEvent) => void (lines.push(line), events.push(e)) };
}

describe("createCallLog", () => {
  it("writes one JSON line per call with the span's fields", async () => {
    const out = collect();
    const log = createCallLog({ sink: out.sink });
    const t = memoryTracing();
    const otel = createGateTelemetry({ tracerProvider: t.provider, metrics: false });
    const flaky = { failures: 1, calls: 0 };
    const gate = otel.instrument(
      log.instrument(createGate({ tools: [...makeOrderTools(createFakeOrders()), flakyRead(flaky)], ...composeHooks(log.hooks, otel.hooks), random: () => 0 })),
    );
    const rs: ToolResult[] = [
      await gate.call("get_order", '{"customerId":"c_1"}'),
      await gate.call("flaky_read", { q: "a" }),
      await gate.call("get_order", '{"customerId":1}'),
    ];
    expect(out.lines).toHaveLength(3);
    const spans = t.spans();
    expect(spans).toHaveLength(3);
    for (const [i, line] of out.lines.entries()) {
      expect(line).not.toContain("\n");
      const parsed = JSON.parse(line) as Record<string, unknown>;
      const r = rs[i]!;
      const span = spans.find((s) => s.attributes[ATTR.callId] === r.meta.callId)!;
      expect(parsed.event).toBe("toolgate.call");
      expect(parsed.name).toBe(span.name);
      expect(parsed.duration_ms).toBe(r.meta.durationMs);
      expect(Date.parse(String(parsed.time))).toBeGreaterThan(0);
      for (const [k, v] of Object.entries(span.attributes)) expect(parsed[k], k).toEqual(v);
      expect(Object.keys(parsed).filter((k) => k.includes(".")).sort()).toEqual(Object.keys(span.attributes).sort());
      const attempts = parsed.attempts as Record<string, unknown>[];
      expect(attempts).toHaveLength(r.meta.attempts);
      expect(attempts.map((a) => a[ATTR.attemptOutcome])).toEqual(span.events.map((e) => e.attributes?.[ATTR.attemptOutcome]));
    }
    expect((JSON.parse(out.lines[1]!) as { attempts: Record<string, unknown>[] }).attempts.map((a) => a[ATTR.attemptOutcome])).toEqual([
      "transient",
      "success",
    ]);
    expect(JSON.parse(out.lines[2]!)).toMatchObject({ "error.type": "INVALID_INPUT", "toolgate.issue.paths": ["customerId"] });
  });

  it("logs breaker changes", async () => {
    const out = collect();
    const log = createCallLog({ sink: out.sink });
    const flaky = { failures: 10, calls: 0 };
    const gate = createGate({ tools: [flakyRead(flaky)], breaker: { threshold: 1 }, retry: { attempts: 1 }, ...log.hooks });
    await gate.call("flaky_read", { q: "a" });
    const breaker = out.events.filter((e) => e.event === "toolgate.breaker");
    expect(breaker).toEqual([{ time: expect.any(String), event: "toolgate.breaker", "gen_ai.tool.name": "flaky_read", "toolgate.breaker.state": "open" }]);
  });

  it("writes to a stream by default format, one line each", async () => {
    const chunks: string[] = [];
    const stream = new Writable({ write: (c: Buffer, _e, cb) => (chunks.push(c.toString()), cb()) });
    const log = createCallLog({ sink: jsonLineSink(stream) });
    const gate = createGate({ tools: makeOrderTools(createFakeOrders()), ...log.hooks });
    await gate.call("get_order", { customerId: "c_1" });
    await gate.call("get_order", { customerId: "c_2" });
    expect(chunks).toHaveLength(2);
    for (const c of chunks) expect(c.endsWith("}\n")).toBe(true);
  });

  it("a failing sink never changes a result; the failure is reported", async () => {
    const errors: unknown[] = [];
    const log = createCallLog({
      sink: () => {
        throw new Error("disk full");
      },
      onError: (e) => errors.push(e),
    });
    const hookErrors: string[] = [];
    const gate = log.instrument(createGate({ tools: makeOrderTools(createFakeOrders()), ...log.hooks, onHookError: (h) => hookErrors.push(h) }));
    const r = await gate.call("get_order", { customerId: "c_1" });
    expect(r.ok).toBe(true);
    expect(errors).toHaveLength(1);
    const rejecting = createCallLog({ sink: () => Promise.reject(new Error("later")), onError: (e) => errors.push(e) });
    const g2 = createGate({ tools: makeOrderTools(createFakeOrders()), ...rejecting.hooks });
    expect((await g2.call("get_order", { customerId: "c_1" })).ok).toBe(true);
    await new Promise((r) => setTimeout(r, 0));
    expect(errors).toHaveLength(2);
    expect(hookErrors).toEqual([]);
  });

  it("captures redacted arguments when opted in", async () => {
    const out = collect();
    const log = createCallLog({ sink: out.sink, capture: { arguments: true } });
    const gate = log.instrument(createGate({ tools: [login], ...log.hooks }));
    await gate.call("login", { user: "ann", password: "pw-123456789" });
    const parsed = JSON.parse(out.lines[0]!) as Record<string, string>;
    expect(JSON.parse(parsed["gen_ai.tool.call.arguments"]!)).toEqual({ user: "ann", password: "[REDACTED]" });
    expect(out.lines[0]).not.toContain("pw-123456789");
  });

  it("refuses bad options at creation with ToolgateConfigError", () => {
    for (const bad of [{ sink: "stdout" }, { capture: { maxLength: 3 } }, { capture: "all" }, { toolType: "" }, { onError: 1 }]) {
      let err: unknown;
      try {
        createCallLog(bad as never);
      } catch (e) {
        err = e;
      }
      expect(isToolgateConfigError(err), JSON.stringify(bad)).toBe(true);
      expect((err as { code: string }).code).toBe("E_TELEMETRY_OPTIONS");
    }
    expect(() => createGateTelemetry({ tracerProvider: {} as never })).toThrow(/tracerProvider/);
  });

  it("names a misspelt or unknown option, in both recorders, instead of ignoring it", () => {
    const cases: [() => unknown, RegExp][] = [
      [() => createCallLog({ captur: { arguments: true } } as never), /createCallLog: unknown option captur \(did you mean capture\?\)/],
      [() => createCallLog({ capture: { argument: true } } as never), /unknown option capture\.argument \(did you mean capture\.arguments\?\)/],
      [() => createCallLog({ capture: { result: "yes" } } as never), /capture\.result must be a boolean/],
      [() => createCallLog({ redact: { patern: [] } } as never), /patern/],
      [() => createCallLog(42 as never), /options must be an object/],
      [() => createGateTelemetry({ metrics: "no" } as never), /metrics must be a boolean/],
      [() => createGateTelemetry({ tracer: {} } as never), /createGateTelemetry: unknown option tracer \(did you mean tracerProvider\?\)/],
      [() => createGateTelemetry({ sink: () => undefined } as never), /unknown option sink/],
    ];
    for (const [make, message] of cases) {
      let err: unknown;
      try {
        make();
      } catch (e) {
        err = e;
      }
      expect(isToolgateConfigError(err), String(message)).toBe(true);
      expect(err).toMatchObject({ code: "E_TELEMETRY_OPTIONS", message: expect.stringMatching(message) });
    }
  });
});

describe("composeHooks", () => {
  it("calls every set, even after one throws, then rethrows the first error", () => {
    const seen: string[] = [];
    const hooks = composeHooks(
      { onCall: () => void seen.push("a") },
      {
        onCall: () => {
          seen.push("b");
          throw new Error("b");
        },
      },
      { onCall: () => void seen.push("c"), onAttempt: () => void seen.push("c-attempt") },
    );
    expect(() => hooks.onCall({} as never)).toThrow("b");
    expect(seen).toEqual(["a", "b", "c"]);
    hooks.onAttempt({} as never);
    hooks.onBreakerChange({ tool: "t", state: "open" });
    expect(seen).toEqual(["a", "b", "c", "c-attempt"]);
  });
});
