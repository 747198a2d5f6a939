import { describe, it, expect } from "vitest";
import { z } from "zod";
import { createGate, defineTool, type ToolResult } from "../../src/index.js";
import { createLoopPolicy, runAgentLoop, type AgentModel, type LoopDecision, type ProposedCall } from "../../src/loop/index.js";
import { createFakeOrders, makeOrderTools } from "../../examples/orders/index.js";

function setup(gateExtra: Partial<Parameters<typeof createGate>[0]> = {}) {
  const service = createFakeOrders();
  const gate = createGate({ tools: makeOrderTools(service), retry: { baseMs: 0, capMs: 0 }, ...gateExtra });
  const exec = (c: { tool: string; args: unknown; callId: string }) => gate.call(c.tool, c.args, { callId: c.callId });
  return { service, gate, exec };
}

/** A scripted model: one list of calls per turn, then it answers. */
function script(...turns: ProposedCall[][]): AgentModel {
  return { next: ({ turn }) => turns[turn - 1] ?? [] };
}

describe("loop policy: repair", () => {
  it("feeds INVALID_INPUT back as a repair naming the field, then continues on the corrected call", async () => {
    const { service, exec } = setup();
    const s = createLoopPolicy().start();
    const bad = await s.run({ tool: "get_order", args: '{"customerId":42}', callId: "t1" }, exec);
    expect(bad.result?.ok).toBe(false);
    expect(bad.decision).toMatchObject({ action: "repair", reason: "invalid_input", code: "INVALID_INPUT", tool: "get_order", callId: "t1", repairsLeft: 0 });
    expect(bad.decision.action === "repair" && bad.decision.issues.map((i) => i.path)).toEqual(["customerId"]);
    expect(service.calls.findOrders).toBe(0);
    const good = await s.run({ tool: "get_order", args: { customerId: "c_1" }, callId: "t2" }, exec);
    expect(good.decision).toMatchObject({ action: "continue", reason: "ok", callId: "t2" });
    expect(service.calls.findOrders).toBe(1);
    expect(s.outcome).toBeUndefined();
  });

  it("stops when the repair budget (default 1) is spent", async () => {
    const { exec } = setup();
    const s = createLoopPolicy().start();
    expect((await s.run({ tool: "get_order", args: { customerId: 42 } }, exec)).decision.action).toBe("repair");
    const second = await s.run({ tool: "get_order", args: { customerId: "" } }, exec);
    expect(second.decision).toMatchObject({ action: "stop", reason: "repair_budget_exhausted", code: "INVALID_INPUT" });
    expect(s.outcome).toBe(second.decision);
    expect(s.evidence).toHaveLength(1);
    expect(s.evidence[0]).toMatchObject({ tool: "get_order", code: "INVALID_INPUT", issuePaths: ["customerId"], reason: "repair_budget_exhausted" });
  });

  it("honours a larger budget, and a success resets the budget for the next call", async () => {
    const { exec } = setup();
    const s = createLoopPolicy({ repairBudget: 2 }).start();
    const d1 = (await s.run({ tool: "get_order", args: { customerId: 42 } }, exec)).decision;
    const d2 = (await s.run({ tool: "get_order", args: { customerId: "" } }, exec)).decision;
    expect([d1.action, d2.action]).toEqual(["repair", "repair"]);
    expect(d1.action === "repair" && d1.repairsLeft).toBe(1);
    expect(d2.action === "repair" && d2.repairsLeft).toBe(0);
    expect((await s.run({ tool: "get_order", args: { customerId: "c_2" } }, exec)).decision.reason).toBe("ok");
    expect((await s.run({ tool: "get_order", args: { customerId: 7 } }, exec)).decision).toMatchObject({ action: "repair", repairsLeft: 1 });
  });

  it("with budget 0 stops at the first invalid input", async () => {
    const { exec } = setup();
    const s = createLoopPolicy({ repairBudget: 0 }).start();
    expect((await s.run({ tool: "get_order", args: { customerId: 42 } }, exec)).decision.reason).toBe("repair_budget_exhausted");
  });

  it("refuses a repair that leaves every reported field unchanged", async () => {
    const { service, exec } = setup();
    const s = createLoopPolicy().start();
    await s.run({ tool: "get_order", args: { customerId: 42 } }, exec);
    const step = await s.run({ tool: "get_order", args: { customerId: 42, includeHistory: true } }, exec);
    expect(step.result).toBeUndefined();
    expect(step.decision).toMatchObject({ action: "stop", reason: "no_new_evidence", code: "INVALID_INPUT" });
    expect(service.calls.findOrders).toBe(0);
  });

  it("a repair that changes a value's type is a change: 42 → \"42\" and \"true\" → true reach the gate", async () => {
    const { service, exec } = setup();
    const s = createLoopPolicy({ repairBudget: 2 }).start();
    expect((await s.run({ tool: "get_order", args: { customerId: 42 } }, exec)).decision.action).toBe("repair");
    expect((await s.run({ tool: "get_order", args: { customerId: "42" } }, exec)).decision).toMatchObject({ action: "continue", reason: "ok" });
    expect((await s.run({ tool: "get_order", args: '{"customerId":"c_1","includeHistory":"true"}' }, exec)).decision.action).toBe("repair");
    expect((await s.run({ tool: "get_order", args: '{"customerId":"c_1","includeHistory":true}' }, exec)).decision).toMatchObject({ action: "continue", reason: "ok" });
    expect(service.calls.findOrders).toBe(2);
  });

  it("a string field left as it was is unchanged (its text is not read as JSON); the record names the tool's version", async () => {
    const { service, exec } = setup();
    const s = createLoopPolicy().start();
    await s.run({ tool: "get_order", args: { customerId: "" } }, exec);
    const step = await s.run({ tool: "get_order", args: { customerId: "", includeHistory: true } }, exec);
    expect(step.decision).toMatchObject({ action: "stop", reason: "no_new_evidence", code: "INVALID_INPUT" });
    expect(step.decision.action === "stop" && step.decision.evidence).toMatchObject({ tool: "get_order", version: "1.0.0", issuePaths: ["customerId"], attempts: 0 });
    expect(service.calls.findOrders).toBe(0);
  });

  it("JSON text with a key twice is not the call without it: the repair reaches the gate", async () => {
    const { exec } = setup();
    const s = createLoopPolicy({ repairBudget: 2 }).start();
    const dup = await s.run({ tool: "get_order", args: '{"customerId":"c_1","customerId":42}' }, exec);
    expect(dup.decision.action === "repair" && dup.decision.issues.map((i) => i.code)).toEqual(["duplicate_key"]);
    const fixed = await s.run({ tool: "get_order", args: '{"customerId":42}' }, exec);
    expect(fixed.result).toMatchObject({ ok: false, code: "INVALID_INPUT", issues: [{ path: "customerId", code: "invalid_type" }] });
    expect(fixed.decision).toMatchObject({ action: "repair", reason: "invalid_input" });
  });

  it("after a key twice, the repair that drops that key altogether is admitted (there was no value to compare)", async () => {
    const { service, exec } = setup();
    const s = createLoopPolicy().start();
    const dup = await s.run({ tool: "get_order", args: '{"customerId":"c_1","includeHistory":true,"includeHistory":false}' }, exec);
    expect(dup.decision.action === "repair" && dup.decision.issues.map((i) => [i.path, i.code])).toEqual([["includeHistory", "duplicate_key"]]);
    const fixed = await s.run({ tool: "get_order", args: '{"customerId":"c_1"}' }, exec);
    expect(fixed.decision).toMatchObject({ action: "continue", reason: "ok" });
    expect(service.calls.findOrders).toBe(1);
  });

  it("admits the repair that removes an unknown key, a dotted one included (its value cannot show the change)", async () => {
    for (const input of [z.strictObject({ q: z.string() }), z.object({ q: z.string() })]) {
      const t = defineTool({ name: "s", version: "1", description: "d", effect: "read", input, output: z.object({}), execute: () => ({}) });
      const gate = createGate({ tools: [t] });
      const exec = (c: { tool: string; args: unknown; callId: string }) => gate.call(c.tool, c.args, { callId: c.callId });
      const s = createLoopPolicy().start();
      const bad = await s.run({ tool: "s", args: { q: "x", "address.city": "Paris" } }, exec);
      expect(bad.decision.action === "repair" && bad.decision.issues).toEqual([{ path: "address.city", code: "unrecognized_key", message: "Unknown field" }]);
      const fixed = await s.run({ tool: "s", args: { q: "x" } }, exec);
      expect(fixed.decision).toMatchObject({ action: "continue", reason: "ok" });
    }
  });

  it("treats UNKNOWN_TOOL as a repair with the same budget", async () => {
    const { exec } = setup();
    const s = createLoopPolicy().start();
    expect((await s.run({ tool: "get_orders", args: {} }, exec)).decision).toMatchObject({ action: "repair", reason: "unknown_tool" });
    expect((await s.run({ tool: "find_order", args: {} }, exec)).decision).toMatchObject({ action: "stop", reason: "repair_budget_exhausted", code: "UNKNOWN_TOOL" });
  });
});

