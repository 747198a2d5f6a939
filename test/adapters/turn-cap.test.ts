import { describe, it, expect } from "vitest";
import { generateText, jsonSchema, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import type { LanguageModelV3GenerateResult } from "@ai-sdk/provider";
import { Agent, Runner, Usage, tool as agentsTool, type Model, type ModelResponse } from "@openai/agents";
import { z } from "zod";
import { createGate } from "../../src/index.js";
import { createLoopPolicy } from "../../src/loop/index.js";
import { aiSdkTools, loopStopWhen, loopToolUseBehavior, openAIAgentsTools } from "../../src/adapters/index.js";
import { createFakeOrders, makeOrderTools } from "../../examples/orders/index.js";

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };

function toolCall(id: string, toolName: string, input: string): LanguageModelV3GenerateResult {
  return { content: [{ type: "tool-call", toolCallId: id, toolName, input }], finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage, warnings: [] };
}

/** The first model turn calls `first`; every later one calls get_order with new arguments (so the loop never refuses). */
const FIRST_TURNS: Array<[string, string, string]> = [
  ["a gate tool", "get_order", '{"customerId":"c_1"}'],
  ["only a tool that is not the gate's", "clock", "{}"],
  ["only argument text that is not JSON (the SDK answers it)", "get_order", "{not json"],
];

describe("loopStopWhen keeps the AI SDK run within maxTurns model requests", () => {
  it.each(FIRST_TURNS)("when the first turn calls %s", async (_what, name, input) => {
    const gate = createGate({ tools: makeOrderTools(createFakeOrders()) });
    const session = createLoopPolicy({ maxTurns: 2 }).start();
    let n = 0;
    const model = new MockLanguageModelV3({ doGenerate: async () => (++n === 1 ? toolCall("k1", name, input) : toolCall(`k${n}`, "get_order", `{"customerId":"c_${n}"}`)) });
    const clock = tool({ description: "time", inputSchema: jsonSchema<Record<string, never>>({ type: "object", properties: {} }), execute: async () => "12:00" });
    await generateText({ model, prompt: "p", tools: { ...aiSdkTools(gate, { session }), clock }, stopWhen: loopStopWhen(session) });
    expect({ requests: n, turns: session.turns, reason: session.outcome?.reason }).toEqual({ requests: 2, turns: 2, reason: "turn_limit" });
  });
});

describe("loopToolUseBehavior keeps the Agents SDK run within maxTurns model requests", () => {
  type Output = ModelResponse["output"][number];
  const fnCall = (callId: string, name: string, args: string): Output => ({ type: "function_call", callId, name, arguments: args, status: "completed" });

  it.each(FIRST_TURNS)("when the first turn calls %s", async (_what, name, input) => {
    let n = 0;
    const model: Model = {
      async getResponse(): Promise<ModelResponse> {
        n++;
        return { usage: new Usage(), output: [n === 1 ? fnCall("c1", name, input) : fnCall(`c${n}`, "get_order", `{"customerId":"c_${n}"}`)] };
      },
      // eslint-disable-next-line require-yield
      async *getStreamedResponse(): AsyncIterable<never> {
        throw new Error("not used");
      },
    };
    const gate = createGate({ tools: makeOrderTools(createFakeOrders()) });
    const session = createLoopPolicy({ maxTurns: 2 }).start();
    const clock = agentsTool({ name: "clock", description: "time", parameters: z.object({}), execute: async () => "12:00" });
    const agent = new Agent({ name: "o", model, tools: [...(await openAIAgentsTools(gate, { session })), clock], toolUseBehavior: loopToolUseBehavior(session) });
    const r = await new Runner({ tracingDisabled: true }).run(agent, "go", { maxTurns: 20 });
    expect({ requests: n, turns: session.turns, reason: JSON.parse(String(r.finalOutput)).reason }).toEqual({ requests: 2, turns: 2, reason: "turn_limit" });
  });
});
