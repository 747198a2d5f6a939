import { describe, it, expect, beforeAll } from "vitest";
import { SpanKind, SpanStatusCode, context, trace } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { z } from "zod";
import { createGate, defineTool, type CallRecord, type Gate, type ToolResult } from "../../src/index.js";
import { createGateTelemetry, ATTR, ATTEMPT_EVENT, SECRET_PLACEHOLDER } from "../../src/otel/index.js";
import { createFakeOrders, makeOrderTools } from "../../examples/orders/index.js";
import { installContextManager, memoryTracing } from "./_otel.js";
import { flakyRead, login, refuse } from "./_tools.js";

beforeAll(() => installContextManager());

function setup(mode: "hooks" | "instrument", capture?: { arguments?: boolean; result?: boolean }) {
  const t = memoryTracing();
  const otel = createGateTelemetry({ tracerProvider: t.provider, metrics: false, ...(capture ? { capture } : {}) });
  const service = createFakeOrders();
  const flaky = { failures: 0, calls: 0 };
  const base = createGate({ tools: [...makeOrderTools(service), flakyRead(flaky), login, refuse], ...otel.hooks, random: () => 0.5 });
  const gate: Gate = mode === "instrument" ? otel.instrument(base) : base;
  return { gate, spans: t.spans, service, flaky };
}

function toolSpans(spans: ReadableSpan[]): ReadableSpan[] {
  return spans.filter((s) => s.attributes[ATTR.operation] === "execute_tool");
}

function checkSpan(span: ReadableSpan, r: ToolResult): void {
  // A name the gate has no tool for is the model's invention: shown as _unknown, never as sent.
  const shown = !r.ok && r.code === "UNKNOWN_TOOL" ? "_unknown" : r.meta.tool;
  expect(span.name).toBe(`execute_tool ${shown}`);
  expect(span.kind).toBe(SpanKind.INTERNAL);
  const a = span.attributes;
  expect(a["gen_ai.operation.name"]).toBe("execute_tool");
  expect(a["gen_ai.tool.name"]).toBe(shown);
  expect(a["gen_ai.tool.call.id"]).toBe(r.meta.callId);
  expect(a["gen_ai.tool.type"]).toBe("function");
  expect(a["toolgate.schema.version"]).toBe(r.meta.version);
  expect(a["toolgate.attempts"]).toBe(r.meta.attempts);
  expect(a["toolgate.replayed"]).toBe(false);
  expect(span.events.filter((e) => e.name === ATTEMPT_EVENT)).toHaveLength(r.meta.attempts);
  if (r.ok) {
    expect(a["error.type"]).toBeUndefined();
    expect(a["toolgate.code"]).toBe("OK");
    expect(a["toolgate.retryable"]).toBe(false);
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
  } else {
    expect(a["error.type"]).toBe(r.code);
    expect(a["toolgate.code"]).toBe(r.code);
    expect(a["toolgate.effect"]).toBe(r.effect);
    expect(a["toolgate.retryable"]).toBe(r.retryable);
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
  }
  expect(a["gen_ai.tool.call.arguments"]).toBeUndefined();
  expect(a["gen_ai.tool.call.result"]).toBeUndefined();
}