describe("loop policy: parallel calls of one model turn share a repair", () => {
  const bad = (callId: string, customerId: unknown): ProposedCall => ({ tool: "get_order", args: { customerId }, callId });

  it("calls admitted before the first failure was seen (parallel tool calls): each gets its repair; the next turn's failure stops", async () => {
    const { exec } = setup();
    const s = createLoopPolicy().start();
    const a = s.admit(bad("a", 42));
    const b = s.admit(bad("b", 43)); // both admitted, then both answered: one model turn
    if (!a.ok || !b.ok) throw new Error("admitted");
    expect(s.observe(a.call, await exec(a.call))).toMatchObject({ action: "repair", repairsLeft: 0 });
    expect(s.observe(b.call, await exec(b.call))).toMatchObject({ action: "repair", repairsLeft: 0 });
    const again = await s.run(bad("c", 44), exec); // admitted after those failures: the model's repair, still wrong
    expect(again.decision).toMatchObject({ action: "stop", reason: "repair_budget_exhausted" });
  });

  it("with beginTurn: a second call of the turn with the same bad value is run and repaired, not refused as an unchanged repair", async () => {
    const { exec, service } = setup();
    const s = createLoopPolicy().start();
    expect(s.beginTurn()).toBeUndefined();
    expect((await s.run(bad("a", 42), exec)).decision).toMatchObject({ action: "repair" });
    const second = await s.run({ tool: "get_order", args: { customerId: 42, includeHistory: true }, callId: "b" }, exec);
    expect(second.result).toMatchObject({ ok: false, code: "INVALID_INPUT" }); // it ran through the gate
    expect(second.decision).toMatchObject({ action: "repair" });
    expect(service.calls.findOrders).toBe(0);
    expect(s.beginTurn()).toBeUndefined();
    const unchanged = await s.run({ tool: "get_order", args: { customerId: 42, includeHistory: false }, callId: "c" }, exec);
    expect(unchanged.decision).toMatchObject({ action: "stop", reason: "no_new_evidence" }); // the next turn's unchanged repair is refused
  });

  it("with beginTurn: calls of one turn share the repair even when answered one after another", async () => {
    const { exec } = setup();
    const s = createLoopPolicy().start();
    expect(s.beginTurn()).toBeUndefined();
    expect((await s.run(bad("a", 42), exec)).decision).toMatchObject({ action: "repair" });
    expect((await s.run(bad("b", 43), exec)).decision).toMatchObject({ action: "repair" });
    expect(s.beginTurn()).toBeUndefined();
    expect((await s.run(bad("c", 44), exec)).decision).toMatchObject({ action: "stop", reason: "repair_budget_exhausted" });
  });

  it("a host that calls beginTurn only once still has a bound: after 8 shared repairs the unchanged-repair check applies", async () => {
    const { exec, service } = setup();
    const s = createLoopPolicy().start();
    s.beginTurn();
    const decisions: string[] = [];
    for (let i = 0; i < 12 && s.outcome === undefined; i++) {
      const step = await s.run({ tool: "create_refund", args: { orderId: "o_100", amountCents: 0, reason: `try ${i}` }, callId: `c${i}` }, exec); // only an unrelated field changes
      decisions.push(`${step.decision.action}/${step.decision.reason}`);
    }
    expect(decisions.slice(0, 9)).toEqual([...Array<string>(9).fill("repair/invalid_input")]);
    expect(decisions.at(-1)).toBe("stop/no_new_evidence");
    expect(decisions.length).toBe(10);
    expect(service.calls.createRefund).toBe(0);
  });

  it("without beginTurn, calls answered one after another each spend the budget (as before)", async () => {
    const { exec } = setup();
    const s = createLoopPolicy().start();
    expect((await s.run(bad("a", 42), exec)).decision.action).toBe("repair");
    expect((await s.run(bad("b", 43), exec)).decision).toMatchObject({ action: "stop", reason: "repair_budget_exhausted" });
  });
});

