import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { createGate, defineTool, type ToolResult } from "../../src/index.js";

const base = { version: "1", description: "d", input: z.object({ a: z.string() }), output: z.object({ ok: z.boolean() }) } as const;

describe("the gate never throws", () => {
  it("when execute throws synchronously, rejects, or throws non-errors", async () => {
    const throwers: (() => unknown)[] = [
      () => {
        throw new Error("sync sk-proj-aaaaaaaaaaaaaaaaaaaaaaaa");
      },
      () => Promise.reject(new Error("async")),
      () => {
        throw "a string";
      },
      () => {
        throw null;
      },
      () => {
        throw Object.create(null);
      },
    ];
    for (const execute of throwers) {
      const t = defineTool({ ...base, name: "t", effect: "read", execute: execute as never });
      const r = await createGate({ tools: [t], retry: { attempts: 1 } }).call("t", { a: "x" });
      expect(r.ok ? null : [r.code, r.message]).toEqual(["FAILED", "The tool failed"]);
      expect(JSON.stringify(r)).not.toMatch(/sync|async|a string|sk-proj/);
    }
  });

  it("when hooks, the classifier, authorize or approve throw", async () => {
    const warn = vi.fn();
    const t = defineTool({
      ...base,
      name: "t",
      effect: "read",
      classify: () => {
        throw new Error("classifier broke");
      },
      execute: () => {
        throw new Error("x");
      },
    });
    const gate = createGate({
      tools: [t],
      onCall: () => {
        throw new Error("hook");
      },
      onAttempt: () => Promise.reject(new Error("async hook")),
      onHookError: warn,
    });
    const r = await gate.call("t", { a: "x" });
    expect(r.ok ? null : r.code).toBe("FAILED");
    await new Promise((res) => setTimeout(res, 0));
    expect(warn.mock.calls.map((c) => c[0]).sort()).toEqual(["onAttempt", "onCall"]);

    const denyGate = createGate({
      tools: [defineTool({ ...base, name: "t", effect: "write", approval: true, execute: () => ({ ok: true }) })],
      authorize: () => {
        throw new Error("authz down");
      },
      onHookError: () => {},
    });
    const d = await denyGate.call("t", { a: "x" });
    expect(d.ok ? null : [d.code, d.effect]).toEqual(["DENIED", "none"]);

    // approve itself throws (authorize unset): fail closed, "not approved", the tool never runs.
    let runs = 0;
    const errors: string[] = [];
    const approveGate = createGate({
      tools: [defineTool({ ...base, name: "t", effect: "write", approval: true, execute: () => (runs++, { ok: true }) })],
      approve: () => {
        throw new Error("prompt broke");
      },
      onHookError: (hook) => void errors.push(hook),
    });
    expect(await approveGate.call("t", { a: "x" })).toMatchObject({ ok: false, code: "DENIED", message: "not approved", effect: "none" });
    expect(runs).toBe(0);
    expect(errors).toEqual(["approve"]);
  });


  it("when onHookError itself throws or rejects: the call answers as without it, nothing is left unhandled", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown): void => void unhandled.push(e);
    process.on("unhandledRejection", onUnhandled);
    try {
      const read = (execute: () => unknown) => defineTool({ ...base, name: "t", effect: "read", execute: execute as never });
      const rethrow = (_hook: string, e: unknown): never => {
        throw e;
      };
      const within = <T,>(p: Promise<T>): Promise<T | "pending"> => Promise.race([p, new Promise<"pending">((res) => setTimeout(() => res("pending"), 1_000))]);
      // A sync onCall failure, reported to a handler that throws: the call still settles, with its result.
      const g1 = createGate({ tools: [read(() => ({ ok: true }))], onCall: () => { throw new Error("sink down"); }, onHookError: rethrow });
      expect(await within(g1.call("t", { a: "x" }))).toMatchObject({ ok: true });
      // An async onCall failure, reported to a handler that rejects.
      const g2 = createGate({ tools: [read(() => ({ ok: true }))], onCall: () => Promise.reject(new Error("async sink down")), onHookError: (_h, e) => Promise.reject(e) as never });
      expect(await within(g2.call("t", { a: "x" }))).toMatchObject({ ok: true });
      // A throwing onAttempt on a transient read: retried and classified as without the hooks.
      const transient = () => {
        throw Object.assign(new Error("reset"), { code: "ECONNRESET" });
      };
      const g3 = createGate({ tools: [read(transient)], retry: { baseMs: 1, budget: false }, onAttempt: () => { throw new Error("attempt sink"); }, onHookError: rethrow });
      const r3 = await within(g3.call("t", { a: "x" }));
      expect(r3 === "pending" ? r3 : [r3.ok, !r3.ok && r3.code, r3.meta.attempts]).toEqual([false, "RETRYABLE", 3]);
      // authorize throws and the handler throws too: still DENIED, nothing ran.
      const g4 = createGate({ tools: [read(() => ({ ok: true }))], authorize: () => { throw new Error("authz down"); }, onHookError: rethrow });
      expect(await within(g4.call("t", { a: "x" }))).toMatchObject({ ok: false, code: "DENIED", effect: "none" });
      await new Promise((res) => setTimeout(res, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });
  it("when the validator throws (recursive schema at depth beyond its stack)", async () => {
    type Node = { child?: Node | undefined };
    const Node: z.ZodType<Node> = z.lazy(() => z.object({ child: Node.optional() }));
    const t = defineTool({ ...base, name: "deep", input: Node, effect: "read", execute: () => ({ ok: true }) });
    let deep: Node = {};
    for (let i = 0; i < 5000; i++) deep = { child: deep };
    const gate = createGate({ tools: [t], limits: { maxDepth: 1000 } });
    const r = await gate.call("deep", deep);
    expect(r.ok ? null : r.code).toBe("INVALID_INPUT");
  });

  it("when the arguments are hostile objects", async () => {
    const t = defineTool({ ...base, name: "t", effect: "read", execute: () => ({ ok: true }) });
    const gate = createGate({ tools: [t] });
    const getter = Object.defineProperty({}, "a", {
      enumerable: true,
      get() {
        throw new Error("getter");
      },
    });
    const proxy = new Proxy({}, { ownKeys: () => { throw new Error("trap"); } });
    const results: ToolResult[] = [];
    for (const v of [getter, proxy, { a: 1n }, { a: Symbol("s") }, { a: () => 1 }, new Date(), new Map()]) {
      results.push(await gate.call("t", v));
    }
    expect(results.map((r) => (r.ok ? "OK" : r.code))).toEqual(Array(7).fill("INVALID_INPUT"));
  });

  it("when call options are wrong", async () => {
    const t = defineTool({ ...base, name: "t", effect: "read", execute: () => ({ ok: true }) });
    const gate = createGate({ tools: [t] });
    const r = await gate.call("t", { a: "x" }, { callId: 5 as never });
    expect(r.ok ? null : [r.code, r.message]).toEqual(["FAILED", "Invalid call options"]);
    const n = await gate.call(undefined as never, {});
    expect(n.ok ? null : n.code).toBe("UNKNOWN_TOOL");
  });
});
