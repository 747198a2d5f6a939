/**
 * What a recorder must hold against: tool names a model invents (personal data, unbounded series),
 * values under secret key names in captured arguments, and its own collaborators failing — an
 * `onError` that throws, a tracer that throws, a provider that cannot give a tracer.
 */
import { describe, expect, it, beforeAll } from "vitest";
import { z } from "zod";
import { createGate, defineTool, type Gate } from "../../src/index.js";
import { createGateTelemetry, ATTR } from "../../src/otel/index.js";
import { createCallLog, type CallLogEvent, type LogEvent } from "../../src/log/index.js";
import { installContextManager, memoryMetrics, memoryTracing } from "./_otel.js";

beforeAll(() => installContextManager());

const echo = defineTool({ name: "echo", version: "1", description: "echo", input: z.object({}).loose(), output: z.object({ ok: z.boolean() }), effect: "read", execute: () => ({ ok: true }) });

describe("recorders and untrusted input", () => {
  it.each(["instrument", "hooks"] as const)("names the model invents are recorded as _unknown, never as sent (%s)", async (mode) => {
    const t = memoryTracing();
    const lines: CallLogEvent[] = [];
    const otel = createGateTelemetry({ tracerProvider: t.provider, metrics: false });
    const log = createCallLog({ sink: (_l, e: LogEvent) => void (e.event === "toolgate.call" && lines.push(e)) });
    const base = createGate({ tools: [echo], ...(mode === "hooks" ? { onCall: (r) => (otel.hooks.onCall(r), log.hooks.onCall(r)) } : {}) });
    const gate = mode === "instrument" ? otel.instrument(log.instrument(base)) : base;
    for (let i = 0; i < 20; i++) await gate.call(`cust_${1000 + i}_jane_doe`, {});
    await gate.call("echo", {});
    expect(new Set(t.spans().map((s) => s.name))).toEqual(new Set(["execute_tool _unknown", "execute_tool echo"]));
    expect(new Set(t.spans().map((s) => s.attributes[ATTR.toolName]))).toEqual(new Set(["_unknown", "echo"]));
    expect(JSON.stringify(lines)).not.toContain("jane_doe");
    expect(lines).toHaveLength(21);
  });

  it("captured arguments: a value under a secret key name is redacted whole, whatever its shape", async () => {
    const lines: CallLogEvent[] = [];
    const log = createCallLog({ sink: (_l, e: LogEvent) => void (e.event === "toolgate.call" && lines.push(e)), capture: { arguments: true } });
    const gate = log.instrument(createGate({ tools: [echo] }));
    await gate.call("echo", { headers: { "x-api-key": "abcd1234efgh" }, password: "hunter22 with space", env: { DATABASE_PASSWORD: "s3cr3t-db-pass", API_KEY: "k-9f8e7d6c5b4a" }, pageToken: "cursor-7" });
    const captured = String(lines[0]![ATTR.arguments]);
    for (const secret of ["abcd1234efgh", "hunter22", "s3cr3t-db-pass", "k-9f8e7d6c5b4a"]) expect(captured).not.toContain(secret);
    expect(captured).toContain("cursor-7");
  });

  it("an onError that throws, beside a tracer that throws, never makes the call reject", async () => {
    const throwing = { getTracer: () => ({ startSpan: () => { throw new Error("startSpan"); } }) };
    const otel = createGateTelemetry({ tracerProvider: throwing as never, metrics: false, onError: () => { throw new Error("onError boom"); } });
    const log = createCallLog({ sink: () => { throw new Error("sink"); }, onError: () => { throw new Error("onError boom"); } });
    const gate = otel.instrument(log.instrument(createGate({ tools: [echo], ...otel.hooks })));
    await expect(gate.call("echo", {})).resolves.toMatchObject({ ok: true });
  });

  it("a tracer whose spans throw does not lose the metrics", async () => {
    const m = memoryMetrics();
    const errors: unknown[] = [];
    const span = { setAttributes: () => { throw new Error("setAttributes"); }, addEvent() {}, setStatus() {}, end() {}, updateName() {}, spanContext: () => ({ traceId: "1".repeat(32), spanId: "1".repeat(16), traceFlags: 1 }), isRecording: () => true };
    const otel = createGateTelemetry({ tracerProvider: { getTracer: () => ({ startSpan: () => span }) } as never, meterProvider: m.provider, onError: (e) => void errors.push(e) });
    const gate = otel.instrument(createGate({ tools: [echo] }));
    for (let i = 0; i < 3; i++) await gate.call("echo", {});
    const calls = (await m.collect()).find((x) => x.descriptor.name === "toolgate.calls");
    expect(calls?.dataPoints.reduce((n, d) => n + Number(d.value), 0)).toBe(3);
    expect(errors).toHaveLength(3);
    await m.shutdown();
  });

  it("a foreign gate that throws: the span still names the call id given and the tool's version", async () => {
    const t = memoryTracing();
    const otel = createGateTelemetry({ tracerProvider: t.provider, metrics: false });
    const real = createGate({ tools: [echo] });
    const foreign: Gate = { ...real, call: () => Promise.reject(new Error("foreign gate broke")) };
    await expect(otel.instrument(foreign).call("echo", {}, { callId: "thr0" })).rejects.toThrow("foreign gate broke");
    const [span] = t.spans();
    expect(span!.attributes).toMatchObject({ [ATTR.callId]: "thr0", [ATTR.version]: "1", [ATTR.toolName]: "echo" });
  });

  it("providers and sinks that are not usable are refused when the recorder is made", () => {
    expect(() => createGateTelemetry({ tracerProvider: null as never })).toThrow(expect.objectContaining({ code: "E_TELEMETRY_OPTIONS" }));
    expect(() => createGateTelemetry({ meterProvider: null as never })).toThrow(expect.objectContaining({ code: "E_TELEMETRY_OPTIONS" }));
    expect(() => createGateTelemetry({ tracerProvider: { getTracer: () => { throw new Error("no"); } } as never })).toThrow(expect.objectContaining({ code: "E_TELEMETRY_OPTIONS" }));
    expect(() => createCallLog({ sink: null as never })).toThrow(expect.objectContaining({ code: "E_TELEMETRY_OPTIONS" }));
  });
});