describe("loop evidence carries no payload keys", () => {
  it("issue paths are masked as the gate's records are (a record's key is *) when the gate answered in this process", async () => {
    const tool = defineTool({
      name: "set_scores",
      version: "1",
      description: "d",
      effect: "read",
      input: z.object({ scores: z.record(z.string(), z.number()) }),
      output: z.object({ ok: z.boolean() }),
      execute: () => ({ ok: true }),
    });
    const gate = createGate({ tools: [tool] });
    const s = createLoopPolicy({ repairBudget: 0 }).start();
    const step = await s.run({ tool: "set_scores", args: { scores: { "alice@example.com": "x" } } }, (c) => gate.call(c.tool, c.args, { callId: c.callId }));
    expect(step.result?.ok === false && step.result.issues?.[0]?.path).toBe("scores.alice@example.com"); // the model's view keeps it
    expect(s.evidence[0]!.issuePaths).toEqual(["scores.*.*"]);
    expect(JSON.stringify(s.evidence)).not.toContain("alice");
  });
});

describe("loop policy: no new evidence", () => {
  it("refuses an identical failing call, whatever its key order, spacing or _meta contents, without executing it", async () => {
    const { service, exec } = setup();
    const cases: [unknown, unknown][] = [
      ['{"customerId":42}', '{"customerId":42}'],
      ['{"customerId":42}', '{ "customerId" : 42 }'],
      ['{"customerId":42}', { customerId: 42 }],
      [{ customerId: 42, _meta: { requestId: "a" } }, { customerId: 42, _meta: { requestId: "x" } }],
    ];
    for (const [sent, resend] of cases) {
      const s = createLoopPolicy().start();
      const first = await s.run({ tool: "get_order", args: sent, callId: "a" }, exec);
      expect(first.decision.action).toBe("repair");
      let executed = 0;
      const again = await s.run({ tool: "get_order", args: resend, callId: "b" }, (c) => {
        executed++;
        return exec(c);
      });
      expect(executed).toBe(0);
      expect(again.result).toBeUndefined();
      expect(again.decision).toMatchObject({ action: "stop", reason: "no_new_evidence", callId: "b", code: "INVALID_INPUT" });
      expect(s.evidence.at(-1)).toMatchObject({ callId: "b", repeatOf: "a", attempts: 0, issuePaths: ["customerId"] });
    }
    expect(service.calls.findOrders).toBe(0);
  });

  it("admits the repair of a refused model-written _meta: leaving it out is a changed call", async () => {
    const { service } = setup();
    const gate = createGate({ tools: makeOrderTools(service) });
    const exec = (c: { tool: string; args: unknown; callId: string }) => gate.call(c.tool, c.args, { callId: c.callId, fromModel: true });
    const s = createLoopPolicy().start();
    const first = await s.run({ tool: "get_order", args: '{"customerId":"c_1","_meta":{"approvedBy":"cfo"}}', callId: "a" }, exec);
    expect(first.result).toMatchObject({ ok: false, code: "INVALID_INPUT", issues: [{ path: "_meta", code: "reserved_key" }] });
    expect(first.decision.action).toBe("repair");
    const fixed = await s.run({ tool: "get_order", args: '{"customerId":"c_1"}', callId: "b" }, exec);
    expect(fixed.result?.ok).toBe(true);
    expect(service.calls.findOrders).toBe(1);
  });

  it("refuses a resent REJECTED call but continues after the first refusal", async () => {
    const { service, exec } = setup();
    const s = createLoopPolicy().start();
    const first = await s.run({ tool: "create_refund", args: { orderId: "o_101", amountCents: 500 } }, exec);
    expect(first.decision).toMatchObject({ action: "continue", reason: "rejected", code: "REJECTED" });
    const again = await s.run({ tool: "create_refund", args: { amountCents: 500, orderId: "o_101" } }, exec);
    expect(again.decision).toMatchObject({ action: "stop", reason: "no_new_evidence", code: "REJECTED" });
    expect(service.calls.createRefund).toBe(1);
  });

  it("does not refuse a repeated successful call", async () => {
    const { exec } = setup();
    const s = createLoopPolicy().start();
    await s.run({ tool: "get_order", args: { customerId: "c_1" } }, exec);
    expect((await s.run({ tool: "get_order", args: { customerId: "c_1" } }, exec)).decision.reason).toBe("ok");
  });
});

