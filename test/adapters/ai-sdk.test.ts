import { describe, it, expect, expectTypeOf } from "vitest";
import { generateText, stepCountIs, tool, type Tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import type { LanguageModelV3CallOptions, LanguageModelV3GenerateResult } from "@ai-sdk/provider";
import { z } from "zod";
import { createGate, defineTool } from "../../src/index.js";
import { createLoopPolicy } from "../../src/loop/index.js";
import { aiSdkTools, CallOptionsError, loopStopWhen, type ModelView } from "../../src/adapters/index.js";
import { createFakeOrders, makeOrderTools } from "../../examples/orders/index.js";

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };

function toolCall(id: string, toolName: string, input: string): LanguageModelV3GenerateResult {
  return { content: [{ type: "tool-call", toolCallId: id, toolName, input }], finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage, warnings: [] };
}
function text(t: string): LanguageModelV3GenerateResult {
  return { content: [{ type: "text", text: t }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
}

/** The last tool result the model was shown, as the provider receives it. */
function lastToolOutput(opts: LanguageModelV3CallOptions): { type: string; value?: unknown } | undefined {
  for (let i = opts.prompt.length - 1; i >= 0; i--) {
    const m = opts.prompt[i]!;
    if (m.role === "tool") {
      const part = m.content.findLast((p) => p.type === "tool-result");
      if (part !== undefined && part.type === "tool-result") return part.output as { type: string; value?: unknown };
    }
  }
  return undefined;
}

function setup() {
  const service = createFakeOrders();
  const gate = createGate({ tools: makeOrderTools(service), retry: { baseMs: 0, capMs: 0 } });
  return { service, gate };
}

describe("AI SDK adapter, driven by the SDK's own mock model through generateText", () => {
  it("runs the seed story: INVALID_INPUT naming customerId, corrected call, refused identical resend", async () => {
    const { service, gate } = setup();
    const session = createLoopPolicy().start();
    const seen: Array<{ type: string; value?: unknown } | undefined> = [];
    const model = new MockLanguageModelV3({
      doGenerate: async (opts) => {
        const n = seen.push(lastToolOutput(opts));
        if (n === 1) return toolCall("c1", "get_order", '{"customerId":42}');
        const last = seen[n - 1] as { type: string; value: { issues?: Array<{ path: string }> } };
        if (n === 2 && last.type === "error-json" && last.value.issues?.some((i) => i.path === "customerId")) {
          return toolCall("c2", "get_order", '{"customerId":"c_1"}');
        }
        if (n === 3) return toolCall("c3", "get_order", '{"customerId":42}');
        return text("unreachable: the loop stopped the run");
      },
    });
    const result = await generateText({ model, prompt: "Show the orders of customer 42", tools: aiSdkTools(gate, { session }), stopWhen: [loopStopWhen(session), stepCountIs(10)] });

    expect(model.doGenerateCalls).toHaveLength(3);
    const advertised = model.doGenerateCalls[0]!.tools?.find((t) => t.name === "get_order");
    expect(advertised).toMatchObject({ type: "function", inputSchema: { type: "object", properties: { customerId: { type: "string" } }, required: ["customerId"], additionalProperties: false } });

    const outputs = result.steps.map((s) => s.toolResults[0]?.output);
    expect(outputs[0]).toMatchObject({ ok: false, code: "INVALID_INPUT", next: "Fix only the reported fields and call again" });
    expect((outputs[0] as { issues: Array<{ path: string }> }).issues.map((i) => i.path)).toEqual(["customerId"]);
    expect(seen[1]?.type).toBe("error-json");
    expect(outputs[1]).toEqual({ ok: true, data: { found: true, customerId: "c_1", orders: [{ id: "o_100", status: "paid" }, { id: "o_101", status: "pending" }] } });
    expect(seen[2]?.type).toBe("json");
    expect(outputs[2]).toEqual({ ok: false, refused: true, reason: "no_new_evidence", message: "Refused: this call already failed and nothing changed (no new evidence)" });
    expect(session.outcome).toMatchObject({ action: "stop", reason: "no_new_evidence" });
    expect(service.calls.findOrders).toBe(1);
  });

  it("stops the run on INVALID_OUTPUT with evidence, although the model would go on", async () => {
    const { service, gate } = setup();
    service.faults.badStatus = "lost_in_space";
    const session = createLoopPolicy().start();
    let n = 0;
    const model = new MockLanguageModelV3({ doGenerate: async () => (++n === 1 ? toolCall("x1", "get_order", '{"customerId":"c_1"}') : toolCall(`x${n}`, "get_order", '{"customerId":"c_2"}')) });
    const result = await generateText({ model, prompt: "orders", tools: aiSdkTools(gate, { session }), stopWhen: [loopStopWhen(session), stepCountIs(10)] });
    expect(result.steps).toHaveLength(1);
    expect(result.steps[0]!.toolResults[0]!.output).toMatchObject({ ok: false, code: "INVALID_OUTPUT", issues: [{ path: "orders.0.status" }] });
    expect(session.evidence).toEqual([expect.objectContaining({ tool: "get_order", version: "1.0.0", code: "INVALID_OUTPUT", callId: "x1", issuePaths: ["orders.0.status"] })]);
  });

  it("retries a transient read inside the gate and the model sees one success", async () => {
    const { service, gate } = setup();
    service.faults.transientReads = 1;
    let n = 0;
    const model = new MockLanguageModelV3({ doGenerate: async () => (++n === 1 ? toolCall("t1", "get_order", '{"customerId":"c_2"}') : text("done")) });
    const result = await generateText({ model, prompt: "orders", tools: aiSdkTools(gate), stopWhen: stepCountIs(5) });
    expect(result.text).toBe("done");
    expect(result.steps[0]!.toolResults[0]!.output).toMatchObject({ ok: true, data: { customerId: "c_2" } });
    expect(service.calls.findOrders).toBe(2);
  });

  it("strict mode: advertises the strict schema and maps a null back to an absent field", async () => {
    const { gate } = setup();
    let n = 0;
    const model = new MockLanguageModelV3({
      doGenerate: async () => (++n === 1 ? toolCall("s1", "get_order", '{"customerId":"c_1","includeHistory":null}') : text("ok")),
    });
    const result = await generateText({ model, prompt: "orders", tools: aiSdkTools(gate, { strict: true, tools: ["get_order"] }), stopWhen: stepCountIs(3) });
    const t = model.doGenerateCalls[0]!.tools?.[0];
    expect(t).toMatchObject({ name: "get_order", strict: true, inputSchema: { required: ["customerId", "includeHistory"], properties: { includeHistory: { type: ["boolean", "null"] } } } });
    expect(model.doGenerateCalls[0]!.tools).toHaveLength(1);
    expect(result.steps[0]!.toolResults[0]!.output).toMatchObject({ ok: true, data: { orders: [{ id: "o_100" }, { id: "o_101" }] } });
  });

  it("ends the run at the policy's turn cap", async () => {
    const { gate } = setup();
    const session = createLoopPolicy({ maxTurns: 2 }).start();
    let n = 0;
    const model = new MockLanguageModelV3({ doGenerate: async () => toolCall(`k${++n}`, "get_order", JSON.stringify({ customerId: `c_${n}` })) });
    const result = await generateText({ model, prompt: "orders", tools: aiSdkTools(gate, { session }), stopWhen: [loopStopWhen(session), stepCountIs(10)] });
    expect(result.steps).toHaveLength(2);
    expect(session.outcome).toMatchObject({ action: "stop", reason: "turn_limit" });
  });

  it("passes callOptions (the principal) to the gate's authorize hook; a denial escalates", async () => {
    const service = createFakeOrders();
    const seen: string[] = [];
    const gate = createGate({
      tools: makeOrderTools(service),
      authorize: (c) => {
        seen.push(c.principal?.id ?? "none");
        return c.principal?.scopes?.includes("orders:read") === true;
      },
    });
    const session = createLoopPolicy().start();
    let n = 0;
    const model = new MockLanguageModelV3({ doGenerate: async () => (++n === 1 ? toolCall("d1", "get_order", '{"customerId":"c_1"}') : text("unreachable")) });
    const tools = aiSdkTools(gate, { session, callOptions: () => ({ principal: { id: "agent-7", scopes: [] } }) });
    const result = await generateText({ model, prompt: "orders", tools, stopWhen: [loopStopWhen(session), stepCountIs(5)] });
    expect(seen).toEqual(["agent-7"]);
    expect(result.steps[0]!.toolResults[0]!.output).toMatchObject({ ok: false, code: "DENIED" });
    expect(session.outcome).toMatchObject({ action: "escalate", reason: "denied" });
    expect(service.calls.findOrders).toBe(0);
  });

  it("throws ToolgateConfigError for an unknown tool name in `tools`", () => {
    const { gate } = setup();
    expect(() => aiSdkTools(gate, { tools: ["nope"] })).toThrow(/no tool named "nope"/);
  });
});

describe("parallel tool calls through generateText", () => {
  it("two calls of one step with the same mistake each get their repair; the corrected calls succeed", async () => {
    const { gate } = setup();
    const session = createLoopPolicy().start();
    let n = 0;
    const two = (a: [string, string], b: [string, string]): LanguageModelV3GenerateResult => ({
      content: [
        { type: "tool-call", toolCallId: a[0], toolName: "get_order", input: a[1] },
        { type: "tool-call", toolCallId: b[0], toolName: "get_order", input: b[1] },
      ],
      finishReason: { unified: "tool-calls", raw: "tool_calls" },
      usage,
      warnings: [],
    });
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        n++;
        if (n === 1) return two(["a", '{"customerId":42}'], ["b", '{"customerId":43}']);
        if (n === 2) return two(["c", '{"customerId":"c_1"}'], ["d", '{"customerId":"c_2"}']);
        return text("done");
      },
    });
    await generateText({ model, prompt: "orders of 42 and 43", tools: aiSdkTools(gate, { session }), stopWhen: [loopStopWhen(session), stepCountIs(5)] });
    expect(session.steps.map((s) => [s.callId, s.decision.action])).toEqual([
      ["a", "repair"],
      ["b", "repair"],
      ["c", "continue"],
      ["d", "continue"],
    ]);
    expect(session.outcome).toBeUndefined();
  });
});

