/**
 * `instrument(gate)` hears the attempts of the calls made through it even when its hooks were not
 * spread into `createGate` (a ready gate: a module's default export, the proxy's): each call carries
 * a listener in its options (src/attempt-seam.ts). Each attempt is kept once, whatever else listens.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createGate, defineTool, reject, transient, type CallOptions, type Gate } from "../../src/index.js";
import { _recordRefusal } from "../../src/refusal.js";
import { memoryLedger } from "../../src/ledger/index.js";
import type { ToolFailure } from "../../src/result.js";
import { createCallLog, type CallLogEvent, type LogEvent } from "../../src/log/index.js";
import { createGateTelemetry, ATTR } from "../../src/otel/index.js";
import { ATTEMPT_LISTENER, _withAttemptListener, _withoutAttemptListener } from "../../src/attempt-seam.js";
import type { AttemptEvent } from "../../src/execute.js";
import { memoryTracing } from "../otel/_otel.js";
import { flakyRead } from "../otel/_tools.js";

function collect() {
  const calls: CallLogEvent[] = [];
  return { calls, sink: (_line: string, e: LogEvent) => void (e.event === "toolgate.call" && calls.push(e)) };
}

const outcomes = (e: CallLogEvent | undefined) => e?.attempts.map((a) => [a[ATTR.attemptNumber], a[ATTR.attemptOutcome]]);

/** Waits `ms`, then answers, or refuses with `reject` (REJECTED). */
const work = defineTool({
  name: "work",
  version: "1",
  description: "Waits, then answers or refuses",
  input: z.object({ ms: z.number(), refuse: z.boolean() }),
  output: z.object({}),
  effect: "read",
  retry: false,
  execute: async ({ ms, refuse }) => {
    await new Promise((r) => setTimeout(r, ms));
    if (refuse) throw reject("no");
    return {};
  },
});

/** A tool that answers after 60 ms, past its 20 ms timeout. */
const slowTool = (retry: false | { attempts: number; baseMs: number; capMs: number }) =>
  defineTool({
    name: "slow",
    version: "1",
    description: "Slower than its timeout",
    input: z.object({ n: z.number() }),
    output: z.object({}),
    effect: "read",
    timeoutMs: 20,
    retry,
    execute: () => new Promise<Record<string, never>>((resolve) => setTimeout(resolve, 60, {})),
  });

