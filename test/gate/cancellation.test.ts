/**
 * The caller's cancel, wherever the call is waiting: before the tool runs (nothing ran, nothing is
 * claimed or kept), while the gate waits for a decision or a check, between attempts; and what it
 * leaves in the breaker and on the caller's signal.
 */
import { getEventListeners } from "node:events";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { createGate, defineTool, transient, type AttemptEvent, type ToolResult } from "../../src/index.js";
import { memoryLedger } from "../../src/ledger/index.js";

const aborted = (): AbortSignal => {
  const c = new AbortController();
  c.abort(new Error("stop"));
  return c.signal;
};
const summary = (r: ToolResult) => (r.ok ? { ok: true } : { code: r.code, effect: r.effect, retryable: r.retryable, attempts: r.meta.attempts });

function writeTool(runs: { n: number }) {
  return defineTool({
    name: "refund",
    version: "1",
    description: "d",
    input: z.object({ amount: z.number() }),
    output: z.object({ id: z.string() }),
    effect: "write",
    execute: () => ({ id: `r${++runs.n}` }),
  });
}

afterEach(() => void vi.useRealTimers());

describe("a call whose signal aborted before it ran", () => {
  it("runs nothing and reports FAILED, effect none, 0 attempts, and no attempt event", async () => {
    const runs = { n: 0 };
    const events: AttemptEvent[] = [];
    const gate = createGate({ tools: [writeTool(runs)], onAttempt: (e) => void events.push(e) });
    const r = await gate.call("refund", { amount: 5 }, { signal: aborted() });
    expect(summary(r)).toEqual({ code: "FAILED", effect: "none", retryable: false, attempts: 0 });
    expect(runs.n).toBe(0);
    expect(events).toEqual([]);
  });

  it("with a ledger claims nothing: the same key then runs once", async () => {
    const runs = { n: 0 };
    const ledger = memoryLedger();
    const gate = createGate({ tools: [writeTool(runs)], ledger });
    const first = await gate.call("refund", { amount: 5 }, { idempotencyKey: "k1", signal: aborted() });
    expect(summary(first)).toMatchObject({ code: "FAILED", effect: "none", attempts: 0 });
    const again = await gate.call("refund", { amount: 5 }, { idempotencyKey: "k1" });
    expect(again.ok && again.meta.replayed !== true).toBe(true);
    expect(runs.n).toBe(1);
  });

  it("aborted after the ledger claim but before the tool: the claim is released, not kept as unknown", async () => {
    const runs = { n: 0 };
    const ledger = memoryLedger();
    const ctrl = new AbortController();
    // The claim is asynchronous; abort while it is in progress.
    const claim = ledger.claim.bind(ledger);
    ledger.claim = async (c) => {
      const out = await claim(c);
      ctrl.abort();
      return out;
    };
    const gate = createGate({ tools: [writeTool(runs)], ledger });
    const first = await gate.call("refund", { amount: 5 }, { idempotencyKey: "k2", signal: ctrl.signal });
    expect(summary(first)).toEqual({ code: "FAILED", effect: "none", retryable: false, attempts: 0 });
    expect(runs.n).toBe(0);
    const again = await gate.call("refund", { amount: 5 }, { idempotencyKey: "k2" });
    expect(again.ok).toBe(true);
    expect(runs.n).toBe(1);
  });
});

describe("the breaker and a probe that ends without a verdict", () => {
  it("a cancelled half-open probe lets the next call probe (the circuit does not stay open)", async () => {
    vi.useFakeTimers();
    let failing = true;
    let runs = 0;
    const tool = defineTool({
      name: "dep",
      version: "1",
      description: "d",
      input: z.object({}),
      output: z.object({}),
      effect: "read",
      retry: false,
      execute: () => {
        runs++;
        if (failing) throw transient("down");
        return {};
      },
    });
    const gate = createGate({ tools: [tool], breaker: { threshold: 2, halfOpenAfterMs: 1_000 } });
    await gate.call("dep", {});
    await gate.call("dep", {});
    expect(await gate.call("dep", {})).toMatchObject({ code: "RETRYABLE", meta: { attempts: 0 } }); // open
    await vi.advanceTimersByTimeAsync(1_001);
    failing = false;
    const probe = await gate.call("dep", {}, { signal: aborted() });
    expect(summary(probe)).toMatchObject({ code: "FAILED", attempts: 0 });
    expect(runs).toBe(2);
    expect((await gate.call("dep", {})).ok).toBe(true); // the next call probes, and closes the circuit
    expect((await gate.call("dep", {})).ok).toBe(true);
    expect(runs).toBe(4);
  });

  it("a probe the caller cancels while it runs also releases the half-open slot", async () => {
    vi.useFakeTimers();
    let mode: "fail" | "hang" | "ok" = "fail";
    const tool = defineTool({
      name: "dep",
      version: "1",
      description: "d",
      input: z.object({}),
      output: z.object({}),
      effect: "read",
      retry: false,
      execute: () => {
        if (mode === "fail") throw transient("down");
        if (mode === "hang") return new Promise<Record<string, never>>(() => {});
        return {};
      },
    });
    const gate = createGate({ tools: [tool], breaker: { threshold: 1, halfOpenAfterMs: 1_000 } });
    await gate.call("dep", {});
    await vi.advanceTimersByTimeAsync(1_001);
    mode = "hang";
    const ctrl = new AbortController();
    const probe = gate.call("dep", {}, { signal: ctrl.signal });
    await vi.advanceTimersByTimeAsync(10);
    ctrl.abort();
    expect(summary(await probe)).toMatchObject({ code: "FAILED", attempts: 1 });
    mode = "ok";
    expect((await gate.call("dep", {})).ok).toBe(true);
  });
});