describe("aiSdkTools hands the AI SDK schemas it may edit", () => {
  const union = defineTool({
    name: "pick",
    version: "1",
    description: "Either shape",
    effect: "read",
    input: z.union([z.object({ a: z.string() }), z.object({ b: z.number() })]),
    output: z.object({ ok: z.boolean() }),
    execute: () => ({ ok: true }),
  });

  it("a root union with strict: true is sent non-strict and flattened (problems reported), and generateText runs (the SDK's in-place edits hit a copy)", async () => {
    const gate = createGate({ tools: [union] });
    const problems: string[] = [];
    const tools = aiSdkTools(gate, { strict: true, onProblems: (tool, p) => void problems.push(`${tool}: ${p.join("; ")}`) });
    expect((tools.pick as { strict?: boolean }).strict).toBeUndefined();
    expect(problems).toEqual([expect.stringMatching(/^pick: .*\(root\): sent without strict mode/)]);
    let n = 0;
    const model = new MockLanguageModelV3({ doGenerate: async () => (++n === 1 ? toolCall("u1", "pick", '{"b":2}') : text("done")) });
    const result = await generateText({ model, prompt: "p", tools, stopWhen: stepCountIs(3) });
    expect(result.steps[0]!.toolResults[0]!.output).toEqual({ ok: true, data: { ok: true } });
    expect(Object.isFrozen(gate.list()[0]!.inputSchema)).toBe(true); // the listing itself was never handed out
    const sent = model.doGenerateCalls[0]!.tools![0] as unknown as { inputSchema: Record<string, unknown> };
    // The providers take only an object root: the union goes out flattened into one object.
    expect(sent.inputSchema).toMatchObject({ type: "object", properties: { a: { type: "string" }, b: { type: "number" } } });
    expect(sent.inputSchema).not.toHaveProperty("anyOf");
  });

  it("each read of the advertised schema is a fresh copy", () => {
    const gate = createGate({ tools: [union] });
    const converter = (aiSdkTools(gate).pick!.inputSchema as unknown as { "~standard": { jsonSchema: { input: (o: object) => Record<string, unknown> } } })["~standard"].jsonSchema;
    const first = converter.input({ target: "draft-07" });
    first.mutated = true;
    expect(converter.input({ target: "draft-07" })).not.toHaveProperty("mutated");
  });
});