describe("instrument(gate) without the hooks spread", () => {
  it("a call log line carries each attempt of the call (a transient failure, then success)", async () => {
    const out = collect();
    const log = createCallLog({ sink: out.sink });
    const gate = log.instrument(createGate({ tools: [flakyRead({ failures: 1, calls: 0 })], random: () => 0 }));
    const r = await gate.call("flaky_read", { q: "a" });
    expect(r.ok && r.meta.attempts).toBe(2);
    expect(out.calls).toHaveLength(1);
    expect(outcomes(out.calls[0])).toEqual([
      [1, "transient"],
      [2, "success"],
    ]);
    expect(out.calls[0]!.attempts[0]).toMatchObject({ [ATTR.attemptBackoffMs]: expect.any(Number) });
  });

  it("a span carries each attempt as an event", async () => {
    const t = memoryTracing();
    const otel = createGateTelemetry({ tracerProvider: t.provider, metrics: false });
    const gate = otel.instrument(createGate({ tools: [flakyRead({ failures: 2, calls: 0 })], random: () => 0 }));
    await gate.call("flaky_read", { q: "a" });
    const [span, ...rest] = t.spans();
    expect(rest).toEqual([]);
    expect(span!.events.map((e) => e.attributes?.[ATTR.attemptOutcome])).toEqual(["transient", "transient", "success"]);
  });

  it("with the hooks spread too, and wrapped twice by the same observer, each attempt is kept once", async () => {
    const out = collect();
    const log = createCallLog({ sink: out.sink });
    const base = createGate({ tools: [flakyRead({ failures: 1, calls: 0 })], random: () => 0, ...log.hooks });
    const once = log.instrument(base);
    const twice = log.instrument(base);
    await once.call("flaky_read", { q: "a" });
    await twice.call("flaky_read", { q: "b" });
    expect(out.calls.map(outcomes)).toEqual([
      [
        [1, "transient"],
        [2, "success"],
      ],
      [[1, "success"]],
    ]);
  });

  it("the same recorder nested in its own wrapper (directly or through others) records each call and refusal once", async () => {
    const out = collect();
    const log = createCallLog({ sink: out.sink });
    const t = memoryTracing();
    const otel = createGateTelemetry({ tracerProvider: t.provider, metrics: false });
    const base = createGate({ tools: [flakyRead({ failures: 1, calls: 0 })], random: () => 0, ...log.hooks, ...otel.hooks });
    const gate = log.instrument(otel.instrument(log.instrument(otel.instrument(base))));
    const r = await gate.call("flaky_read", { q: "a" });
    expect(r.ok && r.meta.attempts).toBe(2);
    expect(out.calls.map(outcomes)).toEqual([
      [
        [1, "transient"],
        [2, "success"],
      ],
    ]);
    expect(t.spans()).toHaveLength(1);
    const f: ToolFailure = { ok: false, code: "INVALID_INPUT", message: "reserved _meta", retryable: false, effect: "none", meta: { tool: "flaky_read", version: "2.1.0", callId: "r1", attempts: 0, durationMs: 0 } };
    const answered = await _recordRefusal(gate, f);
    expect(answered).toMatchObject({ ok: false, code: "INVALID_INPUT" });
    expect(out.calls.map((c) => c["toolgate.code"])).toEqual(["OK", "INVALID_INPUT"]);
    expect(t.spans()).toHaveLength(2);
    // Siblings are separate wrappers: each records its own calls.
    await log.instrument(base).call("flaky_read", { q: "b" });
    expect(out.calls).toHaveLength(3);
  });

  it("through a wrapper that drops the listener, a call that times out or is cancelled is still one line, with its attempts", async () => {
    const out = collect();
    const log = createCallLog({ sink: out.sink });
    const base = createGate({ tools: [slowTool({ attempts: 2, baseMs: 1, capMs: 1 })], ...log.hooks });
    // Forwards only the call id and the signal: the listener is dropped, the hooks match by call id.
    const dropping: Gate = { ...base, call: (n, a, o) => base.call(n, a, { ...(o?.callId !== undefined ? { callId: o.callId } : {}), ...(o?.signal !== undefined ? { signal: o.signal } : {}) }) };
    const gate = log.instrument(dropping);
    const timedOut = await gate.call("slow", { n: 1 }, { callId: "timeout-1" });
    expect(timedOut).toMatchObject({ ok: false, code: "RETRYABLE", meta: { attempts: 2 } });
    const ac = new AbortController();
    const cancelled = gate.call("slow", { n: 2 }, { callId: "cancel-1", signal: ac.signal });
    setTimeout(() => ac.abort(), 5);
    expect(await cancelled).toMatchObject({ ok: false, code: "FAILED" });
    expect(out.calls.map((c) => [c["gen_ai.tool.call.id"], c["toolgate.code"], c.attempts.length])).toEqual([
      ["timeout-1", "RETRYABLE", 2],
      ["cancel-1", "FAILED", 1],
    ]);
  });

  it("two observers of one ready gate each hear every attempt once", async () => {
    const a = collect();
    const b = collect();
    const logA = createCallLog({ sink: a.sink });
    const logB = createCallLog({ sink: b.sink });
    const gate = logB.instrument(logA.instrument(createGate({ tools: [flakyRead({ failures: 1, calls: 0 })], random: () => 0 })));
    await gate.call("flaky_read", { q: "a" });
    expect(outcomes(a.calls[0])).toEqual([
      [1, "transient"],
      [2, "success"],
    ]);
    expect(outcomes(b.calls[0])).toEqual(outcomes(a.calls[0]));
  });

  it("calls made around the wrapper are not logged and leave nothing behind", async () => {
    const out = collect();
    const log = createCallLog({ sink: out.sink });
    const base = createGate({ tools: [flakyRead({ failures: 1, calls: 0 })], random: () => 0 });
    const wrapped = log.instrument(base);
    await base.call("flaky_read", { q: "a" }); // not through the wrapper: its attempts are not the log's
    expect(out.calls).toEqual([]);
    await wrapped.call("flaky_read", { q: "b" });
    expect(out.calls.map(outcomes)).toEqual([[[1, "success"]]]);
  });

  it("the caller's options reach the gate as given: call id, idempotency key, principal, signal", async () => {
    const log = createCallLog({ sink: () => undefined });
    const seen: unknown[] = [];
    const gate = log.instrument(createGate({ tools: [flakyRead({ failures: 0, calls: 0 })], authorize: (c) => (seen.push([c.callId, c.principal?.id, c.signal?.aborted]), true) }));
    const ac = new AbortController();
    class Opts {
      get callId() {
        return "c-42";
      }
      readonly principal = { id: "u1" };
      readonly signal = ac.signal;
    }
    const r = await gate.call("flaky_read", { q: "a" }, new Opts());
    expect(r.meta.callId).toBe("c-42");
    expect(seen).toEqual([["c-42", "u1", false]]);
    const bad = await gate.call("flaky_read", { q: "a" }, { callId: 7 as never });
    expect(bad).toMatchObject({ ok: false, code: "FAILED", issues: [{ path: "callId" }] });
  });
});

