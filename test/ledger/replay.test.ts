/** A replay is the first answer's JSON, whatever the tool returned: `toJSON`, boxed values, `undefined`, non-finite numbers. */
import { describe, it, expect } from "vitest";
import fc from "fast-check";
import { z } from "zod";
import { createGate, defineTool, reject, type ToolResult } from "../../src/index.js";
import { memoryLedger } from "../../src/ledger/index.js";

const body = (r: ToolResult) => {
  const { meta: _m, ...rest } = r;
  return JSON.stringify(rest);
};

const withToJSON = fc.oneof(
  fc.date({ noInvalidDate: true }),
  fc.string().map((s) => ({ toJSON: () => s })),
  fc.integer().map((n) => ({ toJSON: (key: string) => ({ key, n }) })), // toJSON gets its key, as in JSON.stringify
);

const value = fc.letrec((tie) => ({
  leaf: fc.oneof(
    fc.anything({ maxDepth: 2, withBoxedValues: true, withNullPrototype: true, withSparseArray: true, withDate: true, withBigInt: false }),
    withToJSON,
    fc.constantFrom(undefined, Number.NaN, Infinity, -0, () => 1),
  ),
  node: fc.oneof({ depthSize: "small" }, tie("leaf"), fc.array(tie("node"), { maxLength: 4 }), fc.dictionary(fc.string(), tie("node"), { maxKeys: 4 })),
})).node;

describe("replay", () => {
  it("stores the output as JSON.stringify writes it, so the replay equals the first answer", async () => {
    let out: unknown;
    const tool = defineTool({
      name: "echo", version: "1", description: "d", effect: "write",
      input: z.object({ n: z.number() }), output: z.unknown(),
      execute: () => out,
    });
    const gate = createGate({ tools: [tool], ledger: memoryLedger(), redact: { patterns: [], replaceDefaults: true } });
    let n = 0;
    await fc.assert(
      fc.asyncProperty(value, async (v) => {
        out = { v };
        const key = `k${++n}`;
        const first = await gate.call("echo", { n }, { idempotencyKey: key });
        const again = await gate.call("echo", { n }, { idempotencyKey: key });
        expect(again.meta.replayed).toBe(true);
        expect(body(again)).toBe(body(first));
      }),
      { numRuns: 300 },
    );
  });
});

