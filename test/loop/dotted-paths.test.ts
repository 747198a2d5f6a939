import { describe, it, expect } from "vitest";
import fc from "fast-check";
import { z } from "zod";
import { createGate, defineTool, type ToolFailure } from "../../src/index.js";
import { createLoopPolicy } from "../../src/loop/index.js";

/**
 * The unchanged-repair check reads issue paths ("a.b.0", keys joined with ".") against the
 * arguments. A key may hold dots itself (a version, an e-mail used as a record key), so a path has
 * several readings; a real repair must never be refused because the check picked the wrong one.
 */

type Args = Record<string, unknown>;

/** A gate with one read tool on `input`, counting executions. */
function gateFor(input: z.ZodType<Args>) {
  let executed = 0;
  const tool = defineTool({
    name: "put",
    version: "1.0.0",
    description: "Store values",
    input,
    output: z.object({}),
    effect: "read",
    execute: () => {
      executed++;
      return {};
    },
  });
  const gate = createGate({ tools: [tool] });
  const exec = (c: { tool: string; args: unknown; callId: string }) => gate.call(c.tool, c.args, { callId: c.callId });
  return { exec, executed: () => executed };
}

/** Calls `bad` (which must fail on `path`), then `next`: the step of `next`. */
async function failThen(input: z.ZodType<Args>, bad: unknown, path: string, next: unknown) {
  const { exec, executed } = gateFor(input);
  const s = createLoopPolicy().start();
  const first = await s.run({ tool: "put", args: bad, callId: "c1" }, exec);
  expect(first.decision.action === "repair" && first.decision.issues.map((i) => i.path)).toEqual([path]);
  const step = await s.run({ tool: "put", args: next, callId: "c2" }, exec);
  return { step, executed: executed() };
}

const Prices = z.object({ prices: z.record(z.string(), z.number().positive()) });
/** Record keys and array indexes mixed: data.<key>.<index>.<key>. */
const Nested = z.object({ data: z.record(z.string(), z.array(z.record(z.string(), z.number().positive()))) });

function expectAdmitted(r: { step: { decision: { action: string; reason: string } }; executed: number }) {
  expect(r.step.decision).toMatchObject({ action: "continue", reason: "ok" });
  expect(r.executed).toBe(1);
}
function expectRefused(r: { step: { result?: unknown; decision: { action: string; reason: string } }; executed: number }) {
  expect(r.step.decision).toMatchObject({ action: "stop", reason: "no_new_evidence" });
  expect(r.step.result).toBeUndefined();
  expect(r.executed).toBe(0);
}