describe("instrument(gate) over a gate in between (defaults, extra options, several gate calls)", () => {
  const lineOf = (out: ReturnType<typeof collect>) => outcomes(out.calls.at(-1));

  it("options the caller left out stay out: a wrapper's defaults are not overwritten", async () => {
    const out = collect();
    const log = createCallLog({ sink: out.sink });
    const inner = createGate({ tools: [flakyRead({ failures: 0, calls: 0 })], authorize: (c) => c.principal?.id === "service" });
    const withDefaults = { ...inner, call: (n: string, a: unknown, o?: CallOptions) => inner.call(n, a, { principal: { id: "service" }, ...o }) } as Gate;
    const r = await log.instrument(withDefaults).call("flaky_read", { q: "a" }, { callId: "d1" });
    expect(r).toMatchObject({ ok: true, meta: { callId: "d1" } });
    expect(lineOf(out)).toEqual([[1, "success"]]);
  });

  it("options the gate does not know reach the gate in between", async () => {
    const seen: unknown[] = [];
    const inner = createGate({ tools: [flakyRead({ failures: 0, calls: 0 })] });
    const tenantAware = { ...inner, call: (n: string, a: unknown, o?: CallOptions & { tenant?: string }) => (seen.push(o?.tenant), inner.call(n, a, o)) } as Gate;
    await createCallLog({ sink: () => undefined }).instrument(tenantAware).call("flaky_read", { q: "a" }, { callId: "t1", tenant: "acme" } as CallOptions);
    expect(seen).toEqual(["acme"]);
  });

  it("a fallback to a second gate: the line has the attempts of the gate call that answered, not the first one's", async () => {
    const out = collect();
    const log = createCallLog({ sink: out.sink });
    const primary = createGate({ tools: [flakyRead({ failures: 99, calls: 0 })], random: () => 0 });
    const secondary = createGate({ tools: [flakyRead({ failures: 0, calls: 0 })], random: () => 0 });
    const fallback = { ...primary, call: async (n: string, a: unknown, o?: CallOptions) => { const r = await primary.call(n, a, o); return r.ok ? r : secondary.call(n, a, o); } } as Gate;
    const r = await log.instrument(fallback).call("flaky_read", { q: "a" }, { callId: "fb" });
    expect(r).toMatchObject({ ok: true, meta: { attempts: 1 } });
    expect(lineOf(out)).toEqual([[1, "success"]]);
  });

  it("two gates called at once: only the answering one's attempts, never interleaved", async () => {
    const out = collect();
    const log = createCallLog({ sink: out.sink });
    const g1 = createGate({ tools: [flakyRead({ failures: 1, calls: 0 })], random: () => 0 });
    const g2 = createGate({ tools: [flakyRead({ failures: 2, calls: 0 })], random: () => 0 });
    const hedge = { ...g1, call: (n: string, a: unknown, o?: CallOptions) => Promise.all([g1.call(n, a, o), g2.call(n, a, o)]).then(([x]) => x) } as Gate;
    await log.instrument(hedge).call("flaky_read", { q: "a" }, { callId: "h" });
    expect(lineOf(out)).toEqual([
      [1, "transient"],
      [2, "success"],
    ]);
  });

  it("an envelope a gate in between copied (no mark) is recorded from the copy, without attempt events rather than possibly wrong ones", async () => {
    const out = collect();
    const log = createCallLog({ sink: out.sink });
    const inner = createGate({ tools: [flakyRead({ failures: 1, calls: 0 })], random: () => 0 });
    const rebuilt = { ...inner, call: async (n: string, a: unknown, o?: CallOptions) => ({ ...(await inner.call(n, a, o)) }) } as Gate;
    const r = await log.instrument(rebuilt).call("flaky_read", { q: "a" });
    expect(r.ok && r.meta.attempts).toBe(2);
    expect(out.calls.at(-1)).toMatchObject({ "toolgate.code": "OK", "toolgate.attempts": 2, attempts: [] });
  });

  it("a fallback that calls the second gate without the options: each gate call has its line with its own attempts; the wrapper's line of that unmarked answer has none (a known duplicate)", async () => {
    const out = collect();
    const log = createCallLog({ sink: out.sink });
    const primary = createGate({ tools: [flakyRead({ failures: 99, calls: 0 })], random: () => 0, ...log.hooks });
    const backup = createGate({ tools: [flakyRead({ failures: 0, calls: 0 })], random: () => 0, ...log.hooks });
    const dropping = { ...primary, call: async (n: string, a: unknown, o?: CallOptions) => { const r = await primary.call(n, a, o); return r.ok ? r : backup.call(n, a, o?.signal === undefined ? undefined : { signal: o.signal }); } } as Gate;
    const r = await log.instrument(dropping).call("flaky_read", { q: "a" }, { callId: "x" });
    expect(r).toMatchObject({ ok: true, meta: { attempts: 1 } });
    expect(out.calls.map((c) => [c["gen_ai.tool.call.id"] === r.meta.callId ? "backup" : c["gen_ai.tool.call.id"], c["toolgate.code"], outcomes(c)])).toEqual([
      ["backup", "OK", [[1, "success"]]],
      ["x", "RETRYABLE", [[1, "transient"], [2, "transient"], [3, "transient"]]],
      ["backup", "OK", []],
    ]);
  });

  it("a replay of an answer stored by another version, hooks and instrument: one line", async () => {
    const out = collect();
    const log = createCallLog({ sink: out.sink });
    const ledger = memoryLedger();
    const pay = (version: string) => defineTool({ name: "pay", version, description: "Pays", input: z.object({ n: z.number() }), output: z.object({ ok: z.boolean() }), effect: "write", execute: () => ({ ok: true }) });
    await createGate({ tools: [pay("1")], ledger }).call("pay", { n: 1 }, { idempotencyKey: "k" });
    const r = await log.instrument(createGate({ tools: [pay("2")], ledger, ...log.hooks })).call("pay", { n: 1 }, { idempotencyKey: "k", callId: "replay" });
    expect(r).toMatchObject({ ok: true, meta: { replayed: true, version: "1" } });
    expect(out.calls.map((c) => [c["gen_ai.tool.call.id"], c["toolgate.replayed"], c.attempts])).toEqual([["replay", true, []]]);
  });

  it("options that cannot be read are refused as unreadable, read once", async () => {
    const out = collect();
    let reads = 0;
    const flaky = {
      get callId(): string {
        if (reads++ === 0) throw new Error("not yet");
        return "late";
      },
    };
    const r = await createCallLog({ sink: out.sink }).instrument(createGate({ tools: [flakyRead({ failures: 0, calls: 0 })] })).call("flaky_read", { q: "a" }, flaky);
    expect(r).toMatchObject({ ok: false, code: "FAILED", issues: [{ path: "", code: "unreadable" }] });
    expect(reads).toBe(1);
  });

  it("a strict Proxy as options (throws on keys it does not hold) works, raw and instrumented", async () => {
    const strict = (t: object) => new Proxy(t, { get: (o, k) => (k in o ? (o as Record<PropertyKey, unknown>)[k] : (() => { throw new Error(`no ${String(k)}`); })()) });
    const all = { callId: "s", idempotencyKey: undefined, principal: undefined, signal: undefined, fromModel: undefined };
    const gate = createGate({ tools: [flakyRead({ failures: 1, calls: 0 })], random: () => 0 });
    expect(await gate.call("flaky_read", { q: "a" }, strict({ ...all, callId: "s1" }) as CallOptions)).toMatchObject({ ok: true, meta: { callId: "s1" } });
    const out = collect();
    const r = await createCallLog({ sink: out.sink }).instrument(gate).call("flaky_read", { q: "a" }, strict({ ...all, callId: "s2" }) as CallOptions);
    expect(r).toMatchObject({ ok: true, meta: { callId: "s2" } });
  });
});

