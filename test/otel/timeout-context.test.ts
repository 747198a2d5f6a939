/**
 * The shared deadline timer (src/policy/deadline.ts) is armed by whichever call finds its queue
 * empty; when it fires, the attempts that timed out continue from it. Those continuations (a
 * retry, the hooks) must run in their own call's async context, never in the context of the call
 * that happened to arm the timer.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { describe, it, expect, beforeAll } from "vitest";
import { context, trace } from "@opentelemetry/api";
import { z } from "zod";
import { createGate, defineTool, type CallRecord } from "../../src/index.js";
import { createGateTelemetry } from "../../src/otel/index.js";
import { installContextManager, memoryTracing } from "./_otel.js";

beforeAll(() => installContextManager());

/**
 * A read whose first attempt never answers (it times out) and whose retry answers at once.
 * `timeoutMs` differs per test: deadlines of one length share one queue and its timer, and a
 * timer still armed by an earlier test would be the one that fires.
 */
function slowFirst(timeoutMs: number, onAttempt: (attempt: number, q: string) => void) {
  return defineTool({
    name: "slow_first",
    version: "1",
    description: "first attempt hangs, the retry answers",
    input: z.object({ q: z.string() }),
    output: z.object({ q: z.string() }),
    effect: "read",
    timeoutMs,
    retry: { attempts: 2, baseMs: 1, capMs: 1 },
    execute: ({ q }, ctx) => {
      onAttempt(ctx.attempt, q);
      if (ctx.attempt === 1) return new Promise<never>(() => {});
      return { q };
    },
  });
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("continuations from the shared deadline timer", () => {
  it("a retry after a timeout runs in its own call's span (instrument), not the span of the call that armed the timer", async () => {
    const t = memoryTracing();
    const otel = createGateTelemetry({ tracerProvider: t.provider, metrics: false });
    const inner = t.provider.getTracer("service");
    const tool = slowFirst(30, (attempt, q) => {
      if (attempt === 2) inner.startSpan(`db.${q}`).end();
    });
    const gate = otel.instrument(createGate({ tools: [tool], ...otel.hooks }));
    const host = t.provider.getTracer("host");
    const turn = (q: string) => {
      const outer = host.startSpan(`turn.${q}`);
      return context.with(trace.setSpan(context.active(), outer), () => gate.call("slow_first", { q })).finally(() => outer.end());
    };
    // "a" arms the queue's timer; "b" joins the queue 5 ms later and times out from that timer.
    const a = turn("a");
    await pause(5);
    const b = turn("b");
    const [ra, rb] = await Promise.all([a, b]);
    expect(ra.ok && rb.ok).toBe(true);
    expect(ra.meta.attempts).toBe(2);
    expect(rb.meta.attempts).toBe(2);
    const spans = t.spans();
    for (const q of ["a", "b"]) {
      const outer = spans.find((s) => s.name === `turn.${q}`)!;
      const exec = spans.find((s) => s.name === "execute_tool slow_first" && s.parentSpanContext?.spanId === outer.spanContext().spanId);
      const db = spans.find((s) => s.name === `db.${q}`)!;
      expect(exec, `call ${q}'s execute_tool span`).toBeDefined();
      expect(db.parentSpanContext?.spanId, `db.${q}'s parent`).toBe(exec!.spanContext().spanId);
      expect(db.spanContext().traceId).toBe(outer.spanContext().traceId);
    }
  });

  it("without instrument, a timed-out call's retry and hooks never run in the context of another call", async () => {
    const als = new AsyncLocalStorage<string>();
    const seen: { what: string; call: string; store: string }[] = [];
    const note = (what: string, call: string) => void seen.push({ what, call, store: als.getStore() ?? "none" });
    const tool = slowFirst(31, (attempt, q) => {
      if (attempt === 2) note("execute", q);
    });
    const gate = createGate({
      tools: [tool],
      onCall: (r: CallRecord) => note("onCall", r.callId),
      onAttempt: (e) => note(`onAttempt ${e.attempt}`, e.callId),
    });
    // "a" arms the queue's timer; "b" joins the queue 5 ms later and times out from that timer.
    const a = als.run("a", () => gate.call("slow_first", { q: "a" }, { callId: "a" }));
    await pause(5);
    const b = als.run("b", () => gate.call("slow_first", { q: "b" }, { callId: "b" }));
    await Promise.all([a, b]);
    expect(seen.map((s) => `${s.what} ${s.call}`).sort()).toEqual(
      ["execute a", "execute b", "onAttempt 1 a", "onAttempt 1 b", "onAttempt 2 a", "onAttempt 2 b", "onCall a", "onCall b"].sort(),
    );
    // Without instrument the gate keeps no context of its own: what runs from the timer runs in
    // none ("none"), never in the other call's.
    expect(seen.filter((s) => s.store !== s.call && s.store !== "none")).toEqual([]);
  });

  it("a call cancelled where the gate starts listening to signals ends in no other call's context", async () => {
    const als = new AsyncLocalStorage<string>();
    const ended: Record<string, string> = {};
    const hang = defineTool({
      name: "hang",
      version: "1",
      description: "never answers",
      input: z.object({}),
      output: z.object({}),
      effect: "read",
      execute: () => new Promise<never>(() => {}),
    });
    const gate = createGate({ tools: [hang], onCall: (r: CallRecord) => void (ended[r.callId] = als.getStore() ?? "none") });
    const ca = new AbortController();
    const cb = new AbortController();
    // Both attempts wait for one microtask that starts listening to their signals, queued by "a".
    const a = als.run("a", () => gate.call("hang", {}, { callId: "a", signal: ca.signal }));
    const b = als.run("b", () => gate.call("hang", {}, { callId: "b", signal: cb.signal }));
    cb.abort(); // before that microtask: "b" is cancelled there
    const rb = await b;
    ca.abort();
    const ra = await a;
    expect([ra.ok, rb.ok]).toEqual([false, false]);
    expect(ended.b).toBeDefined();
    expect(ended.b).not.toBe("a");
  });
});