describe("loop policy: unchanged-repair check on keys with dots", () => {
  it("admits the repair of a dotted record key (prices['v1.2'] from -1 to 5), an e-mail key too", async () => {
    expectAdmitted(await failThen(Prices, { prices: { "v1.2": -1 } }, "prices.v1.2", { prices: { "v1.2": 5 } }));
    expectAdmitted(await failThen(Prices, { prices: { "x@y.com": 0 } }, "prices.x@y.com", { prices: { "x@y.com": 3, z: 1 } }));
    // as JSON text, as models send it
    expectAdmitted(await failThen(Prices, '{"prices":{"v1.2":-1}}', "prices.v1.2", '{"prices":{"v1.2":5}}'));
  });

  it("still refuses the same value resent with another field changed", async () => {
    expectRefused(await failThen(Prices, { prices: { "v1.2": -1 } }, "prices.v1.2", { prices: { "v1.2": -1, v2: 4 } }));
    expectRefused(await failThen(Prices, { prices: { "x@y.com": 0 } }, "prices.x@y.com", '{"prices":{"z":1,"x@y.com":0}}'));
  });

  it("keys with several dots and array indexes mixed in", async () => {
    const bad = { data: { "a.b.c": [{ ok: 1 }, { "x@y.co.uk": -1 }] } };
    const path = "data.a.b.c.1.x@y.co.uk";
    expectAdmitted(await failThen(Nested, bad, path, { data: { "a.b.c": [{ ok: 1 }, { "x@y.co.uk": 2 }] } }));
    expectRefused(await failThen(Nested, bad, path, { data: { "a.b.c": [{ ok: 1 }, { "x@y.co.uk": -1 }], d: [] } }));
    // a record key that is a number, beside an array index: "data.0.1.1" read every way
    const digits = { data: { "0.1": [{ "1": 1 }, { "1": -1 }], "0": [{ "1.1": 1 }] } };
    expectAdmitted(await failThen(Nested, digits, "data.0.1.1.1", { data: { "0.1": [{ "1": 1 }, { "1": 9 }], "0": [{ "1.1": 1 }] } }));
    expectRefused(await failThen(Nested, digits, "data.0.1.1.1", { data: { "0.1": [{ "1": 1 }, { "1": -1 }], "0": [{ "1.1": 1 }], z: [] } }));
  });

  it("when both readings of a path exist, a change under either admits (the gate re-checks); a change under neither is refused", async () => {
    const Either = z.object({ m: z.record(z.string(), z.union([z.number().positive(), z.record(z.string(), z.number())])) });
    const bad = { m: { a: { b: 1 }, "a.b": -1 } };
    expectAdmitted(await failThen(Either, bad, "m.a.b", { m: { a: { b: 1 }, "a.b": 2 } }));
    const other = await failThen(Either, bad, "m.a.b", { m: { a: { b: 2 }, "a.b": -1 } }); // in doubt: executed, and fails again
    expect(other.step.decision).toMatchObject({ action: "stop", reason: "repair_budget_exhausted" });
    expectRefused(await failThen(Either, bad, "m.a.b", { m: { a: { b: 1 }, "a.b": -1, c: 3 } }));
  });

  it("a required field still missing is still refused", async () => {
    const Q = z.object({ q: z.string(), prices: Prices.shape.prices });
    expectRefused(await failThen(Q, { prices: {} }, "q", { prices: { "a.b": 1 } }));
  });

  it("admits the repair of a key whose path the gate cut at its length cap", async () => {
    const key = "k.".repeat(150) + "end"; // path longer than 200 characters: it ends in "…"
    const r = await failThen(Prices, { prices: { [key]: -1 } }, `prices.${key}`.slice(0, 199) + "…", { prices: { [key]: 1 } });
    expectAdmitted(r);
  });

  it("property: a repaired value under random dotted keys and indexes is admitted; the same value with an unrelated change is refused", async () => {
    // Few letters, so keys collide with each other's prefixes and with array indexes.
    const key = fc.array(fc.constantFrom("a", "b", "0", "1"), { minLength: 1, maxLength: 3 }).map((s) => s.join("."));
    const data = fc.dictionary(key, fc.array(fc.dictionary(key, fc.integer({ min: 1, max: 99 }), { minKeys: 1, maxKeys: 3 }), { minLength: 1, maxLength: 3 }), {
      minKeys: 1,
      maxKeys: 3,
    });
    await fc.assert(
      fc.asyncProperty(data, fc.nat(), fc.nat(), fc.nat(), fc.boolean(), async (d, i, j, k, asText) => {
        const plain = JSON.parse(JSON.stringify({ data: d })) as { data: Record<string, Record<string, number>[]> };
        const k1 = Object.keys(plain.data)[i % Object.keys(plain.data).length]!;
        const list = plain.data[k1]!;
        const idx = j % list.length;
        const k2 = Object.keys(list[idx]!)[k % Object.keys(list[idx]!).length]!;
        const withValue = (v: number, extra: Args = {}) => {
          const copy = JSON.parse(JSON.stringify(plain)) as typeof plain;
          copy.data[k1]![idx]![k2] = v;
          Object.assign(copy.data, extra);
          return asText ? JSON.stringify(copy) : copy;
        };
        const path = `data.${k1}.${idx}.${k2}`;
        expectAdmitted(await failThen(Nested, withValue(-1), path, withValue(7)));
        // "z" is in no key: no reading of the path reaches it
        expectRefused(await failThen(Nested, withValue(-1), path, withValue(-1, { z: [] })));
      }),
      { numRuns: 300 },
    );
  });
});

describe("loop policy: the unchanged-repair check is bounded", () => {
  const invalid = (callId: string, path: string): ToolFailure => ({
    ok: false,
    code: "INVALID_INPUT",
    message: "Invalid input",
    issues: [{ path, code: "too_small", message: "Too small" }],
    retryable: false,
    effect: "none",
    meta: { tool: "put", version: "1", callId, attempts: 0, durationMs: 0 },
  });

  it("a path whose readings multiply (keys 'a' and 'a.a' at every level) is admitted: in doubt past the look-up cap", () => {
    // Shared nodes: 26 objects, but Fibonacci(26) readings of "a.a.….a", all unchanged. Checking
    // them all is what the cap prevents; it answers "changed" instead.
    const levels: Args[] = [{ a: -1, "a.a": -1 }, { a: -1 }];
    for (let n = 2; n < 26; n++) levels.unshift({ a: levels[0], "a.a": levels[1] });
    const path = Array.from({ length: 26 }, () => "a").join(".");
    const s = createLoopPolicy().start();
    const first = s.admit({ tool: "put", args: levels[0], callId: "c1" });
    if (!first.ok) throw new Error("admitted");
    expect(s.observe(first.call, invalid("c1", path)).action).toBe("repair");
    expect(s.admit({ tool: "put", args: { ...levels[0], b: 1 }, callId: "c2" }).ok).toBe(true);
  });

  it("a plain path at the length cap (100 segments) is still checked: unchanged is refused", () => {
    let value: unknown = -1;
    for (let n = 0; n < 100; n++) value = { a: value };
    const path = Array.from({ length: 100 }, () => "a").join(".");
    expect(path.length).toBe(199);
    const s = createLoopPolicy().start();
    const first = s.admit({ tool: "put", args: value, callId: "c1" });
    if (!first.ok) throw new Error("admitted");
    s.observe(first.call, invalid("c1", path));
    expect(s.admit({ tool: "put", args: { ...(value as Args), b: 1 }, callId: "c2" })).toMatchObject({ ok: false, decision: { reason: "no_new_evidence" } });
  });
});
