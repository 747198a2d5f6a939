/** onAttemptAbort (src/attempt.ts): how the proxy's tools hear an abort without an AbortController. */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createGate, defineTool, type ToolContext } from "../../src/index.js";
import { AttemptTimeoutError, onAttemptAbort, type AbortSource } from "../../src/attempt.js";

function hookedTool(onCtx: (ctx: ToolContext) => void, timeoutMs = 50) {
  return defineTool({
    name: "hooked",
    version: "1",
    description: "Waits until aborted",
    input: z.object({}),
    output: z.object({}),
    effect: "read",
    timeoutMs,
    retry: false,
    execute: (_input, ctx) => {
      onCtx(ctx);
      return new Promise<Record<string, never>>(() => {});
    },
  });
}

describe("onAttemptAbort", () => {
  it("calls the hook once with the timeout error, and the call ends on time", async () => {
    const reasons: unknown[] = [];
    const gate = createGate({ tools: [hookedTool((ctx) => (onAttemptAbort(ctx) as AbortSource)((r) => reasons.push(r)))] });
    const r = await gate.call("hooked", {});
    expect(r).toMatchObject({ ok: false, code: "RETRYABLE" });
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toBeInstanceOf(AttemptTimeoutError);
  });

  it("calls the hook with the caller's reason when the caller aborts", async () => {
    const reasons: unknown[] = [];
    const gate = createGate({ tools: [hookedTool((ctx) => (onAttemptAbort(ctx) as AbortSource)((r) => reasons.push(r)), 10_000)] });
    const stop = new AbortController();
    const call = gate.call("hooked", {}, { signal: stop.signal });
    await new Promise((r) => setTimeout(r, 5));
    stop.abort("stopped");
    expect(await call).toMatchObject({ ok: false });
    expect(reasons).toEqual(["stopped"]);
  });

  it("a hook that throws changes nothing; a hook set after the abort runs at once", async () => {
    let saved: ToolContext | undefined;
    const gate = createGate({
      tools: [
        hookedTool((ctx) => {
          saved = ctx;
          (onAttemptAbort(ctx) as AbortSource)(() => {
            throw new Error("hook bug");
          });
        }),
      ],
    });
    expect(await gate.call("hooked", {})).toMatchObject({ ok: false, code: "RETRYABLE" });
    const late: unknown[] = [];
    (onAttemptAbort(saved!) as AbortSource)((r) => late.push(r));
    expect(late).toHaveLength(1);
    expect(saved!.signal.aborted).toBe(true); // read after the abort: an aborted signal, as before
  });

  it("a context that is not the gate's gets its signal", () => {
    const signal = new AbortController().signal;
    const ctx = { signal, callId: "x", attempt: 1, meta: {}, idempotencyKey: undefined, principal: undefined, recordEffect: async () => {} } as unknown as ToolContext;
    expect(onAttemptAbort(ctx)).toBe(signal);
  });
});
