/** The deadline queues (src/policy/deadline.ts): exact firing, and a list that holds the live deadlines only. */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { createGate, defineTool } from "../../src/index.js";
import { _queuedDeadlines, scheduleDeadline } from "../../src/policy/deadline.js";

describe("deadline queue", () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it("fires exactly the deadlines that were not cancelled, when they pass (a random schedule against a model)", () => {
    const MS = 1_001;
    let seed = 7;
    const rand = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const fired = new Set<number>();
    const expected = new Set<number>();
    const handles: { id: number; at: number; handle: { cancel(): void }; live: boolean }[] = [];
    for (let id = 0; id < 3_000; id++) {
      const now = performance.now();
      handles.push({ id, at: now + MS, live: true, handle: scheduleDeadline(MS, { onDeadline: () => void fired.add(id) }) });
      // Cancel some live ones (most soon, a few much later), and let time pass now and then.
      for (const h of handles.slice(-5)) {
        if (h.live && rand() < 0.5) {
          h.handle.cancel();
          h.live = false;
        }
      }
      if (rand() < 0.05) vi.advanceTimersByTime(Math.floor(rand() * 300));
      for (const h of handles) if (h.live && h.at <= performance.now() && !fired.has(h.id)) throw new Error(`deadline ${h.id} late`);
    }
    vi.advanceTimersByTime(MS + 10);
    for (const h of handles) if (h.live) expected.add(h.id);
    // A cancel after the deadline fired changes nothing.
    for (const h of handles) h.handle.cancel();
    expect([...fired].sort((a, b) => a - b)).toEqual([...expected].sort((a, b) => a - b));
    expect(_queuedDeadlines(MS)).toBe(0);
  });

  it("a long call at the front does not keep the finished deadlines behind it", () => {
    const MS = 1_002;
    let longFired = false;
    const long = scheduleDeadline(MS, { onDeadline: () => void (longFired = true) });
    let cancelledFired = 0; // counted, not thrown: the queue catches what a deadline throws
    for (let i = 0; i < 10_000; i++) scheduleDeadline(MS, { onDeadline: () => void cancelledFired++ }).cancel();
    expect(_queuedDeadlines(MS)).toBe(1);
    const later = [1, 2, 3].map(() => scheduleDeadline(MS, { onDeadline: () => undefined }));
    later[1]!.cancel(); // from the middle of the list
    expect(_queuedDeadlines(MS)).toBe(3);
    vi.advanceTimersByTime(MS);
    expect(longFired).toBe(true);
    expect(cancelledFired).toBe(0);
    long.cancel();
    for (const h of later) h.cancel();
    expect(_queuedDeadlines(MS)).toBe(0);
  });

  it("a deadline armed while the passed ones run fires on its own time, once", () => {
    const MS = 1_003;
    const fired: string[] = [];
    scheduleDeadline(MS, {
      onDeadline: () => {
        fired.push(`first@${performance.now()}`);
        scheduleDeadline(MS, { onDeadline: () => void fired.push(`second@${performance.now()}`) });
      },
    });
    const t0 = performance.now();
    vi.advanceTimersByTime(MS);
    expect(fired).toEqual([`first@${t0 + MS}`]);
    vi.advanceTimersByTime(MS - 1);
    expect(fired).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual([`first@${t0 + MS}`, `second@${t0 + 2 * MS}`]);
    vi.advanceTimersByTime(10 * MS);
    expect(fired).toHaveLength(2);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("deadlines through the gate", () => {
  it("a hanging call while 5,000 others finish: the queue stays short and the hanging call still times out", async () => {
    const TIMEOUT = 1_234;
    const base = { version: "1", input: z.object({}), output: z.object({}), effect: "read", timeoutMs: TIMEOUT, retry: false } as const;
    const hang = defineTool({ ...base, name: "hang", description: "never answers", execute: () => new Promise<Record<string, never>>(() => {}) });
    const quick = defineTool({ ...base, name: "quick", description: "answers at once", execute: async () => ({}) });
    const gate = createGate({ tools: [hang, quick] });
    const t0 = Date.now();
    const hanging = gate.call("hang", {});
    for (let i = 0; i < 5_000; i++) expect((await gate.call("quick", {})).ok).toBe(true);
    expect(_queuedDeadlines(TIMEOUT)).toBe(1);
    expect(await hanging).toMatchObject({ ok: false, code: "RETRYABLE", message: expect.stringMatching(/timed out/) });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(TIMEOUT - 5);
  });
});

describe("a deadline whose work holds no handle", () => {
  it("still answers before the process exits: the attempt's timeout, and an async check's bound", () => {
    const script = fileURLToPath(new URL("../fixtures/gate/hanging-tool.ts", import.meta.url));
    const run = (where: string) => spawnSync(process.execPath, ["--import", "tsx", script, where], { encoding: "utf8", timeout: 20_000 });
    const execute = run("execute");
    expect([execute.status, JSON.parse(execute.stdout || "null")]).toEqual([0, { code: "RETRYABLE", message: "The tool timed out; try again later" }]);
    const check = run("check");
    expect([check.status, (JSON.parse(check.stdout || "null") as { code?: string } | null)?.code]).toEqual([0, "FAILED"]);
  });
});

describe("a deadline queue across a switch of the timer functions (fake timers in one test, real in the next)", () => {
  afterEach(() => void vi.useRealTimers());
  const gateWith = (ms: number) => {
    const tool = defineTool({
      name: "t",
      version: "1",
      description: "d",
      input: z.object({ hang: z.boolean() }),
      output: z.object({ ok: z.boolean() }),
      effect: "read",
      timeoutMs: ms,
      retry: { attempts: 1 },
      execute: ({ hang }) => (hang ? new Promise<{ ok: boolean }>(() => {}) : { ok: true }),
    });
    return createGate({ tools: [tool] });
  };
  const within = <T>(p: Promise<T>, ms: number) => Promise.race([p, new Promise<"no answer">((r) => setTimeout(() => r("no answer"), ms))]);

  it("armed under fake timers, then real ones: a later call of the same timeout still times out", async () => {
    vi.useFakeTimers();
    expect((await gateWith(333).call("t", { hang: false })).ok).toBe(true); // arms the 333 ms queue's timer on the fake clock
    vi.useRealTimers(); // that timer never fires now
    const r = await within(gateWith(333).call("t", { hang: true }), 3_000);
    expect(r).toMatchObject({ ok: false, code: "RETRYABLE", message: expect.stringMatching(/timed out/) });
  });

  it("a deadline armed before the timer functions were swapped still fires when its own timer does", async () => {
    const realSet = globalThis.setTimeout;
    const fired: string[] = [];
    scheduleDeadline(555, { onDeadline: () => void fired.push("A") }); // real timers
    // Timer functions that never fire, as fake timers nobody advances; a second deadline re-arms on them.
    const g = globalThis as unknown as { setTimeout: unknown; clearTimeout: unknown };
    const [set, clear] = [g.setTimeout, g.clearTimeout];
    g.setTimeout = () => ({ unref() {}, ref() {} });
    g.clearTimeout = () => undefined;
    try {
      scheduleDeadline(555, { onDeadline: () => void fired.push("B") });
    } finally {
      g.setTimeout = set;
      g.clearTimeout = clear;
    }
    await new Promise((r) => realSet(r, 800));
    expect(fired).toEqual(["A", "B"]); // both passed by the time the first (real) timer fired
  });

  it("armed under real timers, then fake ones: advancing the fake clock times the call out", async () => {
    expect((await gateWith(444).call("t", { hang: false })).ok).toBe(true); // a real timer, 444 ms away
    vi.useFakeTimers();
    const call = gateWith(444).call("t", { hang: true });
    await vi.advanceTimersByTimeAsync(500);
    vi.useRealTimers();
    expect(await within(call, 50)).toMatchObject({ ok: false, code: "RETRYABLE" });
  });
});