describe.each(["hooks", "instrument"] as const)("execute_tool spans (%s)", (mode) => {
  it("records exactly one span per call, error.type iff failed, one event per attempt", async () => {
    const { gate, spans, flaky, service } = setup(mode);
    const results: ToolResult[] = [];
    results.push(await gate.call("get_order", '{"customerId":"c_1"}', { callId: "call-ok" }));
    results.push(await gate.call("get_order", '{"customerId":', { callId: "call-json" }));
    results.push(await gate.call("get_order", { customerId: 7 }));
    results.push(await gate.call("no_such_tool", {}));
    flaky.failures = 1;
    results.push(await gate.call("flaky_read", { q: "a" })); // 2 attempts, success
    flaky.failures = 5;
    results.push(await gate.call("flaky_read", { q: "b" })); // 3 attempts, RETRYABLE
    results.push(await gate.call("refuse", {}));
    service.faults.lostRefundResponses = 1;
    results.push(await gate.call("create_refund", { orderId: "o_100", amountCents: 100 }));
    service.faults.badStatus = "lost";
    results.push(await gate.call("get_order", { customerId: "c_1" }));
    expect(results.map((r) => (r.ok ? "OK" : r.code))).toEqual([
      "OK",
      "INVALID_INPUT",
      "INVALID_INPUT",
      "UNKNOWN_TOOL",
      "OK",
      "RETRYABLE",
      "REJECTED",
      "OK", // the lost refund response is retried under its idempotency key (idempotentDownstream)
      "INVALID_OUTPUT",
    ]);

    const all = toolSpans(spans());
    expect(all).toHaveLength(results.length);
    for (const r of results) {
      const mine = all.filter((s) => s.attributes["gen_ai.tool.call.id"] === r.meta.callId);
      expect(mine).toHaveLength(1);
      checkSpan(mine[0]!, r);
    }
  });

  it("puts outcome and backoff on attempt events", async () => {
    const { gate, spans, flaky } = setup(mode);
    flaky.failures = 5;
    const r = await gate.call("flaky_read", { q: "x" });
    expect(r.ok).toBe(false);
    const [span] = toolSpans(spans());
    const events = span!.events.map((e) => e.attributes ?? {});
    expect(events.map((e) => e[ATTR.attemptNumber])).toEqual([1, 2, 3]);
    expect(events.map((e) => e[ATTR.attemptOutcome])).toEqual(["transient", "transient", "transient"]);
    // random 0.5, base 1 ms, cap 2 ms: full jitter waits floor(0.5 × 1) and floor(0.5 × 2); no retry follows the last
    expect(events.map((e) => e[ATTR.attemptBackoffMs])).toEqual([0, 1, undefined]);
    for (const e of events) expect(e[ATTR.attemptDurationMs]).toBeGreaterThanOrEqual(0);
  });

  it("names spans of invalid tool names with a placeholder, never the name as sent", async () => {
    const { gate, spans } = setup(mode);
    const secret = "sk-proj-" + "A".repeat(40);
    await gate.call(secret, {});
    await gate.call("x".repeat(100_000), {});
    await gate.call("bad name!", {});
    const names = toolSpans(spans()).map((s) => [s.name, s.attributes[ATTR.toolName]]);
    expect(names).toEqual([
      ["execute_tool _invalid", "_invalid"],
      ["execute_tool _invalid", "_invalid"],
      ["execute_tool _invalid", "_invalid"],
    ]);
  });

  it("span covers the call's wall time", async () => {
    const t = memoryTracing();
    const otel = createGateTelemetry({ tracerProvider: t.provider, metrics: false });
    // A tool that takes 100 ms: a span that ended where it began could not pass for it.
    const slow = defineTool({ name: "slow", version: "1", description: "d", input: z.object({}), output: z.object({}), effect: "read", execute: () => new Promise<Record<string, never>>((res) => setTimeout(() => res({}), 100)) });
    const base = createGate({ tools: [slow], ...otel.hooks });
    const gate: Gate = mode === "instrument" ? otel.instrument(base) : base;
    const r = await gate.call("slow", {});
    const [span] = toolSpans(t.spans());
    const ms = span!.duration[0] * 1e3 + span!.duration[1] / 1e6;
    expect(r.meta.durationMs).toBeGreaterThanOrEqual(95);
    expect(ms).toBeGreaterThanOrEqual(95);
    expect(Math.abs(ms - r.meta.durationMs)).toBeLessThan(50);
  });
});

describe("instrument()", () => {
  it("makes the span the active context while the tool runs", async () => {
    const t = memoryTracing();
    const otel = createGateTelemetry({ tracerProvider: t.provider, metrics: false });
    const inner = t.provider.getTracer("service");
    const tool = defineTool({
      name: "nested",
      version: "1",
      description: "makes its own span",
      input: z.object({}),
      output: z.object({ ok: z.boolean() }),
      effect: "read",
      execute: async () => {
        const s = inner.startSpan("db.query");
        await new Promise((r) => setTimeout(r, 1));
        s.end();
        return { ok: true };
      },
    });
    const gate = otel.instrument(createGate({ tools: [tool], ...otel.hooks }));
    const outer = t.provider.getTracer("host").startSpan("agent.turn");
    await context.with(trace.setSpan(context.active(), outer), () => gate.call("nested", {}));
    outer.end();
    const spans = t.spans();
    const exec = spans.find((s) => s.name === "execute_tool nested")!;
    const db = spans.find((s) => s.name === "db.query")!;
    expect(exec.parentSpanContext?.spanId).toBe(outer.spanContext().spanId);
    expect(db.parentSpanContext?.spanId).toBe(exec.spanContext().spanId);
    expect(db.spanContext().traceId).toBe(outer.spanContext().traceId);
  });

  it("keeps the gate's other methods", () => {
    const otel = createGateTelemetry({ metrics: false });
    const base = createGate({ tools: makeOrderTools(createFakeOrders()), ...otel.hooks });
    const gate = otel.instrument(base);
    expect(gate.list()).toBe(base.list());
    expect(gate.tool("get_order")).toBe(base.tool("get_order"));
  });

  it("works without the hooks spread (attributes from the envelope, no attempt events)", async () => {
    const t = memoryTracing();
    const otel = createGateTelemetry({ tracerProvider: t.provider, metrics: false });
    const gate = otel.instrument(createGate({ tools: makeOrderTools(createFakeOrders()) }));
    const r = await gate.call("get_order", { customerId: "c_1" });
    const [span] = toolSpans(t.spans());
    expect(span!.attributes[ATTR.code]).toBe("OK");
    expect(span!.attributes[ATTR.attempts]).toBe(r.meta.attempts);
    expect(span!.attributes[ATTR.effect]).toBe("none");
  });

  it("records idempotent replays from the envelope and from the record", async () => {
    const t = memoryTracing();
    const otel = createGateTelemetry({ tracerProvider: t.provider, metrics: false });
    const replayed: ToolResult = {
      ok: true,
      data: {},
      meta: { tool: "create_refund", version: "1.0.0", callId: "c-r", attempts: 0, durationMs: 0.1, replayed: true },
    };
    const fake: Gate = { call: async () => replayed as never, list: () => [], tool: () => undefined };
    await otel.instrument(fake).call("create_refund", {});
    const rec: CallRecord = { ...replayed.meta, ok: true, code: "OK", effect: "applied", retryable: false, replayed: true, startedAt: Date.now() };
    otel.hooks.onCall(rec);
    const spans = toolSpans(t.spans());
    expect(spans.map((s) => s.attributes[ATTR.replayed])).toEqual([true, true]);
  });
});