describe("loop policy: stop and escalate", () => {
  it("stops on INVALID_OUTPUT with an evidence record and no payload", async () => {
    const { service, exec } = setup();
    service.faults.badStatus = "refunded_partially";
    const s = createLoopPolicy({ now: () => Date.UTC(2026, 0, 2, 3, 4, 5) }).start();
    const step = await s.run({ tool: "get_order", args: { customerId: "c_1" }, callId: "call-9" }, exec);
    expect(step.decision).toMatchObject({ action: "stop", reason: "invalid_output", code: "INVALID_OUTPUT" });
    expect(s.evidence).toEqual([
      {
        tool: "get_order",
        version: "1.0.0",
        code: "INVALID_OUTPUT",
        issuePaths: ["orders.0.status"],
        callId: "call-9",
        at: "2026-01-02T03:04:05.000Z",
        effect: "none",
        attempts: 1,
        action: "stop",
        reason: "invalid_output",
      },
    ]);
    expect(JSON.stringify(s.evidence)).not.toContain("c_1");
  });

  it("puts redacted arguments into evidence only when opted in", async () => {
    const { service, exec } = setup();
    service.faults.badStatus = "weird";
    const s = createLoopPolicy({ includeArguments: true }).start();
    await s.run({ tool: "get_order", args: { customerId: "c_1", _meta: { note: "x" } } }, exec);
    expect(s.evidence[0]?.arguments).toBe('{"customerId":"c_1"}');
    const s2 = createLoopPolicy({ includeArguments: true }).start();
    await s2.run({ tool: "get_order", args: { customerId: "sk-abcdefghijklmnopqrstuvwxyz" } }, () => Promise.resolve(invalidOutput()));
    expect(s2.evidence[0]?.arguments).toBe('{"customerId":"[REDACTED]"}');
  });

  it("escalates DENIED", async () => {
    const { exec } = setup({ authorize: () => ({ allow: false, reason: "missing scope orders:read" }) });
    const s = createLoopPolicy().start();
    const step = await s.run({ tool: "get_order", args: { customerId: "c_1" } }, exec);
    expect(step.decision).toMatchObject({ action: "escalate", reason: "denied", code: "DENIED" });
    expect(step.decision.action === "escalate" && step.decision.evidence.code).toBe("DENIED");
  });

  it("escalates a write whose effect is unknown (lost response, a tool without a retry guarantee)", async () => {
    const service = createFakeOrders();
    const [getOrder, createRefund] = makeOrderTools(service);
    // The same write without an idempotency key or a deduplicating downstream: the gate cannot retry it.
    const { idempotencyKey: _key, idempotentDownstream: _dedupes, ...unguarded } = createRefund;
    const gate = createGate({ tools: [getOrder, defineTool(unguarded)] });
    service.faults.lostRefundResponses = 1;
    const s = createLoopPolicy().start();
    const step = await s.run({ tool: "create_refund", args: { orderId: "o_100", amountCents: 500 } }, (c) => gate.call(c.tool, c.args, { callId: c.callId }));
    expect(step.result).toMatchObject({ ok: false, code: "FAILED", effect: "unknown", meta: { attempts: 1 } });
    expect(step.decision).toMatchObject({ action: "escalate", reason: "unknown_effect", code: "FAILED" });
    expect(s.evidence[0]).toMatchObject({ effect: "unknown", action: "escalate" });
  });

  it("continues when the gate retried a lost write safely (the example's key and deduplicating service)", async () => {
    const { service, exec } = setup();
    service.faults.lostRefundResponses = 1;
    const s = createLoopPolicy().start();
    const step = await s.run({ tool: "create_refund", args: { orderId: "o_100", amountCents: 500 } }, exec);
    expect(step.result).toMatchObject({ ok: true, meta: { attempts: 2 } });
    expect(step.decision.reason).toBe("ok");
    expect(await service.refunds()).toHaveLength(1);
  });

  it("stops with retry_later on RETRYABLE (the executor already retried)", async () => {
    const { service, exec } = setup();
    service.faults.transientReads = 10;
    const s = createLoopPolicy().start();
    const step = await s.run({ tool: "get_order", args: { customerId: "c_1" } }, exec);
    expect(step.result).toMatchObject({ ok: false, code: "RETRYABLE", meta: { attempts: 3 } });
    expect(step.decision).toMatchObject({ action: "stop", reason: "retry_later" });
  });

  it("decides CONFLICT by retryability and FAILED by effect", () => {
    const decide = (r: ToolResult): LoopDecision => createLoopPolicy().start().observe({ tool: "create_refund", args: {} }, r);
    expect(decide(failure({ code: "CONFLICT", retryable: true, effect: "unknown", retryAfterMs: 50 }))).toMatchObject({ action: "stop", reason: "retry_later", retryAfterMs: 50 });
    expect(decide(failure({ code: "CONFLICT", retryable: false, effect: "none" }))).toMatchObject({ action: "continue", reason: "conflict" });
    expect(decide(failure({ code: "FAILED", retryable: false, effect: "none" }))).toMatchObject({ action: "stop", reason: "failed" });
    expect(decide(failure({ code: "FAILED", retryable: false, effect: "unknown" }))).toMatchObject({ action: "escalate", reason: "unknown_effect" });
    // a write refused without saying whether it changed anything is a state check too, not a new decision
    expect(decide(failure({ code: "REJECTED", retryable: false, effect: "unknown" }))).toMatchObject({ action: "escalate", reason: "unknown_effect" });
    expect(decide(failure({ code: "REJECTED", retryable: false, effect: "none" }))).toMatchObject({ action: "continue", reason: "rejected" });
  });

  it("stops on anything that is not an envelope, and on a throwing executor", async () => {
    const s = createLoopPolicy().start();
    expect(s.observe({ tool: "x", args: {} }, { isError: true })).toMatchObject({ action: "stop", reason: "not_an_envelope" });
    const s2 = createLoopPolicy().start();
    const step = await s2.run({ tool: "x", args: {} }, () => {
      throw new Error("boom");
    });
    expect(step.decision.reason).toBe("not_an_envelope");
  });

  it("refuses every call once the run has ended", async () => {
    const { service, exec } = setup();
    service.faults.badStatus = "weird";
    const s = createLoopPolicy().start();
    await s.run({ tool: "get_order", args: { customerId: "c_1" } }, exec);
    const after = s.admit({ tool: "get_order", args: { customerId: "c_2" } });
    expect(after).toMatchObject({ ok: false, decision: { action: "stop", reason: "stopped" } });
    expect(s.outcome?.reason).toBe("invalid_output");
    expect(s.beginTurn()?.reason).toBe("invalid_output");
  });
});

