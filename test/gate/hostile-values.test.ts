/**
 * Values and hooks the gate cannot trust — a thrown Proxy whose traps throw, a check that returns
 * one, a `random` hook that throws or strays, budget options of the wrong type, a forged signal —
 * still end in the documented envelope, with the attempts counted and the policy applied.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createGate, defineTool, transient, type AttemptEvent } from "../../src/index.js";

const hostile = () =>
  new Proxy(
    {},
    {
      get() {
        throw new Error("trap");
      },
    },
  );

function tool(name: string, effect: "read" | "write", execute: (i: unknown, ctx: { attempt: number }) => unknown, extra: Record<string, unknown> = {}) {
  return defineTool({ name, version: "1", description: name, input: z.object({}), output: z.object({ ok: z.boolean() }), effect, execute: execute as never, ...extra });
}

describe("hostile values", () => {
  it("a thrown Proxy whose traps throw is a permanent failure: counted attempts, heard by the breaker", async () => {
    const events: string[] = [];
    const breaker: string[] = [];
    let runs = 0;
    const gate = createGate({
      tools: [
        tool("second", "read", (_i, ctx) => {
          runs++;
          if (ctx.attempt === 1) throw transient("busy");
          throw hostile();
        }, { retry: { attempts: 3, baseMs: 1, capMs: 2 } }),
        tool("always", "read", () => {
          throw hostile();
        }, { retry: false }),
      ],
      breaker: { threshold: 3, halfOpenAfterMs: 60_000 },
      onAttempt: (e: AttemptEvent) => void events.push(`${e.tool} ${e.attempt}:${e.outcome}`),
      onBreakerChange: (e) => void breaker.push(`${e.tool}:${e.state}`),
    });
    expect(await gate.call("second", {})).toMatchObject({ ok: false, code: "FAILED", effect: "none", meta: { attempts: 2 } });
    expect(runs).toBe(2);
    expect(events).toEqual(["second 1:transient", "second 2:permanent"]);
    for (let i = 0; i < 3; i++) await gate.call("always", {});
    expect(breaker).toEqual(["always:open"]);
    expect(await gate.call("always", {})).toMatchObject({ code: "RETRYABLE", meta: { attempts: 0 } });
  });

  it("a sync check that returns a Proxy is the check's failure: applied for a write, attempts 1", async () => {
    const gate = createGate({ tools: [tool("w", "write", () => ({ ok: true }), { check: () => hostile() }), tool("r", "read", () => ({ ok: true }), { check: () => hostile() })] });
    expect(await gate.call("w", {})).toMatchObject({ ok: false, code: "FAILED", effect: "applied", message: "The tool's business check failed", meta: { attempts: 1 } });
    expect(await gate.call("r", {})).toMatchObject({ ok: false, code: "FAILED", effect: "none", meta: { attempts: 1 } });
  });

  it("a random hook that throws, is NaN or strays outside [0, 1) neither breaks the retry nor stretches a wait past capMs", async () => {
    let draws = 0;
    for (const random of [
      () => {
        throw new Error("no entropy");
      },
      () => Number.NaN,
      () => -5,
      () => 1e6,
      () => (draws++ % 2 === 0 ? 1e9 : 0.5),
    ]) {
      const waits: number[] = [];
      const gate = createGate({
        tools: [tool("flaky", "read", () => Promise.reject(transient("busy")), { retry: { attempts: 3, baseMs: 5, capMs: 20 } })],
        random,
        onAttempt: (e) => void (e.backoffMs !== undefined && waits.push(e.backoffMs)),
      });
      const r = await gate.call("flaky", {});
      expect(r).toMatchObject({ ok: false, code: "RETRYABLE", meta: { attempts: 3 } });
      expect(waits).toHaveLength(2); // the wait before each retry, as the policy chose it
      for (const w of waits) expect(w).toBeGreaterThanOrEqual(0);
      for (const w of waits) expect(w).toBeLessThanOrEqual(20);
    }
  });

  it("retry budget options of the wrong type are refused; a reserve below 1 still lets calls earn retries", async () => {
    for (const ratio of ["0.5", true, [0.5]]) {
      expect(() => createGate({ tools: [tool("t", "read", () => ({ ok: true }))], retry: { budget: { ratio: ratio as never } } })).toThrow(expect.objectContaining({ code: "E_GATE_RETRY" }));
    }
    expect(() => createGate({ tools: [tool("t", "read", () => ({ ok: true }))], retry: { budget: { reserve: "1" as never } } })).toThrow(expect.objectContaining({ code: "E_GATE_RETRY" }));
    let runs = 0;
    const dead = tool("dead", "read", () => (runs++, Promise.reject(transient("down"))), { retry: { attempts: 5, baseMs: 0, capMs: 0 } });
    const gate = createGate({ tools: [dead], retry: { budget: { ratio: 0.1, reserve: 0 } }, breaker: false });
    for (let i = 0; i < 200; i++) await gate.call("dead", {});
    expect(runs).toBeGreaterThanOrEqual(215); // about 10% of 200 calls earned a retry
    expect(runs).toBeLessThanOrEqual(225);
  });

  it("a forged AbortSignal (instanceof passes, reading it throws) is an invalid call option naming signal", async () => {
    let runs = 0;
    const gate = createGate({ tools: [tool("t", "read", () => (runs++, { ok: true }))] });
    const forged = Object.create(AbortSignal.prototype) as AbortSignal;
    const r = await gate.call("t", {}, { signal: forged });
    expect(r).toMatchObject({ ok: false, code: "FAILED", message: "Invalid call options", issues: [{ path: "signal", code: "invalid_type" }] });
    expect(runs).toBe(0);
  });

  it("a retryAfterMs of years is passed on as the longest wait a timer takes", async () => {
    const gate = createGate({ tools: [tool("slow", "read", () => Promise.reject(transient("later", { retryAfterMs: 1e12 })), { retry: false })] });
    const r = await gate.call("slow", {});
    expect(r).toMatchObject({ ok: false, code: "RETRYABLE", retryAfterMs: 2 ** 31 - 1 });
  });

  it("a ToolError-branded value this copy cannot read as one (another copy's kind, a wrong effect or message) is classified on what it can trust", async () => {
    const BRAND = Symbol.for("toolgate.ToolError");
    // Another copy of the package (or plain JavaScript) may brand a kind this gate does not know: permanent, each execution heard.
    let runs = 0;
    const events: string[] = [];
    const read = tool("t", "read", () => {
      runs++;
      if (runs === 1) throw transient("busy");
      throw Object.assign(new Error("conflict"), { [BRAND]: true, kind: "conflict" });
    });
    const gate = createGate({ tools: [read], retry: { baseMs: 1, capMs: 1 }, onAttempt: (e) => void events.push(`#${e.attempt} ${e.outcome}`) });
    expect(await gate.call("t", {})).toMatchObject({ ok: false, code: "FAILED", retryable: false, effect: "none", meta: { attempts: 2 } });
    expect(runs).toBe(2);
    expect(events).toEqual(["#1 transient", "#2 permanent"]);

    const write = (thrown: () => unknown) => createGate({ tools: [tool("w", "write", () => { throw thrown(); })] }).call("w", {});
    // An effect that is none of the three: a write that rejected may have applied it, so unknown.
    expect(await write(() => ({ [BRAND]: true, kind: "rejected", message: "no", effect: "bogus" }))).toMatchObject({ code: "REJECTED", message: "no", effect: "unknown" });
    // A message that is not a string is never shown: the situation's own message instead.
    expect(await write(() => ({ [BRAND]: true, kind: "rejected", message: { length: 3 }, effect: "none" }))).toMatchObject({ code: "REJECTED", message: "The request was rejected", effect: "none" });
  });

  it("each field of a ToolError or a classification is read once: a getter cannot pass the check with one value and deliver another", async () => {
    const BRAND = Symbol.for("toolgate.ToolError");
    const flip = (first: unknown, then: unknown): PropertyDescriptor => {
      let n = 0;
      return { get: () => (n++ === 0 ? first : then), enumerable: true };
    };
    const branded = (props: Record<string, PropertyDescriptor>) => Object.defineProperties(Object.assign(new Error("x"), { [BRAND]: true }), props);
    const once = (effect: "read" | "write", thrown: () => unknown) => createGate({ tools: [tool("t", effect, () => { throw thrown(); }, { retry: false })] }).call("t", {});
    expect(await once("write", () => branded({ kind: { value: "rejected" }, effect: flip("none", "bogus") }))).toMatchObject({ code: "REJECTED", effect: "none" });
    const wait = await once("read", () => branded({ kind: { value: "transient" }, retryAfterMs: flip(5, "soon") }));
    expect(wait).toMatchObject({ code: "RETRYABLE", retryAfterMs: 5 });
    // A tool's classify answering { kind } through a getter: one verdict per attempt, each attempt heard.
    const events: string[] = [];
    const classified = tool("c", "read", () => { throw new Error("x"); }, {
      classify: () => {
        let n = 0;
        return { get kind() { return n++ % 2 === 0 ? "transient" : "bogus"; } };
      },
    });
    const gate = createGate({ tools: [classified], retry: { attempts: 2, baseMs: 1, capMs: 1 }, onAttempt: (e) => void events.push(`${e.attempt}:${e.outcome}`) });
    expect(await gate.call("c", {})).toMatchObject({ code: "RETRYABLE", meta: { attempts: 2 } });
    expect(events).toEqual(["1:transient", "2:transient"]);
  });
});
