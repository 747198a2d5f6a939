/**
 * The circuit breaker against the orderings a busy gate sees: the wall clock stepping, attempts let
 * through before the circuit opened failing while a probe runs, a hook calling back in, and the
 * retry budget when the breaker refuses a retry.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { createGate, defineTool, denied, reject, transient, type ToolResult } from "../../src/index.js";

afterEach(() => {
  vi.useRealTimers();
});

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const codeOf = (r: ToolResult) => (r.ok ? "OK" : r.code);

/** A read whose behaviour the input picks: `hang` ms ignoring the signal, `fail` transiently, or answer after `ms`. */
function scripted(name = "t") {
  const running = { now: 0, max: 0, runs: 0 };
  const tool = defineTool({
    name,
    version: "1",
    description: "d",
    input: z.object({ mode: z.enum(["hang", "fail", "ok"]), ms: z.number().default(0) }),
    output: z.object({ ok: z.boolean() }),
    effect: "read",
    timeoutMs: 200,
    retry: { attempts: 1 },
    execute: async ({ mode, ms }) => {
      running.runs++;
      if (mode === "fail") throw transient("down");
      if (mode === "hang") {
        await sleep(ms);
        return { ok: true };
      }
      running.now++; // the "ok" calls in flight at once
      running.max = Math.max(running.max, running.now);
      try {
        await sleep(ms);
        return { ok: true };
      } finally {
        running.now--;
      }
    },
  });
  return { tool, running };
}

/** A read that always throws what `fail` makes, counting its runs in `runs.n`. */
function failingRead(name: string, runs: { n: number }, fail: () => Error) {
  return defineTool({
    name,
    version: "1",
    description: "d",
    input: z.object({}),
    output: z.object({ ok: z.boolean() }),
    effect: "read",
    execute: () => {
      runs.n++;
      throw fail();
    },
  });
}

