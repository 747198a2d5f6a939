import { EventEmitter } from "node:events";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { createGate, defineTool, transient, type AttemptEvent, type GateOptions } from "../../src/index.js";

function flaky(failures: number, effect: "read" | "write" = "read", error: () => unknown = () => transient("busy")) {
  const calls = { n: 0 };
  const tool = defineTool({
    name: "flaky",
    version: "1",
    description: "d",
    input: z.object({}),
    output: z.object({ n: z.number() }),
    effect,
    execute: () => {
      calls.n++;
      if (calls.n <= failures) throw error();
      return { n: calls.n };
    },
  });
  return { tool, calls };
}

afterEach(() => {
  vi.useRealTimers();
});

/** Run a call to completion under fake timers, advancing through every backoff. */
async function settle<T>(p: Promise<T>): Promise<T> {
  let done = false;
  void p.then(() => (done = true));
  for (let i = 0; i < 100 && !done; i++) await vi.advanceTimersByTimeAsync(1_000);
  return p;
}

describe("retries", () => {
  it("retries a transient read up to the cap (3 attempts) and no more", async () => {
    vi.useFakeTimers();
    const { tool, calls } = flaky(10);
    const events: AttemptEvent[] = [];
    const gate = createGate({ tools: [tool], onAttempt: (e) => void events.push(e) });
    const r = await settle(gate.call("flaky", {}));
    expect(calls.n).toBe(3);
    expect(r.ok ? null : [r.code, r.retryable, r.effect, r.meta.attempts]).toEqual(["RETRYABLE", true, "none", 3]);
    expect(events.map((e) => e.outcome)).toEqual(["transient", "transient", "transient"]);
    expect(events[0]!.backoffMs).toBeGreaterThanOrEqual(0);
    expect(events[0]!.backoffMs).toBeLessThan(100);
    expect(events[1]!.backoffMs).toBeLessThan(200);
    expect(events[2]!.backoffMs).toBeUndefined();
  });

  it("succeeds after transient failures and counts attempts", async () => {
    vi.useFakeTimers();
    const { tool, calls } = flaky(2);
    const r = await settle(createGate({ tools: [tool] }).call("flaky", {}));
    expect(r.ok ? [r.data, r.meta.attempts] : null).toEqual([{ n: 3 }, 3]);
    expect(calls.n).toBe(3);
  });

  it("honours the hard cap of 5 and the per-tool override", async () => {
    expect(() => createGate({ tools: [flaky(0).tool], retry: { attempts: 6 } })).toThrow(/1 to 5/);
    vi.useFakeTimers();
    const { tool, calls } = flaky(10);
    const gate = createGate({ tools: [tool], retry: { attempts: 5 } });
    await settle(gate.call("flaky", {}));
    expect(calls.n).toBe(5);
    // The tool's own setting wins over the gate's, either way.
    for (const [own, gateWide] of [[2, 5], [4, 1]] as const) {
      const t = flaky(10);
      const g = createGate({ tools: [defineTool({ ...t.tool, retry: { attempts: own } })], retry: { attempts: gateWide } });
      await settle(g.call("flaky", {}));
      expect(t.calls.n).toBe(own);
    }
  });

  it("does not retry a permanent error", async () => {
    const { tool, calls } = flaky(10, "read", () => new Error("bad request"));
    const r = await createGate({ tools: [tool] }).call("flaky", {});
    expect(calls.n).toBe(1);
    expect(r.ok ? null : [r.code, r.retryable, r.effect]).toEqual(["FAILED", false, "none"]);
  });

  it("never retries a write: the effect is unknown", async () => {
    const { tool, calls } = flaky(10, "write");
    const r = await createGate({ tools: [tool] }).call("flaky", {});
    expect(calls.n).toBe(1);
    expect(r.ok ? null : [r.code, r.retryable, r.effect]).toEqual(["FAILED", false, "unknown"]);
  });

  it("classifies network error codes and HTTP statuses", async () => {
    vi.useFakeTimers();
    const reset = flaky(1, "read", () => Object.assign(new Error("socket"), { code: "ECONNRESET" }));
    expect((await settle(createGate({ tools: [reset.tool] }).call("flaky", {}))).ok).toBe(true);
    const forbidden = flaky(1, "read", () => Object.assign(new Error("no"), { status: 403 }));
    const r = await createGate({ tools: [forbidden.tool] }).call("flaky", {});
    expect(r.ok ? null : [r.code, forbidden.calls.n]).toEqual(["DENIED", 1]);
    // Cloud throttling is transient even with status 400 (AWS), by code or by name.
    for (const e of [{ code: "ThrottlingException", statusCode: 400 }, { name: "TooManyRequestsException", status: 400 }, { code: "SlowDown" }]) {
      const throttled = flaky(1, "read", () => Object.assign(new Error("slow down"), e));
      expect((await settle(createGate({ tools: [throttled.tool] }).call("flaky", {}))).ok, JSON.stringify(e)).toBe(true);
      expect(throttled.calls.n).toBe(2);
    }
  });

  it("uses the tool's classifier first", async () => {
    vi.useFakeTimers();
    let n = 0;
    const tool = defineTool({
      name: "c",
      version: "1",
      description: "d",
      input: z.object({}),
      output: z.object({}),
      effect: "read",
      classify: (e) => (e instanceof Error && e.message === "overloaded" ? { kind: "transient", retryAfterMs: 700 } : undefined),
      execute: () => {
        n++;
        if (n === 1) throw new Error("overloaded");
        return {};
      },
    });
    const events: AttemptEvent[] = [];
    const r = await settle(createGate({ tools: [tool], onAttempt: (e) => void events.push(e) }).call("c", {}));
    expect(r.ok).toBe(true);
    expect(events[0]!.backoffMs).toBeGreaterThanOrEqual(700);
  });

  it("a retryAfterMs beyond the backoff cap is returned to the caller, not waited", async () => {
    const { tool, calls } = flaky(10, "read", () => transient("later", { retryAfterMs: 60_000 }));
    const r = await createGate({ tools: [tool] }).call("flaky", {});
    expect(calls.n).toBe(1);
    expect(r.ok ? null : [r.code, r.retryAfterMs]).toEqual(["RETRYABLE", 60_000]);
  });

  it("a timeout aborts the signal and is retried as transient for reads", async () => {
    vi.useFakeTimers();
    const signals: AbortSignal[] = [];
    const tool = defineTool({
      name: "slow",
      version: "1",
      description: "d",
      input: z.object({}),
      output: z.object({}),
      effect: "read",
      timeoutMs: 50,
      execute: (_i, ctx) => {
        signals.push(ctx.signal);
        return new Promise<never>(() => {});
      },
    });
    const r = await settle(createGate({ tools: [tool] }).call("slow", {}));
    expect(r.ok ? null : [r.code, r.meta.attempts, r.message]).toEqual(["RETRYABLE", 3, "The tool timed out; try again later"]);
    expect(signals.map((s) => s.aborted)).toEqual([true, true, true]);
    expect(signals[0]!.reason).toBeInstanceOf(Error);
  });

  it("a write that times out is FAILED with effect unknown", async () => {
    vi.useFakeTimers();
    const tool = defineTool({
      name: "slow_write",
      version: "1",
      description: "d",
      input: z.object({}),
      output: z.object({}),
      effect: "write",
      timeoutMs: 50,
      execute: () => new Promise<never>(() => {}),
    });
    const r = await settle(createGate({ tools: [tool] }).call("slow_write", {}));
    expect(r.ok ? null : [r.code, r.effect, r.meta.attempts]).toEqual(["FAILED", "unknown", 1]);
  });

  /** A read that never answers; each execution's signal is pushed to `seen`. */
  const waitingTool = (seen: AbortSignal[]) =>
    defineTool({
      name: "wait",
      version: "1",
      description: "d",
      input: z.object({}),
      output: z.object({}),
      effect: "read",
      execute: (_i, ctx) => {
        seen.push(ctx.signal);
        return new Promise<never>(() => {});
      },
    });

  it("the caller's signal cancels the call and the tool's signal", async () => {
    const seen: AbortSignal[] = [];
    const ac = new AbortController();
    const p = createGate({ tools: [waitingTool(seen)] }).call("wait", {}, { signal: ac.signal });
    await new Promise((r) => setTimeout(r, 5));
    ac.abort();
    const r = await p;
    expect(r.ok ? null : [r.code, r.message]).toEqual(["FAILED", "The call was cancelled"]);
    expect(seen[0]?.aborted).toBe(true);
  });

  // The gate listens to the caller's signal one microtask after invoking the tool (a fresh
  // signal's first listener is expensive): an abort in that window is still seen.
  it("an abort right after the call starts (same tick) still cancels a tool that is waiting", async () => {
    const seen: AbortSignal[] = [];
    const gate = createGate({ tools: [waitingTool(seen)] });
    const ac = new AbortController();
    const p = gate.call("wait", {}, { signal: ac.signal });
    ac.abort(new Error("stop"));
    const r = await p;
    expect(r.ok ? null : [r.code, r.message, r.meta.attempts]).toEqual(["FAILED", "The call was cancelled", 1]);
    expect(seen.map((s) => s.aborted)).toEqual([true]);
    // An abort from a later macrotask, many calls sharing one signal: each is cancelled once, and
    // the signal carries one listener for all of them (Node warns past 10).
    const shared = new AbortController();
    const many = Array.from({ length: 20 }, () => gate.call("wait", {}, { signal: shared.signal }));
    await new Promise((res) => setTimeout(res, 5));
    expect(EventEmitter.getEventListeners(shared.signal, "abort")).toHaveLength(1);
    shared.abort();
    const codes = (await Promise.all(many)).map((x) => (x.ok ? "OK" : x.code));
    expect(codes).toEqual(Array.from({ length: 20 }, () => "FAILED"));
  });

  it("a tool that finishes in the same tick is not cancelled by a later abort, and leaves no listener behind", async () => {
    const tool = defineTool({ name: "fast", version: "1", description: "d", input: z.object({}), output: z.object({}), effect: "read", execute: async () => ({}) });
    const gate = createGate({ tools: [tool] });
    const ac = new AbortController();
    const add = vi.spyOn(ac.signal, "addEventListener");
    const r = await gate.call("fast", {}, { signal: ac.signal });
    ac.abort();
    expect(r.ok).toBe(true);
    expect(add).not.toHaveBeenCalled(); // finished before the gate needed to listen
  });

  it("a caller looping without yielding to the event loop still gets listeners, and none are left behind", async () => {
    let release: (() => void) | undefined;
    const tool = defineTool({
      name: "t",
      version: "1",
      description: "d",
      input: z.object({ slow: z.boolean() }),
      output: z.object({}),
      effect: "read",
      execute: ({ slow }) => (slow ? new Promise<object>((res) => (release = () => res({}))) : Promise.resolve({})),
    });
    const gate = createGate({ tools: [tool] });
    const ac = new AbortController();
    const pending = gate.call("t", { slow: true }, { signal: ac.signal });
    // 2,000 calls that answer at once, each awaited: only microtasks run, never the event loop.
    for (let i = 0; i < 2000; i++) await gate.call("t", { slow: false }, { signal: ac.signal });
    expect(EventEmitter.getEventListeners(ac.signal, "abort")).toHaveLength(1); // the slow call listens
    release?.();
    expect((await pending).ok).toBe(true);
    expect(EventEmitter.getEventListeners(ac.signal, "abort")).toHaveLength(0);
  });
});

