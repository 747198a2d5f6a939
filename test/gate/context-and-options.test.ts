/**
 * What a tool's `ctx` exposes (its own call only), how the caller's options are read (once, and
 * never a throw out of gate.call), and two boundary rules: JSON text is sized in bytes only, and a
 * tool error's `retryAfterMs` must be a usable wait.
 */
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createGate, defineTool, transient, type ToolContext } from "../../src/index.js";

const base = { version: "1", description: "d", output: z.object({ n: z.number() }), effect: "read" } as const;

describe("the tool's context", () => {
  it("shows only its own call: no queue links, no scope, nothing of another call in flight", async () => {
    const seen: ToolContext[] = [];
    let release: () => void = () => {};
    const hold = new Promise<void>((r) => (release = r));
    const tool = defineTool({
      ...base,
      name: "t",
      input: z.object({}),
      execute: async (_i, ctx) => {
        seen.push(ctx);
        await hold;
        return { n: 1 };
      },
    });
    const gate = createGate({ tools: [tool] });
    const a = gate.call("t", {}, { principal: { id: "tenant-a-secret-principal" } });
    const b = gate.call("t", {}, { principal: { id: "tenant-b" } });
    await new Promise((r) => setTimeout(r, 5));
    const ctx = seen[1]!;
    expect(Object.keys(ctx)).toEqual(["attempt"]);
    expect(() => JSON.stringify(ctx)).not.toThrow();
    expect(inspect(ctx, { depth: 10, showHidden: true })).not.toContain("tenant-a-secret-principal");
    expect(ctx.principal?.id).toBe("tenant-b");
    release();
    expect((await a).ok && (await b).ok).toBe(true);
  });
});

describe("the caller's options", () => {
  const tool = defineTool({ ...base, name: "t", input: z.object({}), execute: () => ({ n: 1 }) });
  const gate = createGate({ tools: [tool] });

  it("a throwing getter or a revoked Proxy is FAILED invalid options, never a throw", async () => {
    const throwing = {
      get callId(): string {
        throw new Error("boom");
      },
    };
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    for (const opts of [throwing, proxy, { principal: { get id(): string { throw new Error("x"); } } }]) {
      let r: unknown;
      expect(() => (r = gate.call("t", {}, opts as never))).not.toThrow();
      expect(await r).toMatchObject({ ok: false, code: "FAILED", message: "Invalid call options", meta: { attempts: 0 } });
    }
  });

  it("a wrong option is named in the issues (never its value)", async () => {
    const cases: [unknown, { path: string; code: string }][] = [
      [{ idempotencyKey: "" }, { path: "idempotencyKey", code: "too_small" }],
      [{ idempotencyKey: "k".repeat(257) }, { path: "idempotencyKey", code: "too_big" }],
      [{ callId: 5 }, { path: "callId", code: "invalid_type" }],
      [{ principal: { name: "sk-live-abcdefghijklmnop" } }, { path: "principal.id", code: "invalid_type" }],
      [{ signal: "stop" }, { path: "signal", code: "invalid_type" }],
      ["opts", { path: "", code: "invalid_type" }],
    ];
    for (const [opts, want] of cases) {
      const r = await gate.call("t", {}, opts as never);
      expect(r.ok ? null : [r.code, r.message, r.issues?.map((i) => ({ path: i.path, code: i.code }))], JSON.stringify(opts)).toEqual(["FAILED", "Invalid call options", [want]]);
      expect(JSON.stringify(r)).not.toMatch(/kkkk|sk-live/);
    }
  });

  it("each option is read once: what was checked is what the call uses", async () => {
    let reads = 0;
    const opts = {
      get callId(): string {
        reads++;
        return reads === 1 ? "checked-id" : "";
      },
    };
    const r = await gate.call("t", {}, opts);
    expect(r).toMatchObject({ ok: true, meta: { callId: "checked-id" } });
    expect(reads).toBe(1);
  });
});

describe("boundaries", () => {
  it("JSON text within maxBytes is not refused by the value-size estimate (fast path and normal path)", async () => {
    const input = z.object({ xs: z.array(z.number()) });
    const t = defineTool({ ...base, name: "t", input, execute: (i) => ({ n: i.xs.length }) });
    const slow = defineTool({ ...base, name: "slow", input: input.refine(() => true), execute: (i) => ({ n: i.xs.length }) });
    const gate = createGate({ tools: [t, slow], limits: { maxBytes: 1000 } });
    const text = JSON.stringify({ xs: Array<number>(480).fill(0) });
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(1000);
    for (const name of ["t", "slow"]) expect(await gate.call(name, text)).toMatchObject({ ok: true, data: { n: 480 } });
    // the same data as a value is sized as its JSON in UTF-8, alike
    for (const name of ["t", "slow"]) expect(await gate.call(name, JSON.parse(text))).toMatchObject({ ok: true, data: { n: 480 } });
    // and text over the limit is still refused
    expect(await gate.call("t", JSON.stringify({ xs: Array<number>(600).fill(0) }))).toMatchObject({ ok: false, code: "INVALID_INPUT" });
  });

  it("a value's size is its JSON in UTF-8: control characters and non-ASCII count what they serialize to (MCP hands values)", async () => {
    const s = defineTool({ ...base, name: "s", input: z.object({ s: z.string() }), execute: (i) => ({ n: i.s.length }) });
    const slowS = defineTool({ ...base, name: "slow", input: z.object({ s: z.string() }).refine(() => true), execute: (i) => ({ n: i.s.length }) });
    const gate = createGate({ tools: [s, slowS], limits: { maxBytes: 1000 } });
    for (const [text, fits] of [
      ["\u0001".repeat(200), false], // 1,200 bytes as JSON, 200 by length
      ["€".repeat(400), false], // 1,200 bytes of UTF-8
      ["😀".repeat(300), false], // 1,200 bytes, 600 code units
      ["é".repeat(400), true], // 800 bytes
      ["\n".repeat(400), true], // 800 bytes as \n
    ] as const) {
      const bytes = Buffer.byteLength(JSON.stringify({ s: text }));
      expect(bytes <= 1000, `${bytes} bytes`).toBe(fits);
      for (const name of ["s", "slow"]) {
        const r = await gate.call(name, { s: text });
        expect(r.ok ? "OK" : r.code, `${name}: ${bytes} bytes`).toBe(fits ? "OK" : "INVALID_INPUT");
        expect(await gate.call(name, JSON.stringify({ s: text })), `${name} as text`).toMatchObject({ ok: fits });
      }
    }
  });

  it("a transient error's retryAfterMs that is NaN, infinite or negative is ignored (retries still happen)", async () => {
    for (const wait of [Number.NaN, Number.POSITIVE_INFINITY, -5]) {
      let runs = 0;
      const tool = defineTool({
        ...base,
        name: "t",
        input: z.object({}),
        execute: () => {
          runs++;
          throw transient("busy", { retryAfterMs: wait });
        },
      });
      const gate = createGate({ tools: [tool], breaker: false, retry: { baseMs: 1, capMs: 2 } });
      const r = await gate.call("t", {});
      expect(r).toMatchObject({ ok: false, code: "RETRYABLE", meta: { attempts: 3 } });
      expect(r.ok ? "" : Object.keys(r)).not.toContain("retryAfterMs");
      expect(runs).toBe(3);
    }
  });
});