describe("hooks and instrument together: a hook that fires outside the call's async context", () => {
  it("a call cancelled by its signal is one line, with its cancelled attempt", async () => {
    const out = collect();
    const log = createCallLog({ sink: out.sink });
    const hang = defineTool({
      name: "hang",
      version: "1",
      description: "Waits for its abort",
      input: z.object({}),
      output: z.object({}),
      effect: "read",
      retry: false,
      execute: (_i, ctx) => new Promise((resolve) => ctx.signal.addEventListener("abort", () => setTimeout(resolve, 5, {}))),
    });
    const gate = log.instrument(createGate({ tools: [hang], ...log.hooks }));
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 20);
    const r = await gate.call("hang", {}, { signal: ac.signal });
    expect(r).toMatchObject({ ok: false, code: "FAILED" });
    expect(out.calls.map(outcomes)).toEqual([[[1, "cancelled"]]]);
  });

  it("two calls in flight with one call id (two MCP sessions' request 1): each line has its own record and attempts", async () => {
    const out = collect();
    const log = createCallLog({ sink: out.sink });
    const gate = log.instrument(createGate({ tools: [work], ...log.hooks }));
    const [a, b] = await Promise.all([gate.call("work", { ms: 60, refuse: false }, { callId: "same" }), gate.call("work", { ms: 10, refuse: true }, { callId: "same" })]);
    expect([a.ok, b.ok]).toEqual([true, false]);
    expect(out.calls.map((c) => [c["toolgate.code"], outcomes(c)]).sort()).toEqual([
      ["OK", [[1, "success"]]],
      ["REJECTED", [[1, "rejected"]]],
    ]);
  });

  it("a call the gate answers under another id (a refused id, a gate in between that rewrites it) is one line", async () => {
    const out = collect();
    const log = createCallLog({ sink: out.sink });
    const inner = createGate({ tools: [flakyRead({ failures: 0, calls: 0 })], ...log.hooks });
    const prefixed = { ...inner, call: (n: string, a: unknown, o?: CallOptions) => inner.call(n, a, { ...o, callId: `acme:${o?.callId ?? "-"}` }) } as Gate;
    await log.instrument(prefixed).call("flaky_read", { q: "a" }, { callId: "c1" });
    await log.instrument(inner).call("flaky_read", { q: "a" }, { callId: "" });
    expect(out.calls.map((c) => [c["gen_ai.tool.call.id"] === "acme:c1" || c["toolgate.code"] === "FAILED", c["toolgate.code"]])).toEqual([
      [true, "OK"],
      [true, "FAILED"],
    ]);
  });

  it("a call with the same tool and id made around the wrapper, or refused in front of the gate, while one is in flight: two lines, each its own", async () => {
    for (const mode of ["around", "refusal"] as const) {
      const out = collect();
      const log = createCallLog({ sink: out.sink });
      const base = createGate({ tools: [work], ...log.hooks });
      const gate = log.instrument(base);
      const inflight = gate.call("work", { ms: 40, refuse: false }, { callId: "7" });
      await new Promise((r) => setTimeout(r, 5));
      if (mode === "around") await base.call("work", { ms: 1, refuse: true }, { callId: "7" });
      else {
        const f: ToolFailure = { ok: false, code: "INVALID_INPUT", message: "reserved _meta", retryable: false, effect: "none", meta: { tool: "work", version: "1", callId: "7", attempts: 0, durationMs: 0 } };
        await _recordRefusal(gate, f);
      }
      await inflight;
      expect(out.calls.map((c) => [c["toolgate.code"], outcomes(c)]).sort(), mode).toEqual(
        mode === "around"
          ? [
              ["OK", [[1, "success"]]],
              ["REJECTED", [[1, "rejected"]]],
            ]
          : [
              ["INVALID_INPUT", []],
              ["OK", [[1, "success"]]],
            ],
      );
    }
  });

  it("a tool that calls the gate itself: its inner calls are lines of their own, the outer line is the outer call's", async () => {
    const out = collect();
    const log = createCallLog({ sink: out.sink });
    let failOnce = 1;
    const rec = defineTool({
      name: "rec",
      version: "1",
      description: "Calls itself once, one level down",
      input: z.object({ depth: z.number() }),
      output: z.object({ d: z.number() }),
      effect: "read",
      retry: { attempts: 3, baseMs: 1, capMs: 2 },
      execute: async ({ depth }) => {
        if (depth > 0) {
          await raw.call("rec", { depth: depth - 1 }, { callId: "inner" });
          if (failOnce-- > 0) throw transient("once");
        }
        return { d: depth };
      },
    });
    const raw: Gate = createGate({ tools: [rec], random: () => 0, ...log.hooks });
    await log.instrument(raw).call("rec", { depth: 1 }, { callId: "outer" });
    expect(out.calls.map((c) => [c["gen_ai.tool.call.id"], outcomes(c)])).toEqual([
      ["inner", [[1, "success"]]],
      ["inner", [[1, "success"]]],
      ["outer", [[1, "transient"], [2, "success"]]],
    ]);
  });

  it("a fallback with the hooks in both gates in between: the answering call is the line, the first gate call a line of its own", async () => {
    const out = collect();
    const log = createCallLog({ sink: out.sink });
    const primary = createGate({ tools: [flakyRead({ failures: 99, calls: 0 })], random: () => 0, ...log.hooks });
    const secondary = createGate({ tools: [flakyRead({ failures: 0, calls: 0 })], random: () => 0, ...log.hooks });
    const fallback = { ...primary, call: async (n: string, a: unknown, o?: CallOptions) => { const r = await primary.call(n, a, o); return r.ok ? r : secondary.call(n, a, o); } } as Gate;
    await log.instrument(fallback).call("flaky_read", { q: "a" }, { callId: "fb" });
    expect(out.calls.map((c) => [c["toolgate.code"], c["toolgate.attempts"], outcomes(c)])).toEqual([
      ["RETRYABLE", 3, [[1, "transient"], [2, "transient"], [3, "transient"]]],
      ["OK", 1, [[1, "success"]]],
    ]);
  });

  it("timeouts fired by the shared timer, through a gate in between that rewrites ids: one line per call", async () => {
    const out = collect();
    const log = createCallLog({ sink: out.sink });
    const slow = slowTool(false);
    const inner = createGate({ tools: [slow], ...log.hooks });
    const prefixed = { ...inner, call: (n: string, a: unknown, o?: CallOptions) => inner.call(n, a, { ...o, callId: `acme:${o?.callId ?? "-"}` }) } as Gate;
    const gate = log.instrument(prefixed);
    await Promise.all([gate.call("slow", { n: 1 }, { callId: "a" }), gate.call("slow", { n: 2 }, { callId: "b" })]);
    expect(out.calls.map((c) => [c["gen_ai.tool.call.id"], outcomes(c)]).sort()).toEqual([
      ["acme:a", [[1, "timeout"]]],
      ["acme:b", [[1, "timeout"]]],
    ]);
  });

  it("a gate call that outlives the wrapped call (started, not awaited, by its tool) still has its line", async () => {
    const out = collect();
    const log = createCallLog({ sink: out.sink });
    let inner: Promise<unknown> | undefined;
    const spawn = defineTool({
      name: "spawn",
      version: "1",
      description: "Starts a call of itself and answers at once",
      input: z.object({ depth: z.number() }),
      output: z.object({}),
      effect: "read",
      execute: ({ depth }) => {
        if (depth > 0) inner = raw.call("spawn", { depth: depth - 1 }, { callId: "late" }).then(() => new Promise((r) => setTimeout(r, 10)));
        return depth > 0 ? {} : new Promise<Record<string, never>>((r) => setTimeout(r, 20, {}));
      },
    });
    const raw: Gate = createGate({ tools: [spawn], ...log.hooks });
    await log.instrument(raw).call("spawn", { depth: 1 }, { callId: "outer" });
    await inner;
    expect(out.calls.map((c) => [c["gen_ai.tool.call.id"], outcomes(c)]).sort()).toEqual([
      ["late", [[1, "success"]]],
      ["outer", [[1, "success"]]],
    ]);
  });

  it("a call around the wrapper that times out after a wrapped call armed the deadline timer still has its line", async () => {
    const out = collect();
    const log = createCallLog({ sink: out.sink });
    const t = defineTool({
      name: "t",
      version: "1",
      description: "Hangs when asked",
      input: z.object({ m: z.string() }),
      output: z.object({}),
      effect: "read",
      timeoutMs: 30,
      retry: false,
      execute: async ({ m }) => {
        if (m === "hang") await new Promise((r) => setTimeout(r, 80));
        return {};
      },
    });
    const raw = createGate({ tools: [t], ...log.hooks });
    await log.instrument(raw).call("t", { m: "quick" }, { callId: "wrapped" }); // arms the 30 ms queue's timer in its context
    await raw.call("t", { m: "hang" }, { callId: "around" });
    expect(out.calls.map((c) => [c["gen_ai.tool.call.id"], c["toolgate.code"], outcomes(c)])).toEqual([
      ["wrapped", "OK", [[1, "success"]]],
      ["around", "RETRYABLE", [[1, "timeout"]]],
    ]);
  });

  it("calls timed out by the shared deadline timer: each line has its own attempts", async () => {
    const out = collect();
    const log = createCallLog({ sink: out.sink });
    const slow = slowTool({ attempts: 2, baseMs: 1, capMs: 2 });
    const gate = log.instrument(createGate({ tools: [slow], random: () => 0, ...log.hooks }));
    await Promise.all([gate.call("slow", { n: 1 }, { callId: "a" }), gate.call("slow", { n: 2 }, { callId: "b" })]);
    expect(out.calls.map((c) => [c["gen_ai.tool.call.id"], outcomes(c)]).sort()).toEqual([
      ["a", [[1, "timeout"], [2, "timeout"]]],
      ["b", [[1, "timeout"], [2, "timeout"]]],
    ]);
  });
});