describe("waits other than the tool", () => {
  const base = { version: "1", description: "d", input: z.object({}), output: z.object({ ok: z.boolean() }) } as const;

  it("an approval that never answers ends when the caller cancels; the request carries the signal", async () => {
    let seen: AbortSignal | undefined;
    let runs = 0;
    const tool = defineTool({ ...base, name: "pay", effect: "write", approval: true, execute: () => (runs++, { ok: true }) });
    const gate = createGate({
      tools: [tool],
      approve: (req) => {
        seen = req.signal;
        return new Promise<boolean>(() => {});
      },
    });
    const ctrl = new AbortController();
    const pending = gate.call("pay", {}, { signal: ctrl.signal });
    await new Promise((r) => setTimeout(r, 5));
    expect(seen?.aborted).toBe(false);
    ctrl.abort("the user left");
    expect(summary(await pending)).toEqual({ code: "FAILED", effect: "none", retryable: false, attempts: 0 });
    expect([seen?.aborted, seen?.reason]).toEqual([true, "the user left"]); // the prompt can close
    expect(runs).toBe(0);
    expect(getEventListeners(ctrl.signal, "abort")).toHaveLength(0);
  });

  it("an async check that never settles ends at the tool's timeout; a cancel ends it sooner", async () => {
    const tool = defineTool({
      ...base,
      name: "w",
      effect: "write",
      timeoutMs: 50,
      execute: () => ({ ok: true }),
      check: () => new Promise<never>(() => {}),
    });
    const gate = createGate({ tools: [tool] });
    const t0 = Date.now();
    const timedOut = await gate.call("w", {});
    expect(summary(timedOut)).toEqual({ code: "FAILED", effect: "applied", retryable: false, attempts: 1 });
    expect(timedOut.ok ? "" : timedOut.message).toMatch(/could not be checked in time/);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(45);
    const ctrl = new AbortController();
    const pending = gate.call("w", {}, { signal: ctrl.signal });
    setTimeout(() => ctrl.abort(), 5);
    const cancelled = await pending;
    expect(summary(cancelled)).toEqual({ code: "FAILED", effect: "applied", retryable: false, attempts: 1 });
    expect(cancelled.ok ? "" : cancelled.message).toMatch(/cancelled while its result was being checked/);
  });
});

describe("authorization and approval around a cancel", () => {
  const base = { version: "1", description: "d", input: z.object({}), output: z.object({ ok: z.boolean() }) } as const;

  it("cancelled while authorize decides: answered at once, and no approval prompt opens afterwards", async () => {
    const asked: string[] = [];
    const tool = defineTool({ ...base, name: "pay", effect: "write", approval: true, execute: () => ({ ok: true }) });
    const gate = createGate({
      tools: [tool],
      authorize: async () => (asked.push("authorize"), await new Promise((r) => setTimeout(r, 50)), true),
      approve: async () => (asked.push("approve"), true),
    });
    const ctrl = new AbortController();
    const pending = gate.call("pay", {}, { signal: ctrl.signal });
    setTimeout(() => ctrl.abort(), 10);
    expect(summary(await pending)).toEqual({ code: "FAILED", effect: "none", retryable: false, attempts: 0 });
    await new Promise((r) => setTimeout(r, 80));
    expect(asked).toEqual(["authorize"]);
    // an already-aborted signal asks no one
    expect(summary(await gate.call("pay", {}, { signal: aborted() }))).toMatchObject({ code: "FAILED", attempts: 0 });
    expect(asked).toEqual(["authorize"]);
  });

  it("a principal that is a class instance reaches authorize as itself (getters and methods intact)", async () => {
    class User {
      constructor(private readonly uid: string) {}
      get id(): string {
        return this.uid;
      }
      can(action: string): boolean {
        return action === "pay";
      }
    }
    const tool = defineTool({ ...base, name: "pay", effect: "write", execute: () => ({ ok: true }) });
    let seen: unknown;
    const gate = createGate({ tools: [tool], authorize: (req) => ((seen = req.principal), (req.principal as User).can("pay")) });
    const user = new User("u1");
    expect(await gate.call("pay", {}, { principal: user })).toMatchObject({ ok: true });
    expect(seen).toBe(user);
  });
});

describe("one listener per caller signal", () => {
  it("12 calls backing off on one signal add one abort listener (no MaxListeners warning), removed after", async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => void warnings.push(w);
    process.on("warning", onWarning);
    try {
      const tool = defineTool({
        ...{ version: "1", description: "d", input: z.object({}), output: z.object({}) },
        name: "flaky",
        effect: "read",
        execute: (_input, ctx) => {
          if (ctx.attempt === 1) throw transient("once");
          return {};
        },
      });
      // A fixed draw: every call waits the full 20 ms, so all 12 are backing off when the listeners are counted.
      const gate = createGate({ tools: [tool], breaker: false, retry: { baseMs: 20, capMs: 20, budget: false }, random: () => 0.9999 });
      const ctrl = new AbortController();
      const calls = Array.from({ length: 12 }, () => gate.call("flaky", {}, { signal: ctrl.signal }));
      await new Promise((r) => setTimeout(r, 2));
      expect(getEventListeners(ctrl.signal, "abort")).toHaveLength(1); // one, shared: the waits still hear a cancel
      const results = await Promise.all(calls);
      expect(results.map(summary)).toEqual(Array.from({ length: 12 }, () => ({ ok: true })));
      expect(getEventListeners(ctrl.signal, "abort")).toHaveLength(0);
      await new Promise((r) => setImmediate(r));
      expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning")).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });
});
