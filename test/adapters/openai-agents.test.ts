import { describe, it, expect } from "vitest";
import { Agent, Runner, Usage, type Model, type ModelRequest, type ModelResponse } from "@openai/agents";
import { z } from "zod";
import { createGate, defineTool } from "../../src/index.js";
import { createLoopPolicy } from "../../src/loop/index.js";
import { CallOptionsError, loopToolUseBehavior, openAIAgentsTools } from "../../src/adapters/index.js";
import { createFakeOrders, makeOrderTools } from "../../examples/orders/index.js";

type Output = ModelResponse["output"][number];

function fnCall(callId: string, name: string, args: string): Output {
  return { type: "function_call", callId, name, arguments: args, status: "completed" };
}
function message(text: string): Output {
  return { type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text }] };
}

/** The text of the last tool result in the request the runner sends to the model. */
function lastResult(req: ModelRequest): unknown {
  if (typeof req.input === "string") return undefined;
  const item = req.input.findLast((i) => i.type === "function_call_result");
  if (item === undefined || item.type !== "function_call_result") return undefined;
  const out = item.output as unknown;
  const textOf = typeof out === "string" ? out : (out as { text?: string }).text;
  return textOf === undefined ? undefined : JSON.parse(textOf);
}

/** A scripted Model: one function per turn, given the request the SDK built. */
class ScriptedModel implements Model {
  readonly requests: ModelRequest[] = [];
  constructor(private readonly turns: Array<(req: ModelRequest) => Output[]>) {}
  async getResponse(req: ModelRequest): Promise<ModelResponse> {
    this.requests.push(req);
    const turn = this.turns[this.requests.length - 1] ?? (() => [message("script exhausted")]);
    return { usage: new Usage(), output: turn(req) };
  }
  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("not used");
  }
}

function setup() {
  const service = createFakeOrders();
  const gate = createGate({ tools: makeOrderTools(service), retry: { baseMs: 0, capMs: 0 } });
  return { service, gate, runner: new Runner({ tracingDisabled: true }) };
}

describe("OpenAI Agents SDK adapter, run by the SDK's own Runner with a scripted model", () => {
  it("repairs once: the raw arguments reach the gate, the model sees INVALID_INPUT, then the corrected call succeeds", async () => {
    const { service, gate, runner } = setup();
    const session = createLoopPolicy().start();
    const seen: unknown[] = [];
    const model = new ScriptedModel([
      () => [fnCall("call_1", "get_order", '{"customerId":42}')],
      (req) => {
        seen.push(lastResult(req));
        return [fnCall("call_2", "get_order", '{"customerId":"c_1","includeHistory":null}')];
      },
      (req) => {
        seen.push(lastResult(req));
        return [message("Customer c_1 has 2 open orders.")];
      },
    ]);
    const agent = new Agent({ name: "orders", instructions: "Help with orders.", model, tools: await openAIAgentsTools(gate, { session }), toolUseBehavior: loopToolUseBehavior(session) });
    const result = await runner.run(agent, "Show the orders of customer 42");

    expect(result.finalOutput).toBe("Customer c_1 has 2 open orders.");
    const sent = model.requests[0]!.tools.find((t) => t.type === "function" && t.name === "get_order");
    expect(sent).toMatchObject({ strict: true, parameters: { type: "object", required: ["customerId", "includeHistory"], additionalProperties: false } });
    expect(seen[0]).toMatchObject({ ok: false, code: "INVALID_INPUT", issues: [{ path: "customerId" }], next: "Fix only the reported fields and call again" });
    expect(seen[1]).toMatchObject({ ok: true, data: { customerId: "c_1" } });
    expect(session.steps.map((s) => `${s.callId}:${s.decision.action}`)).toEqual(["call_1:repair", "call_2:continue"]);
    expect(service.calls.findOrders).toBe(1);
  });

  it("hands the raw argument text to the gate: duplicate keys are refused, not collapsed by JSON.parse", async () => {
    const { service, gate, runner } = setup();
    const seen: unknown[] = [];
    const model = new ScriptedModel([
      () => [fnCall("call_1", "get_order", '{"customerId":"c_1","customerId":"c_2","includeHistory":null}')],
      (req) => {
        seen.push(lastResult(req));
        return [message("sorry")];
      },
    ]);
    const agent = new Agent({ name: "orders", model, tools: await openAIAgentsTools(gate) });
    await runner.run(agent, "orders");
    expect(seen[0]).toMatchObject({ ok: false, code: "INVALID_INPUT", issues: [{ path: "customerId" }] });
    expect(service.calls.findOrders).toBe(0);
  });

  it("leaves arguments that are not JSON to the SDK (documented): the gate is not called, the run goes on", async () => {
    const { service, gate, runner } = setup();
    const session = createLoopPolicy().start();
    const model = new ScriptedModel([() => [fnCall("call_1", "get_order", '{"customerId": ')], () => [message("sorry")]]);
    const agent = new Agent({ name: "orders", model, tools: await openAIAgentsTools(gate, { session }) });
    const result = await runner.run(agent, "orders");
    expect(result.finalOutput).toBe("sorry");
    expect(session.steps).toHaveLength(0);
    expect(service.calls.findOrders).toBe(0);
  });

  it("ends the run on INVALID_OUTPUT through toolUseBehavior, with evidence", async () => {
    const { service, gate, runner } = setup();
    service.faults.badStatus = "teleported";
    const session = createLoopPolicy().start();
    const model = new ScriptedModel([() => [fnCall("call_9", "get_order", '{"customerId":"c_1","includeHistory":null}')], () => [message("should not be asked")]]);
    const agent = new Agent({ name: "orders", model, tools: await openAIAgentsTools(gate, { session }), toolUseBehavior: loopToolUseBehavior(session) });
    const result = await runner.run(agent, "orders");
    expect(model.requests).toHaveLength(1);
    expect(JSON.parse(String(result.finalOutput))).toMatchObject({ action: "stop", reason: "invalid_output", code: "INVALID_OUTPUT", callId: "call_9" });
    expect(session.evidence[0]).toMatchObject({ tool: "get_order", code: "INVALID_OUTPUT", issuePaths: ["orders.0.status"], callId: "call_9" });
  });

  it("refuses an identical resend of a failed call without executing it", async () => {
    const { service, gate, runner } = setup();
    const session = createLoopPolicy().start();
    const refund = '{"orderId":"o_101","amountCents":500,"reason":null}';
    const model = new ScriptedModel([() => [fnCall("r1", "create_refund", refund)], () => [fnCall("r2", "create_refund", refund)], () => [message("unreachable")]]);
    const agent = new Agent({ name: "orders", model, tools: await openAIAgentsTools(gate, { session }), toolUseBehavior: loopToolUseBehavior(session) });
    const result = await runner.run(agent, "refund o_101");
    expect(session.steps.map((s) => s.decision.reason)).toEqual(["rejected", "no_new_evidence"]);
    expect(JSON.parse(String(result.finalOutput))).toMatchObject({ reason: "no_new_evidence", callId: "r2" });
    expect(service.calls.createRefund).toBe(1);
  });
});