describe("capture", () => {
  it("records nothing of the payload unless opted in", async () => {
    const { gate, spans } = setup("instrument");
    await gate.call("login", { user: "ann", password: "hunter2-password" });
    const [span] = toolSpans(spans());
    expect(JSON.stringify(span!.attributes)).not.toContain("hunter2");
    expect(JSON.stringify(span!.attributes)).not.toContain("ann");
  });

  it("when opted in, replaces secret schema fields and secret-looking values, drops _meta", async () => {
    const { gate, spans } = setup("instrument", { arguments: true, result: true });
    const token = "ghp_" + "Z".repeat(36);
    const r = await gate.call(
      "login",
      JSON.stringify({
        user: "ann",
        password: "hunter2-password",
        profile: { apiToken: "plain-looking-token", note: `see ${token}` },
        keys: [{ value: "k-one-value", label: "first" }],
        _meta: { traceparent: "00-abc", auth: "Bearer abcdefghijklmnop" },
      }),
    );
    expect(r.ok).toBe(true);
    const [span] = toolSpans(spans());
    const args = JSON.parse(String(span!.attributes["gen_ai.tool.call.arguments"])) as Record<string, unknown>;
    expect(args).toEqual({
      user: "ann",
      password: SECRET_PLACEHOLDER,
      profile: { apiToken: SECRET_PLACEHOLDER, note: "see [REDACTED]" },
      keys: [{ value: SECRET_PLACEHOLDER, label: "first" }],
    });
    const result = JSON.parse(String(span!.attributes["gen_ai.tool.call.result"])) as Record<string, unknown>;
    expect(result).toEqual({ session: SECRET_PLACEHOLDER, user: "ann", note: `see [REDACTED]` });
  });

  it("does not capture arguments the gate refused", async () => {
    const { gate, spans } = setup("instrument", { arguments: true });
    await gate.call("login", { user: "ann" });
    await gate.call("nope", { a: 1 });
    for (const s of toolSpans(spans())) expect(s.attributes["gen_ai.tool.call.arguments"]).toBeUndefined();
  });

  it("redacts recursive schemas through $ref", async () => {
    type Node = { key: string; child?: Node | undefined };
    const NodeS: z.ZodType<Node> = z.lazy(() => z.object({ key: z.string().meta({ secret: true }), child: NodeS.optional() }));
    const tree = defineTool({
      name: "tree",
      version: "1",
      description: "recursive input",
      input: z.object({ root: NodeS }),
      output: z.object({}),
      effect: "read",
      execute: () => ({}),
    });
    const t = memoryTracing();
    const otel = createGateTelemetry({ tracerProvider: t.provider, metrics: false, capture: { arguments: true } });
    const gate = otel.instrument(createGate({ tools: [tree], ...otel.hooks }));
    const r = await gate.call("tree", { root: { key: "one-secret", child: { key: "two-secret", child: { key: "three-secret" } } } });
    expect(r.ok).toBe(true);
    const text = String(toolSpans(t.spans())[0]!.attributes["gen_ai.tool.call.arguments"]);
    expect(text).not.toMatch(/one-secret|two-secret|three-secret/);
    expect(text.split(SECRET_PLACEHOLDER)).toHaveLength(4);
  });
});

describe("idempotent replays through a real ledger", () => {
  it.each(["hooks", "instrument"] as const)("marks the replayed call toolgate.replayed = true (%s)", async (mode) => {
    const { memoryLedger } = await import("../../src/ledger/index.js");
    const t = memoryTracing();
    const otel = createGateTelemetry({ tracerProvider: t.provider, metrics: false });
    const base = createGate({ tools: makeOrderTools(createFakeOrders()), ledger: memoryLedger(), ...otel.hooks });
    const gate = mode === "instrument" ? otel.instrument(base) : base;
    const first = await gate.call("create_refund", { orderId: "o_100", amountCents: 100 }, { idempotencyKey: "refund-1" });
    const again = await gate.call("create_refund", { orderId: "o_100", amountCents: 100 }, { idempotencyKey: "refund-1" });
    expect(first.ok && again.ok).toBe(true);
    expect(again.meta.replayed).toBe(true);
    const spans = toolSpans(t.spans());
    expect(spans.map((s) => [s.attributes[ATTR.replayed], s.attributes[ATTR.attempts], s.events.length])).toEqual([
      [false, 1, 1],
      [true, 0, 0],
    ]);
  });
});