describe("the attempt listener of a call's options", () => {
  const withListener = (opts: Parameters<typeof _withAttemptListener>[0], l: (e: AttemptEvent) => void) => _withAttemptListener(opts, { begin: () => undefined, attempt: l });
  const listen = (gate: Gate, opts: Parameters<typeof _withAttemptListener>[0], l: (e: AttemptEvent) => void) => gate.call("flaky_read", { q: "a" }, withListener(opts, l));

  it("hears that call's attempts only, after the gate's own onAttempt", async () => {
    const order: string[] = [];
    const gate = createGate({ tools: [flakyRead({ failures: 1, calls: 0 })], random: () => 0, onAttempt: (e) => void order.push(`hook ${e.callId} ${e.attempt} ${e.outcome}`) });
    await listen(gate, { callId: "a" }, (e) => void order.push(`listener ${e.callId} ${e.attempt} ${e.outcome}`));
    await gate.call("flaky_read", { q: "b" }, { callId: "b" });
    expect(order).toEqual(["hook a 1 transient", "listener a 1 transient", "hook a 2 success", "listener a 2 success", "hook b 1 success"]);
  });

  it("a listener that throws changes no result; the error goes to onHookError as onAttempt's", async () => {
    const errors: [string, unknown][] = [];
    const gate = createGate({ tools: [flakyRead({ failures: 1, calls: 0 })], random: () => 0, onHookError: (hook, e) => void errors.push([hook, e]) });
    const boom = new Error("listener broke");
    const r = await listen(gate, undefined, () => {
      throw boom;
    });
    expect(r).toMatchObject({ ok: true, data: { answer: "A" }, meta: { attempts: 2 } });
    expect(errors).toEqual([
      ["onAttempt", boom],
      ["onAttempt", boom],
    ]);
  });

  it("one listener that throws stops none of the others", async () => {
    const heard: number[] = [];
    const gate = createGate({ tools: [flakyRead({ failures: 0, calls: 0 })], onHookError: () => undefined });
    const opts = {
      [ATTEMPT_LISTENER]: [
        {
          begin: () => {
            throw new Error("first broke at the start");
          },
          attempt: () => {
            throw new Error("first broke");
          },
        },
        { begin: () => undefined, attempt: (e: AttemptEvent) => void heard.push(e.attempt) },
      ],
    };
    expect(await gate.call("flaky_read", { q: "a" }, opts as CallOptions)).toMatchObject({ ok: true });
    expect(heard).toEqual([1]);
  });

  it("listeners of nested wrappers are all called, inner last; a value that is not a function is no listener", async () => {
    const order: string[] = [];
    const gate = createGate({ tools: [flakyRead({ failures: 0, calls: 0 })] });
    const outer = withListener({ callId: "n" }, (e) => void order.push(`outer ${e.attempt}`));
    await listen(gate, outer, (e) => void order.push(`inner ${e.attempt}`));
    expect(order).toEqual(["outer 1", "inner 1"]);
    const r = await gate.call("flaky_read", { q: "a" }, { [ATTEMPT_LISTENER]: "not a function" } as never);
    expect(r.ok).toBe(true);
  });

  it("options that are not an object pass as they are (the gate refuses them); without a listener, nothing changes", async () => {
    const gate = createGate({ tools: [flakyRead({ failures: 0, calls: 0 })] });
    const heard: unknown[] = [];
    const r = await listen(gate, 42 as never, (e) => void heard.push(e));
    expect(r).toMatchObject({ ok: false, code: "FAILED", message: "Invalid call options" });
    expect(heard).toEqual([]);
    const plain = { callId: "x" };
    expect(_withoutAttemptListener(plain)).toBe(plain);
    const stripped = _withoutAttemptListener(withListener(plain, (e) => void heard.push(e))!);
    await gate.call("flaky_read", { q: "a" }, stripped);
    expect(heard).toEqual([]);
  });
});

describe("a listened call's async resource", () => {
  it("is destroyed when the call answers: async_hooks users that keep state per resource do not grow", async () => {
    const { createHook } = await import("node:async_hooks");
    const live = new Set<number>();
    let created = 0;
    const hook = createHook({
      init(id, type) {
        if (type !== "toolgate.call") return;
        created++;
        live.add(id);
      },
      destroy(id) {
        live.delete(id);
      },
    }).enable();
    try {
      const gate = createGate({ tools: [flakyRead({ failures: 1, calls: 0 })], retry: { baseMs: 1, capMs: 1 } });
      const listener = { begin: () => undefined, attempt: () => undefined };
      for (let i = 0; i < 50; i++) await gate.call("flaky_read", { q: "a" }, { [ATTEMPT_LISTENER]: [listener] } as CallOptions);
      await new Promise((r) => setImmediate(r)); // destroy hooks run after the current tick
      expect(created).toBe(50);
      expect(live.size).toBe(0);
    } finally {
      hook.disable();
    }
  });
});