describe("OpenAI Agents SDK adapter: tool names and definitions the SDK or the API would change", () => {
  const echo = (name: string, input: z.ZodType = z.object({ q: z.string() })) =>
    defineTool({ name, version: "1", description: "Echo", input, output: z.unknown(), effect: "read", execute: (v: unknown) => v });

  it("a name the SDK rewrites still calls the gate under its own; two names it would merge throw E_ADAPTER_TOOLS", async () => {
    const gate = createGate({ tools: [echo("get-order"), echo("get_order")] });
    await expect(openAIAgentsTools(gate)).rejects.toMatchObject({ code: "E_ADAPTER_TOOLS", message: expect.stringContaining('"get-order" and "get_order" one name') });
    const [only] = await openAIAgentsTools(gate, { tools: ["get-order"] });
    expect(only!.name).toBe("get_order");
    const { runner } = setup();
    const model = new ScriptedModel([() => [fnCall("e1", "get_order", '{"q":"hi"}')], (req) => [message(JSON.stringify(lastResult(req)))]]);
    const result = await runner.run(new Agent({ name: "echo", model, tools: [only!] }), "echo");
    expect(JSON.parse(String(result.finalOutput))).toEqual({ ok: true, data: { q: "hi" } });
  });

  it("an input that is not an object throws E_ADAPTER_SCHEMA", async () => {
    const gate = createGate({ tools: [echo("s", z.string())] });
    await expect(openAIAgentsTools(gate)).rejects.toMatchObject({ code: "E_ADAPTER_SCHEMA" });
  });

  it("a callOptions that throws fails the run with CallOptionsError (the error as its cause); the tool does not run", async () => {
    const { service, gate, runner } = setup();
    const model = new ScriptedModel([() => [fnCall("k1", "get_order", '{"customerId":"c_1"}')], () => [message("unreachable")]]);
    const cause = new Error("db password=hunter2 unreachable");
    const tools = await openAIAgentsTools(gate, {
      callOptions: () => {
        throw cause;
      },
    });
    const failed = await runner.run(new Agent({ name: "orders", model, tools }), "orders").catch((e: unknown) => e);
    let e: unknown = failed;
    while (e instanceof Error && !(e instanceof CallOptionsError)) e = (e as { error?: unknown }).error ?? e.cause; // the SDK's ToolCallError keeps it as `error`
    expect(e).toBeInstanceOf(CallOptionsError);
    expect((e as CallOptionsError).cause).toBe(cause);
    expect(service.calls.findOrders).toBe(0);
  });
});
