import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { createGate, defineTool, type InputOf, type OutputOf, type ToolContext, type ToolResult } from "../../src/index.js";
import { makeOrderTools } from "../../examples/orders/tools.js";
import { createFakeOrders } from "../../examples/orders/service.js";

describe("types are inferred from the schemas", () => {
  it("execute sees the validated input (defaults applied) and must return the output's input", () => {
    defineTool({
      name: "t",
      version: "1",
      description: "d",
      input: z.object({ id: z.string(), n: z.number().default(1) }),
      output: z.object({ ok: z.boolean() }),
      effect: "read",
      execute: (input, ctx) => {
        expectTypeOf(input).toEqualTypeOf<{ id: string; n: number }>();
        expectTypeOf(ctx).toEqualTypeOf<ToolContext>();
        expectTypeOf(ctx.signal).toEqualTypeOf<AbortSignal>();
        return { ok: true };
      },
    });
  });

  it("InputOf / OutputOf and the gate's typed results", async () => {
    type GetOrder = ReturnType<typeof makeOrderTools>[0];
    expectTypeOf<InputOf<GetOrder>>().toEqualTypeOf<{ customerId: string; includeHistory: boolean }>();
    expectTypeOf<OutputOf<GetOrder>["orders"][number]["status"]>().toEqualTypeOf<"pending" | "paid" | "cancelled">();
    const gate = createGate({ tools: makeOrderTools(createFakeOrders()) });
    const r = await gate.call("get_order", { customerId: "c_1" });
    if (r.ok) expectTypeOf(r.data.found).toEqualTypeOf<boolean>();
    else expectTypeOf(r.code).toEqualTypeOf<"UNKNOWN_TOOL" | "INVALID_INPUT" | "DENIED" | "CONFLICT" | "REJECTED" | "RETRYABLE" | "INVALID_OUTPUT" | "FAILED">();
    const u = await gate.call("other", {});
    expectTypeOf(u).toEqualTypeOf<ToolResult<unknown>>();
  });

  it("authorize and approve see the call's input typed by its tool: narrowing on tool types input", async () => {
    const gate = createGate({
      tools: makeOrderTools(createFakeOrders()),
      authorize: (c) => {
        expectTypeOf(c.tool).toEqualTypeOf<"get_order" | "create_refund">();
        // @ts-expect-error -- not narrowed: get_order's input has no amountCents
        void c.input.amountCents;
        if (c.tool === "create_refund") return c.input.amountCents <= 500;
        expectTypeOf(c.input).toEqualTypeOf<{ customerId: string; includeHistory: boolean }>();
        return c.input.customerId !== "c_blocked";
      },
    });
    expect(await gate.call("create_refund", { orderId: "o_1", amountCents: 900, reason: "x" }, { idempotencyKey: "k" })).toMatchObject({ ok: false, code: "DENIED" });
    expect(await gate.call("get_order", { customerId: "c_blocked" })).toMatchObject({ ok: false, code: "DENIED" });
    expect((await gate.call("get_order", { customerId: "c_1" })).ok).toBe(true);
  });

  it("call options take undefined for an absent option, as a caller passes a maybe-value (exactOptionalPropertyTypes)", async () => {
    const gate = createGate({ tools: makeOrderTools(createFakeOrders()) });
    const maybe = (v: string): string | undefined => (v === "" ? undefined : v);
    const r = await gate.call("get_order", { customerId: "c_1" }, { callId: maybe(""), idempotencyKey: maybe(""), principal: undefined, signal: undefined });
    expect(r.ok).toBe(true);
    expect(r.meta.callId).toMatch(/^tg_/); // absent: a generated id
  });

  it("a wrong return type does not compile", () => {
    defineTool({
      name: "t",
      version: "1",
      description: "d",
      input: z.object({}),
      output: z.object({ ok: z.boolean() }),
      effect: "read",
      // @ts-expect-error ok must be a boolean
      execute: () => ({ ok: "yes" }),
    });
  });
});
