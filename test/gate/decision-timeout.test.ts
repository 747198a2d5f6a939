/**
 * `authorize` and `approve` are bounded: a policy service that hangs or a person who never
 * answers ends the call as DENIED (fail closed) instead of leaving it open, and the hook hears
 * through `request.signal` that the gate stopped waiting.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { getEventListeners } from "node:events";
import { z } from "zod";
import { createGate, defineTool, HookTimeoutError, isToolgateConfigError, type CallRequest } from "../../src/index.js";

function payTool(approval: boolean) {
  const runs = { n: 0 };
  const tool = defineTool({
    name: "pay",
    version: "1",
    description: "d",
    input: z.object({ amount: z.number() }),
    output: z.object({ ok: z.boolean() }),
    effect: "write",
    approval,
    execute: () => (runs.n++, { ok: true }),
  });
  return { tool, runs };
}

const never = <T>() => new Promise<T>(() => {});
const refusal = (r: Awaited<ReturnType<ReturnType<typeof createGate>["call"]>>) =>
  r.ok ? r : { code: r.code, message: r.message, retryable: r.retryable, effect: r.effect, attempts: r.meta.attempts };

describe("a decision that does not come in time", () => {
  afterEach(() => void vi.useRealTimers());

  it("authorize that never answers: DENIED after authorizeTimeoutMs, nothing runs, onHookError and the signal hear why", async () => {
    const { tool, runs } = payTool(false);
    const heard: [string, unknown][] = [];
    let seen: CallRequest | undefined;
    const gate = createGate({
      tools: [tool],
      authorizeTimeoutMs: 40,
      authorize: (req) => ((seen = req), never<boolean>()),
      onHookError: (hook, e) => void heard.push([hook, e]),
    });
    const t0 = performance.now();
    const r = await gate.call("pay", { amount: 5 });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(35);
    expect(refusal(r)).toEqual({ code: "DENIED", message: "Authorization could not be decided; the call was refused", retryable: false, effect: "none", attempts: 0 });
    expect(runs.n).toBe(0);
    expect(heard).toHaveLength(1);
    const [hook, error] = heard[0]!;
    expect(hook).toBe("authorize");
    expect(error).toBeInstanceOf(HookTimeoutError);
    expect(error).toMatchObject({ hook: "authorize", timeoutMs: 40, name: "HookTimeoutError" });
    // read after the fact, the signal is made aborted, with the same error
    expect([seen?.signal.aborted, seen?.signal.reason]).toEqual([true, error]);
  });

  it("approve that never answers: DENIED 'not approved' after approvalTimeoutMs; a later yes is ignored; the open prompt's signal aborts", async () => {
    const { tool, runs } = payTool(true);
    let answer: (v: boolean) => void = () => {};
    let signal: AbortSignal | undefined;
    const heard: string[] = [];
    const gate = createGate({
      tools: [tool],
      approvalTimeoutMs: 40,
      approve: (req) => {
        signal = req.signal; // read while waiting, as a prompt would
        return new Promise<boolean>((resolve) => (answer = resolve));
      },
      onHookError: (hook, e) => void heard.push(`${hook}: ${(e as Error).message}`),
    });
    const r = await gate.call("pay", { amount: 5 });
    expect(refusal(r)).toEqual({ code: "DENIED", message: "not approved", retryable: false, effect: "none", attempts: 0 });
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toBeInstanceOf(HookTimeoutError);
    expect(heard).toEqual(["approve: approve did not answer within 40 ms; the call was refused"]);
    answer(true); // the person clicks "yes" too late
    await new Promise((r) => setTimeout(r, 10));
    expect(runs.n).toBe(0);
  });

  it("defaults: authorize may take up to 10 s and approve up to 10 minutes (fake timers)", async () => {
    vi.useFakeTimers();
    const { tool } = payTool(true);
    const authorizeGate = createGate({ tools: [tool], authorize: () => never<boolean>(), approve: () => true, onHookError: () => {} });
    let done = false;
    const a = authorizeGate.call("pay", { amount: 1 }).then((r) => ((done = true), r));
    await vi.advanceTimersByTimeAsync(9_999);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(refusal(await a)).toMatchObject({ code: "DENIED", message: "Authorization could not be decided; the call was refused" });

    const approveGate = createGate({ tools: [tool], approve: () => never<boolean>(), onHookError: () => {} });
    done = false;
    const b = approveGate.call("pay", { amount: 1 }).then((r) => ((done = true), r));
    await vi.advanceTimersByTimeAsync(599_999);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(refusal(await b)).toMatchObject({ code: "DENIED", message: "not approved" });
  });

  it("answers in time go ahead, and a hook that read the signal leaves no listener on the caller's", async () => {
    const { tool, runs } = payTool(true);
    const signals: AbortSignal[] = [];
    const gate = createGate({
      tools: [tool],
      authorizeTimeoutMs: 1_000,
      approvalTimeoutMs: 1_000,
      authorize: async (req) => (signals.push(req.signal), await new Promise((r) => setTimeout(r, 5)), true),
      approve: async (req) => (signals.push(req.signal), true),
    });
    const ctrl = new AbortController();
    expect(await gate.call("pay", { amount: 1 }, { signal: ctrl.signal })).toMatchObject({ ok: true });
    expect(runs.n).toBe(1);
    expect(signals).toHaveLength(2);
    expect(signals[0]).toBe(signals[1]); // one request, one signal
    expect(signals[0]!.aborted).toBe(false); // a decision made in time aborts nothing
    expect(getEventListeners(ctrl.signal, "abort")).toHaveLength(0);
  });

  it("the default warning says the hook did not answer, not that it threw", async () => {
    const warn = vi.spyOn(process, "emitWarning").mockImplementation(() => {});
    try {
      const { tool } = payTool(true);
      const gate = createGate({ tools: [tool], approvalTimeoutMs: 5, approve: () => never<boolean>() });
      await gate.call("pay", { amount: 1 });
      const texts = warn.mock.calls.map((c) => String(c[0]));
      expect(texts.some((t) => t === "toolgate: the approve hook did not answer within 5 ms; the call was refused")).toBe(true);
      expect(texts.some((t) => t.includes("threw"))).toBe(false);
    } finally {
      warn.mockRestore();
    }
  });

  it("timeouts must be positive integers (ms)", () => {
    const { tool } = payTool(false);
    for (const bad of [0, -1, 1.5, Number.NaN, "10", 2 ** 31]) {
      for (const key of ["authorizeTimeoutMs", "approvalTimeoutMs"]) {
        let thrown: unknown;
        try {
          createGate({ tools: [tool], [key]: bad } as never);
        } catch (e) {
          thrown = e;
        }
        expect(isToolgateConfigError(thrown), `${key}: ${String(bad)}`).toBe(true);
        expect((thrown as Error).message).toContain(key);
      }
    }
  });
});

describe("the request a decision hook sees", () => {
  afterEach(() => void vi.useRealTimers());

  it("a caller's cancel during a long approval ends the call, clears the approval's timer and reports no timeout", async () => {
    vi.useFakeTimers();
    const { tool, runs } = payTool(true);
    const heard: string[] = [];
    let signal: AbortSignal | undefined;
    const gate = createGate({
      tools: [tool],
      approve: (req) => ((signal = req.signal), never<boolean>()),
      onHookError: (hook) => void heard.push(hook),
    });
    const ctrl = new AbortController();
    const pending = gate.call("pay", { amount: 1 }, { signal: ctrl.signal });
    await vi.advanceTimersByTimeAsync(1_000);
    ctrl.abort(new Error("user left"));
    const r = await pending;
    expect(refusal(r)).toMatchObject({ code: "FAILED", effect: "none" });
    expect(signal?.aborted).toBe(true);
    expect((signal?.reason as Error).message).toBe("user left");
    await vi.advanceTimersByTimeAsync(0);
    expect(vi.getTimerCount()).toBe(0); // no 10-minute timer keeps the process alive
    await vi.advanceTimersByTimeAsync(600_000);
    expect(heard).toEqual([]); // the person did not time out: the caller left
    expect(runs.n).toBe(0);
  });

  it("a caller's cancel while authorize decides: no timeout reported, no timer left, no approval asked", async () => {
    vi.useFakeTimers();
    const { tool } = payTool(true);
    const heard: string[] = [];
    let asked = 0;
    const gate = createGate({ tools: [tool], authorize: () => never<boolean>(), approve: () => (asked++, true), onHookError: (hook) => void heard.push(hook) });
    const ctrl = new AbortController();
    const pending = gate.call("pay", { amount: 1 }, { signal: ctrl.signal });
    await vi.advanceTimersByTimeAsync(100);
    ctrl.abort();
    expect(refusal(await pending)).toMatchObject({ code: "FAILED", effect: "none" });
    await vi.advanceTimersByTimeAsync(0);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(20_000);
    expect([heard, asked]).toEqual([[], 0]);
  });

  it("an approve that reads the signal only after the caller cancelled (after an await of its own) finds it aborted, with the caller's reason", async () => {
    const { tool, runs } = payTool(true);
    let late: AbortSignal | undefined;
    const gate = createGate({
      tools: [tool],
      approve: async (req) => {
        await new Promise((r) => setTimeout(r, 40)); // a lookup before the prompt opens
        late = req.signal;
        return never<boolean>();
      },
    });
    const ctrl = new AbortController();
    const pending = gate.call("pay", { amount: 1 }, { signal: ctrl.signal });
    setTimeout(() => ctrl.abort(new Error("user left")), 5);
    expect(refusal(await pending)).toMatchObject({ code: "FAILED", effect: "none" });
    await new Promise((r) => setTimeout(r, 60));
    expect(late?.aborted).toBe(true);
    expect((late?.reason as Error).message).toBe("user left");
    expect(runs.n).toBe(0);
  });

  it("read after a decision made in time, the signal hears no one and leaves no listener on the caller's", async () => {
    const { tool } = payTool(true);
    let seen: CallRequest | undefined;
    const gate = createGate({ tools: [tool], approve: (req) => ((seen = req), true) });
    const ctrl = new AbortController();
    expect(await gate.call("pay", { amount: 1 }, { signal: ctrl.signal })).toMatchObject({ ok: true });
    const late = seen!.signal; // e.g. a prompt that logs after answering
    expect(late.aborted).toBe(false);
    expect(getEventListeners(ctrl.signal, "abort")).toHaveLength(0);
    ctrl.abort();
    expect(late.aborted).toBe(false); // the wait it belonged to is over
  });

  it("is a plain object: a spread keeps the signal, and the gate's own state is not on it", async () => {
    const { tool } = payTool(false);
    let copy: Record<string, unknown> | undefined;
    let keys: string[] = [];
    let internals: unknown[] = [];
    const gate = createGate({
      tools: [tool],
      authorize: (req) => {
        copy = { ...req };
        keys = Object.keys(req).sort();
        const r = req as unknown as Record<string, unknown>;
        internals = ["cancel", "stop", "done", "callerAborted"].map((k) => r[k]);
        return true;
      },
    });
    expect(await gate.call("pay", { amount: 2 }, { callId: "c-1" })).toMatchObject({ ok: true });
    expect(keys).toEqual(["callId", "effect", "input", "meta", "principal", "signal", "tool", "version"]);
    expect(copy?.signal).toBeInstanceOf(AbortSignal);
    expect(copy).toMatchObject({ tool: "pay", version: "1", effect: "write", callId: "c-1", input: { amount: 2 } });
    expect(internals).toEqual([undefined, undefined, undefined, undefined]);
  });
});