describe("loop policy: caps and the host loop", () => {
  it("stops at the turn cap", async () => {
    const { exec } = setup();
    let n = 0;
    const model: AgentModel = { next: () => [{ tool: "get_order", args: { customerId: `c_${++n}` } }] };
    const out = await runAgentLoop({ session: createLoopPolicy({ maxTurns: 3 }).start(), model, execute: exec });
    expect(out).toMatchObject({ status: "stopped", turns: 3, calls: 3, decision: { action: "stop", reason: "turn_limit" } }); // the refused turn is not counted
  });

  it("stops at the call cap, counting refused calls", async () => {
    const { exec } = setup();
    const calls = Array.from({ length: 5 }, (_, i) => ({ tool: "get_order", args: { customerId: `c_${i}` } }));
    const out = await runAgentLoop({ session: createLoopPolicy({ maxCalls: 3 }).start(), model: script(calls), execute: exec });
    expect(out.decision).toMatchObject({ action: "stop", reason: "call_limit" });
    expect(out.calls).toBe(4);
    expect(out.steps.filter((s) => s.result !== undefined)).toHaveLength(3);
  });

  it("runs a seed-like script to the end: repair, success, refused repeat", async () => {
    const { exec } = setup();
    const decisions: string[] = [];
    const model: AgentModel = {
      next: ({ turn, last }) => {
        if (turn === 1) return [{ tool: "get_order", args: '{"customerId":42}' }];
        const d = last[0]?.decision;
        if (turn === 2 && d?.action === "repair" && d.issues.some((i) => i.path === "customerId")) return [{ tool: "get_order", args: { customerId: "c_1" } }];
        if (turn === 3) return [{ tool: "get_order", args: '{"customerId":42}' }];
        return [];
      },
    };
    const out = await runAgentLoop({ session: createLoopPolicy({ onDecision: (d) => decisions.push(`${d.action}:${d.reason}`) }).start(), model, execute: exec });
    expect(decisions).toEqual(["repair:invalid_input", "continue:ok", "stop:no_new_evidence"]);
    expect(out).toMatchObject({ status: "stopped", turns: 3, calls: 3 });
  });

  it("ends as done when the model stops proposing calls", async () => {
    const { exec } = setup();
    const out = await runAgentLoop({ session: createLoopPolicy().start(), model: script([{ tool: "get_order", args: { customerId: "c_1" } }]), execute: exec });
    expect(out).toMatchObject({ status: "done", turns: 2, calls: 1, evidence: [] });
    expect(out.decision).toBeUndefined();
  });

  it("throws ToolgateConfigError on bad options, and with() leaves the original unchanged", () => {
    expect(() => createLoopPolicy({ repairBudget: -1 })).toThrow(/repairBudget/);
    expect(() => createLoopPolicy({ maxTurns: 0 })).toThrow(/maxTurns/);
    expect(() => createLoopPolicy({ maxCalls: 1.5 })).toThrow(/maxCalls/);
    expect(() => createLoopPolicy({ includeArguments: "yes" as unknown as boolean })).toThrow(/includeArguments/);
    // A misspelt option is refused, not ignored in favour of the default.
    expect(() => createLoopPolicy({ maxTurn: 3 } as never)).toThrow(/E_LOOP_OPTIONS|unknown option maxTurn \(did you mean maxTurns\?\)/);
    expect(() => createLoopPolicy().with({ repairBudgets: 2 } as never)).toThrow(/unknown option repairBudgets \(did you mean repairBudget\?\)/);
    expect(() => createLoopPolicy({ redact: { pattern: [/x/g] } } as never)).toThrow(/unknown option redact\.pattern \(did you mean redact\.patterns\?\)/);
    const p = createLoopPolicy({ maxTurns: 4 });
    const q = p.with({ repairBudget: 3 });
    expect([p.options.repairBudget, p.options.maxTurns, q.options.repairBudget, q.options.maxTurns]).toEqual([1, 4, 3, 4]);
  });
});

function meta() {
  return { tool: "create_refund", version: "1.0.0", callId: "m1", attempts: 1, durationMs: 1 };
}
function failure(f: { code: "CONFLICT" | "FAILED" | "REJECTED"; retryable: boolean; effect: "none" | "unknown"; retryAfterMs?: number }): ToolResult {
  return { ok: false, message: "m", ...f, meta: meta() };
}
function invalidOutput(): ToolResult {
  return { ok: false, code: "INVALID_OUTPUT", message: "m", retryable: false, effect: "none", issues: [{ path: "x", code: "c", message: "m" }], meta: meta() };
}
