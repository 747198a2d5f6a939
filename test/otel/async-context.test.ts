/**
 * Work toolgate shares between calls — the deadline timer (src/policy/deadline.ts), the ledgers'
 * group commit, a thenable client's flush, the proxy's restarts — is scheduled by whichever call
 * comes first. What runs from it for other calls (a retry, the hooks, the ledger's clock, a log
 * line) must run in their own call's async context or in none, never in another call's.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { describe, it, expect, beforeAll } from "vitest";
import { context, trace } from "@opentelemetry/api";
import { z } from "zod";
import { createGate, defineTool, type CallRecord } from "../../src/index.js";
import { sqliteLedger } from "../../src/ledger/index.js";
import { createMcpServer, createProxy, serveHttp } from "../../src/mcp/index.js";
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

describe("other work shared between calls", () => {
  it("a tool's thenable answered from one shared flush: each call's check and hooks run in its own context", async () => {
    const als = new AsyncLocalStorage<string>();
    const seen: string[] = [];
    const note = (what: string, call: string) => void seen.push(`${what} ${call}: ${als.getStore() ?? "none"}`);
    // A callback-queue client: the first request arms one flush that answers every request.
    let queue: { q: string; answer: (v: { q: string }) => void }[] = [];
    const request = (q: string): PromiseLike<{ q: string }> => ({
      then(ok) {
        if (queue.length === 0) {
          setTimeout(() => {
            const batch = queue;
            queue = [];
            for (const e of batch) e.answer({ q: e.q });
          }, 5);
        }
        queue.push({ q, answer: (v) => void ok?.(v) });
        return undefined as never;
      },
    });
    const lookup = defineTool({
      name: "lookup",
      version: "1",
      description: "reads through a thenable client",
      effect: "read",
      input: z.object({ q: z.string() }),
      output: z.object({ q: z.string() }),
      execute: ({ q }) => request(q) as unknown as Promise<{ q: string }>, // a thenable, as some client libraries return
      check: (out) => void note("check", out.q),
    });
    const gate = createGate({ tools: [lookup], onAttempt: (e) => note("onAttempt", e.callId), onCall: (r) => note("onCall", r.callId) });
    const [ra, rb] = await Promise.all(["a", "b"].map((q) => als.run(q, () => gate.call("lookup", { q }, { callId: q }))));
    expect(ra!.ok && rb!.ok).toBe(true);
    expect(seen.sort()).toEqual(["check a: a", "check b: b", "onAttempt a: a", "onAttempt b: b", "onCall a: a", "onCall b: b"]);
  });

  it("sqliteLedger's group commit (which reads the ledger's clock) runs in no call's context", async () => {
    const als = new AsyncLocalStorage<string>();
    const stores: string[] = [];
    const ledger = sqliteLedger({ path: ":memory:", now: () => (stores.push(als.getStore() ?? "none"), Date.now()) });
    const note = defineTool({ name: "note", version: "1", description: "a write", effect: "write", input: z.object({ t: z.string() }), output: z.object({}), execute: () => ({}) });
    const gate = createGate({ tools: [note], ledger });
    const results = await Promise.all(["a", "b"].map((k) => als.run(k, () => gate.call("note", { t: k }, { callId: k, idempotencyKey: k }))));
    expect(results.every((r) => r.ok)).toBe(true);
    expect(stores.length).toBeGreaterThanOrEqual(4); // a claim and a settle of each call
    expect(new Set(stores)).toEqual(new Set(["none"]));
    await ledger.close();
  });

  it("a proxy restart scheduled inside the call that met the failure logs, after that call answered, in no call's context", async () => {
    const als = new AsyncLocalStorage<string>();
    const seen: { store: string; line: string }[] = [];
    const echo = defineTool({ name: "echo", version: "1", description: "echo", effect: "read", input: z.object({ text: z.string() }), output: z.object({ text: z.string() }), execute: ({ text }) => ({ text }) });
    const serve = (port = 0) => serveHttp(() => createMcpServer(createGate({ tools: [echo] }), { name: "up", version: "1" }), { port });
    let up = await serve();
    const proxy = await createProxy({
      upstream: { kind: "http", url: up.url },
      config: { restart: { initialDelayMs: 20, maxDelayMs: 40 } },
      onLog: (line) => void seen.push({ store: als.getStore() ?? "none", line }),
    });
    try {
      // The upstream restarts on the same port with its sessions gone: the proxy's next call meets it.
      const port = up.port;
      await up.close();
      up = await serve(port);
      const rx = await als.run("x", () => proxy.gate.call("echo", { text: "x" }, { callId: "x" }));
      expect(rx.ok).toBe(false);
      const answered = seen.length;
      for (let i = 0; i < 100 && !seen.some((l) => l.line.includes("restarted")); i++) await pause(10);
      const after = seen.slice(answered);
      expect(after.some((l) => l.line.includes("restarted"))).toBe(true);
      expect(after.filter((l) => l.store !== "none")).toEqual([]);
      const ry = await als.run("y", () => proxy.gate.call("echo", { text: "y" }, { callId: "y" }));
      expect(ry.ok).toBe(true);
    } finally {
      await proxy.close();
      await up.close();
    }
  });
});