describe("circuit breaker", () => {
  it("waits on a monotonic clock: a step of the wall clock back does not hold the circuit open", async () => {
    vi.useFakeTimers();
    const { tool, running } = scripted();
    const gate = createGate({ tools: [tool], breaker: { threshold: 1, halfOpenAfterMs: 50 } });
    expect(codeOf(await gate.call("t", { mode: "fail" }))).toBe("RETRYABLE"); // opens
    vi.setSystemTime(Date.now() - 3_600_000); // NTP steps the wall clock back an hour
    await vi.advanceTimersByTimeAsync(80);
    const probe = gate.call("t", { mode: "ok" });
    await vi.advanceTimersByTimeAsync(1);
    expect(await probe).toMatchObject({ ok: true, meta: { attempts: 1 } });
    expect(running.runs).toBe(2);
  });

  it("half-open lets one probe through: an attempt let through before the circuit opened, failing meanwhile, neither reopens it nor frees the probe", async () => {
    vi.useFakeTimers();
    const { tool, running } = scripted();
    const states: string[] = [];
    const gate = createGate({ tools: [tool], breaker: { threshold: 1, halfOpenAfterMs: 20 }, onBreakerChange: (e) => void states.push(e.state) });
    const stale = gate.call("t", { mode: "hang", ms: 1_000 }); // let through while closed; times out at 200 ms
    expect(codeOf(await gate.call("t", { mode: "fail" }))).toBe("RETRYABLE"); // opens the circuit
    await vi.advanceTimersByTimeAsync(100);
    const probe = gate.call("t", { mode: "ok", ms: 150 }); // the probe: runs from 100 to 250 ms
    await vi.advanceTimersByTimeAsync(130); // 230 ms: the stale attempt timed out at 200
    const second = await gate.call("t", { mode: "ok", ms: 150 });
    expect(second).toMatchObject({ ok: false, code: "RETRYABLE", meta: { attempts: 0 } });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(codeOf(await stale)).toBe("RETRYABLE");
    expect((await probe).ok).toBe(true);
    expect(running.max).toBe(1);
    expect(states).toEqual(["open", "half-open", "closed"]);
  });

  it("an attempt let through before the circuit opened that succeeds meanwhile does not close it: only the probe does", async () => {
    vi.useFakeTimers();
    const { tool, running } = scripted();
    const states: string[] = [];
    const gate = createGate({ tools: [tool], breaker: { threshold: 1, halfOpenAfterMs: 60_000 }, onBreakerChange: (e) => void states.push(e.state) });
    const stale = gate.call("t", { mode: "ok", ms: 100 }); // let through while closed
    expect(codeOf(await gate.call("t", { mode: "fail" }))).toBe("RETRYABLE"); // opens the circuit for 60 s
    await vi.advanceTimersByTimeAsync(150);
    expect((await stale).ok).toBe(true);
    running.runs = 0;
    const held = await gate.call("t", { mode: "ok" });
    expect(held).toMatchObject({ ok: false, code: "RETRYABLE", meta: { attempts: 0 } });
    expect(held.ok ? 0 : (held.retryAfterMs ?? 0)).toBeGreaterThan(59_000);
    expect(running.runs).toBe(0);
    expect(states).toEqual(["open"]);
    await vi.advanceTimersByTimeAsync(60_000);
    const probe = gate.call("t", { mode: "ok" });
    await vi.advanceTimersByTimeAsync(1);
    expect((await probe).ok).toBe(true);
    expect(states).toEqual(["open", "half-open", "closed"]);
  });

  it("a probe the service answers with a 4xx, a reject or a denial closes the circuit: the service is up", async () => {
    for (const answer of [() => Object.assign(new Error("not found"), { status: 404 }), () => reject("no such order"), () => denied("scope")]) {
      let fail = true;
      let runs = 0;
      const states: string[] = [];
      const t = defineTool({
        name: "t",
        version: "1",
        description: "d",
        input: z.object({}),
        output: z.object({ ok: z.boolean() }),
        effect: "read",
        retry: { attempts: 1 },
        execute: () => {
          runs++;
          if (fail) throw transient("down");
          throw answer();
        },
      });
      const gate = createGate({ tools: [t], breaker: { threshold: 1, halfOpenAfterMs: 20 }, onBreakerChange: (e) => void states.push(e.state) });
      await gate.call("t", {}); // opens
      fail = false;
      await sleep(30);
      const probe = await gate.call("t", {});
      expect(probe).toMatchObject({ ok: false, meta: { attempts: 1 } });
      expect(states).toEqual(["open", "half-open", "closed"]);
      runs = 0;
      expect((await gate.call("t", {})).meta.attempts).toBe(1); // let through: the circuit is closed
      expect(runs).toBe(1);
    }
  });

  it("halfOpenAfterMs 0 still lets one probe through at a time", async () => {
    vi.useFakeTimers();
    const { tool, running } = scripted();
    const gate = createGate({ tools: [tool], breaker: { threshold: 1, halfOpenAfterMs: 0 } });
    expect(codeOf(await gate.call("t", { mode: "fail" }))).toBe("RETRYABLE"); // opens
    running.runs = 0;
    const calls = Array.from({ length: 5 }, () => gate.call("t", { mode: "ok", ms: 50 }));
    await vi.advanceTimersByTimeAsync(100);
    const results = await Promise.all(calls);
    expect(running.runs).toBe(1);
    expect(results.map(codeOf)).toEqual(["OK", "RETRYABLE", "RETRYABLE", "RETRYABLE", "RETRYABLE"]);
    expect(results[1]).toMatchObject({ retryAfterMs: 1, meta: { attempts: 0 } });
  });

  it("an open circuit's retryAfterMs is capped at the longest timer, as every other wait", async () => {
    const runs = { n: 0 };
    const gate = createGate({ tools: [failingRead("t", runs, () => transient("down"))], breaker: { threshold: 1, halfOpenAfterMs: 1e13 }, retry: { attempts: 1 } });
    await gate.call("t", {}); // opens
    const refused = await gate.call("t", {});
    expect(refused).toMatchObject({ ok: false, code: "RETRYABLE", retryAfterMs: 2 ** 31 - 1, meta: { attempts: 0 } });
    expect(runs.n).toBe(1);
  });

  it("a hook that calls the tool when the circuit half-opens is not a second probe", async () => {
    vi.useFakeTimers();
    const { tool, running } = scripted();
    let nested: Promise<ToolResult> | undefined;
    const gate = createGate({
      tools: [tool],
      breaker: { threshold: 1, halfOpenAfterMs: 20 },
      onBreakerChange: (e) => {
        if (e.state === "half-open") nested = gate.call("t", { mode: "ok", ms: 50 });
      },
    });
    await gate.call("t", { mode: "fail" });
    await vi.advanceTimersByTimeAsync(30);
    const probe = gate.call("t", { mode: "ok", ms: 50 });
    await vi.advanceTimersByTimeAsync(100);
    expect((await probe).ok).toBe(true);
    expect(await nested).toMatchObject({ ok: false, code: "RETRYABLE", meta: { attempts: 0 } });
    expect(running.max).toBe(1);
  });

  it("a retry the breaker would refuse is not made: no backoff announced or waited, and its budget token is kept", async () => {
    const runs = { n: 0 };
    let first = true;
    const t = failingRead("t", runs, () => {
      if (!first) return transient("down");
      first = false;
      return new Error("unclassified"); // permanent, and counted against the service
    });
    const u = failingRead("u", runs, () => transient("down"));
    const events: string[] = [];
    const gate = createGate({
      tools: [t, u],
      breaker: { threshold: 2, halfOpenAfterMs: 60_000 },
      retry: { attempts: 2, baseMs: 20, capMs: 20, budget: { ratio: 0, reserve: 1 } }, // one retry token in all
      random: () => 0.5,
      onAttempt: (e) => void events.push(`${e.tool}#${e.attempt}${e.backoffMs === undefined ? "" : ` wait ${e.backoffMs}`}`),
    });
    await gate.call("t", {});
    runs.n = 0;
    const opened = await gate.call("t", {}); // this failure opens t's circuit
    expect(opened).toMatchObject({ ok: false, code: "RETRYABLE", meta: { attempts: 1 } });
    expect(opened.ok ? 0 : (opened.retryAfterMs ?? 0)).toBeGreaterThan(59_000); // told when the breaker lets a call through
    expect(runs.n).toBe(1);
    expect(events).toEqual(["t#1", "t#1"]);
    runs.n = 0;
    expect(await gate.call("u", {})).toMatchObject({ ok: false, code: "RETRYABLE", meta: { attempts: 2 } }); // u's circuit is closed: it gets the token
    expect(runs.n).toBe(2);
  });

  it("a retry cancelled in its wait gives its budget token back", async () => {
    const runs = { n: 0 };
    const make = (name: string) => failingRead(name, runs, () => transient("down"));
    const gate = createGate({ tools: [make("a"), make("b")], breaker: false, retry: { attempts: 2, baseMs: 200, capMs: 200, budget: { ratio: 0, reserve: 1 } }, random: () => 0.9 });
    const ac = new AbortController();
    const cancelled = gate.call("a", {}, { signal: ac.signal });
    await sleep(20); // a failed once and waits for its retry
    ac.abort();
    expect(await cancelled).toMatchObject({ ok: false, code: "FAILED", meta: { attempts: 1 } });
    runs.n = 0;
    expect((await gate.call("b", {})).meta.attempts).toBe(2);
    expect(runs.n).toBe(2);
  });
});