describe("AI SDK adapter: what the SDK hands execute is a value", () => {
  it("a string the model sent is that string, never JSON text parsed a second time", async () => {
    // Tools take objects (a string input is refused when the tools are built), but the model may still send a string.
    const { service, gate } = setup();
    const outputs: unknown[] = [];
    for (const [tool, input] of [
      ["get_order", '"hello"'],
      ["get_order", JSON.stringify('"hello"')],
      ["get_order", JSON.stringify('{"customerId":"c_1"}')], // a string that spells the object expected
    ] as const) {
      let n = 0;
      const model = new MockLanguageModelV3({ doGenerate: async () => (++n === 1 ? toolCall("s1", tool, input) : text("done")) });
      const r = await generateText({ model, prompt: "p", tools: aiSdkTools(gate), stopWhen: stepCountIs(2) });
      outputs.push(r.steps[0]!.toolResults[0]!.output);
    }
    expect(outputs[0]).toMatchObject({ ok: false, code: "INVALID_INPUT", issues: [{ path: "", code: "invalid_type" }] });
    expect(outputs[1]).toMatchObject({ ok: false, code: "INVALID_INPUT", issues: [{ path: "", code: "invalid_type" }] });
    expect(outputs[2]).toMatchObject({ ok: false, code: "INVALID_INPUT", issues: [{ path: "", code: "invalid_type" }] });
    expect(service.calls.findOrders).toBe(0);
  });

  it("a callOptions that throws: the model sees a fixed message (never the error's text), the tool does not run, the session stops", async () => {
    const { service, gate } = setup();
    const session = createLoopPolicy().start();
    let n = 0;
    const model = new MockLanguageModelV3({ doGenerate: async () => (++n === 1 ? toolCall("k1", "get_order", '{"customerId":"c_1"}') : text("done")) });
    const callOptions = () => {
      throw new Error("db password=hunter2 unreachable");
    };
    const r = await generateText({ model, prompt: "p", tools: aiSdkTools(gate, { session, callOptions }), stopWhen: [loopStopWhen(session), stepCountIs(5)] });
    expect(service.calls.findOrders).toBe(0);
    const sent = JSON.stringify(model.doGenerateCalls.map((c) => c.prompt));
    expect(sent).not.toContain("hunter2");
    const errors = r.steps[0]!.content.filter((p) => p.type === "tool-error");
    expect(errors).toHaveLength(1);
    const err = (errors[0] as { error: unknown }).error;
    expect(err).toBeInstanceOf(CallOptionsError);
    expect((err as Error).message).not.toContain("hunter2"); // what a model would be shown on a next step
    expect((err as CallOptionsError).cause).toMatchObject({ message: "db password=hunter2 unreachable" });
    expect(session.outcome?.action).toBe("stop");
    expect(model.doGenerateCalls).toHaveLength(1); // loopStopWhen ended the run
  });
});

describe("AI SDK adapter types", () => {
  it("the tools are typed (no any reaches the run's results), and loopStopWhen fits a run that mixes in the SDK's own tools", async () => {
    const { gate } = setup();
    const tools = aiSdkTools(gate);
    expectTypeOf(tools).toEqualTypeOf<Record<string, Tool<unknown, ModelView>>>();
    const weather = tool({ inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => `sunny in ${city}` });
    const session = createLoopPolicy().start();
    const model = new MockLanguageModelV3({ doGenerate: async () => text("done") });
    // Before: StopCondition<ToolSet> was not assignable to the stopWhen of a typed tool set (TS2322).
    const r = await generateText({ model, prompt: "hi", tools: { ...tools, weather }, stopWhen: loopStopWhen(session) });
    expect(r.text).toBe("done");
  });
});