describe("load shedding against an always-failing dependency (1,000 calls)", () => {
  async function run(options: Omit<GateOptions, "tools">) {
    const { tool, calls } = flaky(Number.POSITIVE_INFINITY);
    const gate = createGate({ tools: [tool], retry: { baseMs: 0, capMs: 0, ...options.retry }, ...options, random: () => 0 });
    const codes = new Map<string, number>();
    for (let i = 0; i < 1000; i++) {
      const r = await gate.call("flaky", {});
      const code = r.ok ? "OK" : r.code;
      codes.set(code, (codes.get(code) ?? 0) + 1);
    }
    return { executions: calls.n, codes };
  }

  it("without budget or breaker the dependency sees 3× load", async () => {
    const r = await run({ breaker: false, retry: { budget: false } });
    expect(r.executions).toBe(3000);
  });

  it("the retry budget holds it to about 1.1×", async () => {
    const r = await run({ breaker: false });
    expect(r.executions).toBeGreaterThan(1000);
    expect(r.executions).toBeLessThanOrEqual(1000 + 10 + 100);
    expect(r.codes.get("RETRYABLE")).toBe(1000);
  });

  it("the breaker fails fast with retryAfterMs once open", async () => {
    const gate = await run({ breaker: { threshold: 5, halfOpenAfterMs: 60_000 }, retry: { budget: false } });
    expect(gate.executions).toBe(5);
    expect(gate.codes.get("RETRYABLE")).toBe(1000);
  });

  it("an open breaker answers RETRYABLE with the remaining wait, then lets one probe through", async () => {
    vi.useFakeTimers();
    const { tool, calls } = flaky(3);
    const gate = createGate({ tools: [tool], retry: { attempts: 1 }, breaker: { threshold: 3, halfOpenAfterMs: 1_000 } });
    for (let i = 0; i < 3; i++) await gate.call("flaky", {});
    const open = await gate.call("flaky", {});
    expect(open.ok ? null : [open.code, open.retryable, open.meta.attempts]).toEqual(["RETRYABLE", true, 0]);
    expect(open.ok ? 0 : open.retryAfterMs).toBeGreaterThan(900);
    expect(calls.n).toBe(3);
    await vi.advanceTimersByTimeAsync(1_001);
    const probe = await gate.call("flaky", {});
    expect(probe.ok).toBe(true);
    expect((await gate.call("flaky", {})).ok).toBe(true);
  });

  it("a 4xx answer is the service up: unknown ids do not open the circuit; unclassified errors do", async () => {
    const notFound = () => Object.assign(new Error("no such order"), { status: 404 });
    const { tool } = flaky(5, "read", notFound);
    const changes: string[] = [];
    const gate = createGate({ tools: [tool], retry: { attempts: 1 }, breaker: { threshold: 3, halfOpenAfterMs: 60_000 }, onBreakerChange: (e) => void changes.push(e.state) });
    const codes: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await gate.call("flaky", {});
      codes.push(r.ok ? "OK" : r.code);
    }
    expect([codes, changes]).toEqual([["FAILED", "FAILED", "FAILED", "FAILED", "FAILED"], []]);
    expect((await gate.call("flaky", {})).ok).toBe(true); // the sixth call runs: the circuit stayed closed

    const broken = flaky(5, "read", () => new Error("socket hang up")); // no status, no code: counted as down
    const down = createGate({ tools: [broken.tool], retry: { attempts: 1 }, breaker: { threshold: 3, halfOpenAfterMs: 60_000 } });
    for (let i = 0; i < 3; i++) await down.call("flaky", {});
    const open = await down.call("flaky", {});
    expect(open.ok ? null : [open.code, open.meta.attempts, broken.calls.n]).toEqual(["RETRYABLE", 0, 3]);

    // An error whose status getter throws is unclassified: permanent, and counted as down.
    const hostile = () => Object.defineProperty(new Error("x"), "status", { get: () => { throw new Error("getter"); } });
    const odd = flaky(5, "read", hostile);
    const oddGate = createGate({ tools: [odd.tool], retry: { attempts: 1 }, breaker: { threshold: 2, halfOpenAfterMs: 60_000 } });
    const oddCodes: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await oddGate.call("flaky", {});
      oddCodes.push(r.ok ? "OK" : r.code);
    }
    expect([oddCodes, odd.calls.n]).toEqual([["FAILED", "FAILED", "RETRYABLE"], 2]);
  });
});

describe("concurrency limit", () => {
  it("answers RETRYABLE when the tool is full, without executing", async () => {
    const release: (() => void)[] = [];
    let started = 0;
    const tool = defineTool({
      name: "slow",
      version: "1",
      description: "d",
      input: z.object({}),
      output: z.object({}),
      effect: "read",
      concurrency: 2,
      execute: () => {
        started++;
        return new Promise<Record<string, never>>((r) => release.push(() => r({})));
      },
    });
    const gate = createGate({ tools: [tool] });
    const a = gate.call("slow", {});
    const b = gate.call("slow", {});
    await new Promise((r) => setTimeout(r, 1));
    const c = await gate.call("slow", {});
    expect(c.ok ? null : [c.code, c.retryable, c.meta.attempts]).toEqual(["RETRYABLE", true, 0]);
    expect(started).toBe(2);
    release.forEach((f) => f());
    expect((await a).ok && (await b).ok).toBe(true);
    const d = gate.call("slow", {});
    await new Promise((r) => setTimeout(r, 1));
    expect(started).toBe(3); // a slot freed: the next call runs
    release[2]!();
    expect((await d).ok).toBe(true);
  });
});
