/**
 * A session used with results, clocks and calls it cannot trust: anything that is not an envelope
 * is `not_an_envelope` (never a throw from deep inside), a bad clock is named, evidence is bounded,
 * arguments under secret key names are redacted whole, and a host that keeps calling after the end
 * does not grow the session.
 */
import { describe, expect, it } from "vitest";
import { createLoopPolicy } from "../../src/loop/index.js";

const meta = { tool: "t", version: "1", callId: "g", attempts: 1, durationMs: 1 };
const fail = (code: string, extra: Record<string, unknown> = {}) => ({ ok: false, code, message: "m", retryable: false, effect: "none", meta, ...extra }) as never;

describe("loop session: what it cannot trust", () => {
  it.each([
    ["issues not an array", { issues: "x" }],
    ["an issue that is null", { issues: [null] }],
    ["issues array-like", { issues: { length: 1 } }],
    ["a path that is not a string", { issues: [{ path: 5, code: "c", message: "" }] }],
    ["meta.version not a string", { meta: { ...meta, version: 5 } }],
    ["an effect that is not one", { effect: "maybe" }],
  ])("%s: not_an_envelope, and the next calls of the tool still work", async (_name, extra) => {
    const s = createLoopPolicy().start();
    const step = await s.run({ tool: "t", args: { a: 1 } }, () => fail("INVALID_INPUT", extra));
    expect(step.decision).toMatchObject({ action: "stop", reason: "not_an_envelope" });
    expect(s.outcome?.reason).toBe("not_an_envelope");
    // The next call is answered, not thrown: the run has ended, and it says so.
    let ran = 0;
    const next = await s.run({ tool: "t", args: { a: 2 } }, () => (ran++, fail("INVALID_INPUT")));
    expect(next.decision).toMatchObject({ action: "stop", reason: "stopped" });
    expect(ran).toBe(0);
  });

  it("a clock that is not epoch milliseconds is named (E_LOOP_OPTIONS), not a RangeError", async () => {
    for (const now of [() => Number.NaN, () => "x" as unknown as number, () => {
      throw new Error("clock down");
    }]) {
      const s = createLoopPolicy({ now }).start();
      await expect(s.run({ tool: "t", args: {} }, () => fail("FAILED"))).rejects.toMatchObject({ code: "E_LOOP_OPTIONS", message: expect.stringMatching(/now\(\)/) });
    }
  });

  it("includeArguments: values under secret key names are redacted whole, short or with spaces and commas", async () => {
    const s = createLoopPolicy({ includeArguments: true }).start();
    const args = { user: "ann", password: "correct horse battery staple", nested: { apiKey: "abc12", db_password: "pa,ss;word99" }, pageToken: "cursor-1" };
    await s.run({ tool: "t", args }, () => fail("FAILED"));
    const text = s.evidence[0]!.arguments!;
    for (const secret of ["horse", "battery", "abc12", "pa,ss", "word99"]) expect(text).not.toContain(secret);
    expect(text).toContain('"user":"ann"');
    expect(text).toContain('"pageToken":"cursor-1"'); // a cursor is not a secret
  });

  it("evidence from a foreign envelope is bounded: 20 paths of at most 200 characters, a tool name of at most 200", async () => {
    const s = createLoopPolicy().start();
    const issues = Array.from({ length: 1_000 }, (_, i) => ({ path: "x".repeat(1_000) + i, code: "c", message: "" }));
    await s.run({ tool: "T".repeat(10_000), args: {} }, () => fail("INVALID_OUTPUT", { issues }));
    const e = s.evidence[0]!;
    expect(e.issuePaths).toHaveLength(20);
    expect(Math.max(...e.issuePaths.map((p) => p.length))).toBeLessThanOrEqual(200);
    expect(e.tool.length).toBeLessThanOrEqual(200);
    expect(JSON.stringify(e).length).toBeLessThan(10_000);
  });

  it("after the end, calls are refused `stopped` and not kept; observe without admit counts as a call", async () => {
    const s = createLoopPolicy({ maxCalls: 3 }).start();
    await s.run({ tool: "t", args: {} }, () => fail("FAILED"));
    const steps = s.steps.length;
    for (let i = 0; i < 1_000; i++) expect(s.admit({ tool: "t", args: { i }, callId: `k${i}` }).ok).toBe(false);
    expect(s.observe({ tool: "t", args: {}, callId: "late" }, fail("DENIED"))).toMatchObject({ action: "stop", reason: "stopped" });
    expect(s.steps).toHaveLength(steps);
    expect(s.evidence).toHaveLength(1);
    const fresh = createLoopPolicy({ maxCalls: 2 }).start();
    fresh.observe({ tool: "t", args: { a: 1 }, callId: "o1" }, fail("REJECTED"));
    fresh.observe({ tool: "t", args: { a: 2 }, callId: "o2" }, fail("REJECTED"));
    expect(fresh.admit({ tool: "t", args: { a: 3 } })).toMatchObject({ ok: false, decision: { reason: "call_limit" } });
  });

  it("the same call id twice in flight: the second is admitted under its own id", () => {
    const s = createLoopPolicy().start();
    const a = s.admit({ tool: "t", args: { a: 1 }, callId: "same" });
    const b = s.admit({ tool: "t", args: { a: 2 }, callId: "same" });
    expect(a.ok && b.ok).toBe(true);
    expect(a.ok && a.call.callId).toBe("same");
    expect(b.ok && b.call.callId).not.toBe("same");
  });

  it("redact options of the wrong type are refused (E_LOOP_OPTIONS)", () => {
    for (const redact of [{ patterns: "x" }, { patterns: ["a"] }, { patterns: [null] }, { replacement: 5 }, { replaceDefaults: "yes" }]) {
      expect(() => createLoopPolicy({ includeArguments: true, redact: redact as never })).toThrow(expect.objectContaining({ code: "E_LOOP_OPTIONS" }));
    }
  });
});