describe("replay of a stored failure", () => {
  const failing = (verdict: () => unknown) =>
    defineTool({
      name: "pay", version: "1", description: "d", effect: "write",
      input: z.object({ n: z.number() }), output: z.object({ id: z.string(), total: z.number() }),
      execute: async (_i, ctx) => {
        await ctx.recordEffect({ kind: "charge", ref: "ch_1" });
        return verdict() as { id: string; total: number }; // some verdicts break the contract on purpose
      },
    });

  it("hands back each kind of stored failure exactly as the first call answered it", async () => {
    const verdicts: (() => unknown)[] = [
      () => ({ id: 42, total: "x" }), // INVALID_OUTPUT with issues, effect applied
      () => {
        throw reject("card declined", { effect: "none" });
      },
      () => {
        throw new Error("boom"); // FAILED unknown, with the recorded effect: applied
      },
    ];
    for (const [i, v] of verdicts.entries()) {
      const gate = createGate({ tools: [failing(v)], ledger: memoryLedger() });
      const first = await gate.call("pay", { n: i }, { idempotencyKey: `k${i}` });
      const again = await gate.call("pay", { n: i }, { idempotencyKey: `k${i}` });
      expect(first.ok).toBe(false);
      expect(again.meta.replayed).toBe(true);
      expect(body(again)).toBe(body(first));
    }
  });

  it("stores a failure's code and effect as they are, whatever a custom pattern matches (its text is still redacted)", async () => {
    for (const pattern of [/\b[A-Z][A-Z0-9_]{11,}\b/g, /\bapplied\b/g, /\bcode\b/g]) {
      const gate = createGate({ tools: [failing(() => ({ id: 42, total: "x" }))], ledger: memoryLedger(), redact: { patterns: [pattern] } });
      const first = await gate.call("pay", { n: 1 }, { idempotencyKey: "k" });
      const again = await gate.call("pay", { n: 1 }, { idempotencyKey: "k" });
      expect(first).toMatchObject({ ok: false, code: "INVALID_OUTPUT", effect: "applied" });
      expect(again.meta.replayed).toBe(true);
      expect(body(again), String(pattern)).toBe(body(first));
    }
    const gate = createGate({ tools: [failing(() => { throw reject("card 4242-4242 declined"); })], ledger: memoryLedger(), redact: { patterns: [/\d{4}-\d{4}/g] } });
    const first = await gate.call("pay", { n: 2 }, { idempotencyKey: "k2" });
    expect(first).toMatchObject({ ok: false, code: "REJECTED", message: "card [REDACTED] declined" });
    expect(body(await gate.call("pay", { n: 2 }, { idempotencyKey: "k2" }))).toBe(body(first));
  });

  it("answers a stored failure it cannot read (another program's row, an edited one) as unreadable: never handed on, never a rejection", async () => {
    const stored = [
      { ok: false, code: "INVALID_OUTPUT", message: "m", retryable: false, effect: "applied", issues: [{ path: 0, code: "x", message: "y" }] },
      { ok: false, code: "INVALID_OUTPUT", message: "m", retryable: false, effect: "applied", issues: "customerId" },
      { ok: false, code: "NOT_A_CODE", message: "m", retryable: false, effect: "none" },
      { ok: false, code: "FAILED", message: "m", effect: "none" },
      { ok: false, code: "FAILED", message: "m", retryable: false, effect: "maybe" },
      { ok: false, code: "FAILED", message: "m", retryable: false, effect: "applied", effects: [{ kind: "charge" }] },
      { ok: false, code: "RETRYABLE", message: "m", retryable: true, effect: "none", retryAfterMs: "soon" },
    ];
    for (const onCall of [undefined, () => {}]) {
      for (const row of stored) {
        const ledger = memoryLedger();
        const entry = { id: "e1", callId: "c0", tool: "pay", version: "1", principal: null, key: "k", keyHash: "h", fingerprint: "f", state: "settled", code: row.code, effect: row.effect, effects: [], result: JSON.stringify(row), attempts: 1 };
        const foreign = { ...ledger, claim: () => Promise.resolve({ status: "completed", entry }) } as unknown as typeof ledger;
        const gate = createGate({ tools: [failing(() => ({ id: "p1", total: 1 }))], ledger: foreign, ...(onCall ? { onCall } : {}) });
        const r = await gate.call("pay", { n: 1 }, { idempotencyKey: "k" });
        expect(r, JSON.stringify(row)).toMatchObject({ ok: false, code: "FAILED", effect: "unknown", message: "The stored result of this idempotency key could not be read" });
        expect(r.ok ? undefined : r.issues).toBeUndefined();
      }
    }
  });

  it("keeps only the envelope's own fields of a stored failure", async () => {
    const ledger = memoryLedger();
    const row = { ok: false, code: "REJECTED", message: "declined", retryable: false, effect: "none", stack: "Error: at secret.ts:1", issues: [{ path: "a", code: "c", message: "m", input: "4242 4242" }] };
    const entry = { id: "e1", callId: "c0", tool: "pay", version: "1", principal: null, key: "k", keyHash: "h", fingerprint: "f", state: "settled", code: "REJECTED", effect: "none", effects: [], result: JSON.stringify(row), attempts: 1 };
    const foreign = { ...ledger, claim: () => Promise.resolve({ status: "completed", entry }) } as unknown as typeof ledger;
    const gate = createGate({ tools: [failing(() => ({ id: "p1", total: 1 }))], ledger: foreign });
    const r = await gate.call("pay", { n: 1 }, { idempotencyKey: "k" });
    const { meta: _m, ...rest } = r;
    expect(rest).toEqual({ ok: false, code: "REJECTED", message: "declined", retryable: false, effect: "none", issues: [{ path: "a", code: "c", message: "m" }] });
  });
});
