import { describe, expect, it } from "vitest";
import { createGate, type CallRequest } from "../../src/index.js";
import { createFakeOrders, makeOrderTools } from "../../examples/orders/index.js";
import { defineTool } from "../../src/index.js";
import { z } from "zod";

describe("authorize and approve run after validation and before any effect", () => {
  it("authorize sees tool, version, effect, principal and validated input; a denial runs nothing", async () => {
    const service = createFakeOrders();
    const seen: CallRequest[] = [];
    const gate = createGate({
      tools: makeOrderTools(service),
      authorize: (call) => {
        seen.push(call);
        return call.principal?.scopes?.includes("refunds:write") === true || call.effect === "read"
          ? true
          : { allow: false, reason: "missing scope refunds:write" };
      },
    });
    const r = await gate.call("create_refund", { orderId: "o_100", amountCents: 5 }, { principal: { id: "u1", scopes: [] } });
    expect(r.ok ? null : [r.code, r.message, r.retryable, r.effect]).toEqual(["DENIED", "missing scope refunds:write", false, "none"]);
    expect(service.calls.createRefund).toBe(0);
    expect(seen[0]).toMatchObject({ tool: "create_refund", version: "1.0.0", effect: "write", principal: { id: "u1" }, input: { orderId: "o_100", amountCents: 5 } });
    const allowed = await gate.call("create_refund", { orderId: "o_100", amountCents: 5 }, { principal: { id: "u1", scopes: ["refunds:write"] } });
    expect(allowed.ok).toBe(true);
    // invalid input is refused before authorize is asked
    await gate.call("create_refund", { orderId: 1 });
    expect(seen).toHaveLength(2);
  });

  const approvalTool = (approval: boolean | ((i: { amount: number }) => boolean)) => {
    const calls = { n: 0 };
    const tool = defineTool({
      name: "pay",
      version: "1",
      description: "d",
      input: z.object({ amount: z.number() }),
      output: z.object({}),
      effect: "write",
      approval,
      execute: () => {
        calls.n++;
        return {};
      },
    });
    return { tool, calls };
  };

  it("a tool that needs approval is DENIED 'not approved' without an approve hook", async () => {
    const { tool, calls } = approvalTool(true);
    const r = await createGate({ tools: [tool] }).call("pay", { amount: 1 });
    expect(r.ok ? null : [r.code, r.message]).toEqual(["DENIED", "not approved"]);
    expect(calls.n).toBe(0);
  });

  it("the approve hook decides; a predicate decides when approval is needed", async () => {
    const { tool, calls } = approvalTool((i) => i.amount > 100);
    const asked: unknown[] = [];
    const gate = createGate({
      tools: [tool],
      approve: (call) => {
        asked.push(call.input);
        return (call.input as { amount: number }).amount < 1000;
      },
    });
    expect((await gate.call("pay", { amount: 5 })).ok).toBe(true);
    expect((await gate.call("pay", { amount: 500 })).ok).toBe(true);
    const refused = await gate.call("pay", { amount: 5000 });
    expect(refused.ok ? null : refused.message).toBe("not approved");
    expect(asked).toEqual([{ amount: 500 }, { amount: 5000 }]);
    expect(calls.n).toBe(2);
    expect(gate.list()[0]!.approval).toBe("conditional");
  });

  it("an answer whose allow or reason cannot be read is a hook that failed: DENIED, effect none, heard by onHookError", async () => {
    const { tool, calls } = approvalTool(false);
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    const answers: unknown[] = [
      {
        get allow(): boolean {
          throw new Error("policy engine down");
        },
      },
      {
        allow: false,
        get reason(): string {
          throw new Error("no reason");
        },
      },
      revoked.proxy,
    ];
    for (const answer of answers) {
      const heard: string[] = [];
      const gate = createGate({ tools: [tool], authorize: () => answer as boolean, onHookError: (hook) => void heard.push(hook) });
      const r = await gate.call("pay", { amount: 1 });
      expect(r).toMatchObject({ ok: false, code: "DENIED", message: "Authorization could not be decided; the call was refused", retryable: false, effect: "none", meta: { attempts: 0 } });
      expect(heard).toEqual(["authorize"]);
    }
    expect(calls.n).toBe(0);
  });
});
