import { describe, it, expect } from "vitest";
import fc from "fast-check";
import { Ajv } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { ChatCompletionCreateParams, ChatCompletionMessageFunctionToolCall } from "openai/resources/chat/completions";
import type { ResponseCreateParams } from "openai/resources/responses/responses";
import type { MessageCreateParams } from "@anthropic-ai/sdk/resources/messages";
import { z } from "zod";
import { createGate, defineTool } from "../../src/index.js";
import { createLoopPolicy } from "../../src/loop/index.js";
import {
  anthropicTools,
  answerAnthropicToolUse,
  answerOpenAIChatToolCall,
  answerOpenAIResponsesCall,
  CallOptionsError,
  openAIChatTools,
  openAIResponsesTools,
} from "../../src/adapters/index.js";
import { createFakeOrders, makeOrderTools } from "../../examples/orders/index.js";

function setup() {
  const service = createFakeOrders();
  return { service, gate: createGate({ tools: makeOrderTools(service), retry: { baseMs: 0, capMs: 0 } }) };
}

type Node = Record<string, unknown>;
/** Every object schema in a tree (properties, items, anyOf). */
function objects(node: unknown, out: Node[] = []): Node[] {
  if (typeof node !== "object" || node === null) return out;
  const n = node as Node;
  if (n.type === "object" || (Array.isArray(n.type) && n.type.includes("object"))) out.push(n);
  for (const v of Object.values((n.properties as Node | undefined) ?? {})) objects(v, out);
  if (n.items !== undefined) objects(n.items, out);
  for (const b of (n.anyOf as unknown[] | undefined) ?? []) objects(b, out);
  return out;
}

function chatCall(id: string, name: string, args: string): ChatCompletionMessageFunctionToolCall {
  return { id, type: "function", function: { name, arguments: args } };
}

describe("OpenAI Chat Completions format", () => {
  it("empty argument text is read as {} (what compatible servers send for no arguments): field issues, not 'not JSON'", async () => {
    const { gate } = setup();
    for (const text of ["", "  "]) {
      const chat = await answerOpenAIChatToolCall(gate, chatCall("e1", "get_order", text));
      expect(chat.result).toMatchObject({ ok: false, code: "INVALID_INPUT", issues: [{ path: "customerId" }] });
      const resp = await answerOpenAIResponsesCall(gate, { type: "function_call", call_id: "e2", name: "get_order", arguments: text });
      expect(resp.result).toMatchObject({ ok: false, code: "INVALID_INPUT", issues: [{ path: "customerId" }] });
    }
    expect((await answerOpenAIChatToolCall(gate, chatCall("e3", "get_order", "{"))).result).toMatchObject({ code: "INVALID_INPUT", message: "Arguments are not valid JSON" });
  });

  it("strict tool definitions are accepted by the SDK's request type and by Ajv as strict JSON Schema", () => {
    const { gate } = setup();
    const tools = openAIChatTools(gate);
    // Compile-time: the definitions fit the official request type.
    const params: ChatCompletionCreateParams = { model: "gpt-test", messages: [{ role: "user", content: "hi" }], tools };
    expect(params.tools).toHaveLength(2);
    for (const t of tools) {
      expect(t.function.strict).toBe(true);
      const schema = t.function.parameters!;
      expect(() => new Ajv({ strict: true }).compile(schema)).not.toThrow();
      expect(() => new Ajv2020({ strict: true }).compile(schema)).not.toThrow();
      for (const o of objects(schema)) {
        expect(o.additionalProperties).toBe(false);
        expect([...((o.required as string[]) ?? [])].sort()).toEqual(Object.keys((o.properties as Node) ?? {}).sort());
      }
    }
    expect(tools[0]!.function).toMatchObject({ name: "get_order", parameters: { properties: { includeHistory: { type: ["boolean", "null"] } } } });
  });

  it("round-trips: any valid call, in strict shape, passes Ajv on the strict schema and the gate answers as for the original", async () => {
    const { gate } = setup();
    const tool = openAIChatTools(gate, { tools: ["get_order"] })[0]!;
    const strictCheck = new Ajv({ strict: true }).compile(tool.function.parameters!);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("c_1", "c_2", "nobody", "x"), fc.option(fc.boolean(), { nil: undefined }), async (customerId, includeHistory) => {
        const original = includeHistory === undefined ? { customerId } : { customerId, includeHistory };
        const strictShape = { customerId, includeHistory: includeHistory ?? null };
        expect(strictCheck(strictShape)).toBe(true);
        const direct = await gate.call("get_order", original);
        const answer = await answerOpenAIChatToolCall(gate, chatCall("tc", "get_order", JSON.stringify(strictShape)));
        expect(answer.result?.ok).toBe(true);
        expect(answer.result?.ok === true && answer.result.data).toEqual(direct.ok === true && direct.data);
        expect(JSON.parse(answer.message.content as string)).toEqual({ ok: true, data: direct.ok ? direct.data : null });
      }),
      { numRuns: 30 },
    );
  });

  it("answers a failing call with a tool message carrying the envelope view", async () => {
    const { gate } = setup();
    const a = await answerOpenAIChatToolCall(gate, chatCall("call_7", "get_order", '{"customerId":42,"includeHistory":null}'));
    expect(a.message).toMatchObject({ role: "tool", tool_call_id: "call_7" });
    expect(JSON.parse(a.message.content as string)).toEqual({
      ok: false,
      code: "INVALID_INPUT",
      message: "Arguments do not match the tool's input schema; fix the listed fields",
      issues: [{ path: "customerId", code: "invalid_type", message: expect.any(String) }],
      retryable: false,
      effect: "none",
    });
    expect(a.result?.meta.callId).toBe("call_7");
  });

  it("strict: false sends the gate's own schema", () => {
    const { gate } = setup();
    const [t] = openAIChatTools(gate, { strict: false, tools: ["create_refund"] });
    const { $schema: _d, ...plain } = gate.list()[1]!.inputSchema;
    expect(t!.function).toEqual({ name: "create_refund", description: gate.list()[1]!.description, parameters: plain, strict: false });
  });
});

describe("OpenAI Responses format", () => {
  it("builds function tools the Responses request type accepts, and function_call_output items", async () => {
    const { service, gate } = setup();
    const tools = openAIResponsesTools(gate);
    const params: ResponseCreateParams = { model: "gpt-test", input: "refund o_100", tools };
    expect(params.tools?.[1]).toMatchObject({ type: "function", name: "create_refund", strict: true, parameters: { required: ["orderId", "amountCents", "reason"] } });
    const a = await answerOpenAIResponsesCall(gate, { type: "function_call", call_id: "fc_1", name: "create_refund", arguments: '{"orderId":"o_100","amountCents":500,"reason":null}' });
    expect(a.item).toMatchObject({ type: "function_call_output", call_id: "fc_1" });
    expect(JSON.parse(a.item.output as string)).toMatchObject({ ok: true, data: { orderId: "o_100", amountCents: 500, status: "accepted" } });
    expect((await service.refunds()).length).toBe(1);
  });
});

describe("Anthropic Messages format", () => {
  it("builds tools the Messages request type accepts, with input_schema Ajv compiles", () => {
    const { gate } = setup();
    const tools = anthropicTools(gate);
    const params: MessageCreateParams = { model: "claude-test", max_tokens: 100, messages: [{ role: "user", content: "hi" }], tools };
    expect(params.tools).toHaveLength(2);
    for (const t of tools) {
      expect(t.input_schema.type).toBe("object");
      expect("$schema" in t.input_schema).toBe(false);
      expect(() => new Ajv2020({ strict: true }).compile(t.input_schema)).not.toThrow();
    }
    expect(tools[0]).toMatchObject({ name: "get_order", input_schema: { required: ["customerId"], additionalProperties: false } });
  });

  it("answers tool_use with tool_result, is_error on failures and on loop refusals", async () => {
    const { gate } = setup();
    const session = createLoopPolicy().start();
    const ok = await answerAnthropicToolUse(gate, { id: "tu_1", name: "get_order", input: { customerId: "c_2" } }, { session });
    expect(ok.block).toEqual({ type: "tool_result", tool_use_id: "tu_1", content: JSON.stringify({ ok: true, data: { found: true, customerId: "c_2", orders: [{ id: "o_200", status: "paid" }] } }) });
    const bad = await answerAnthropicToolUse(gate, { id: "tu_2", name: "get_order", input: { customerId: 42 } }, { session });
    expect(bad.block.is_error).toBe(true);
    expect(bad.decision).toMatchObject({ action: "repair", reason: "invalid_input" });
    const again = await answerAnthropicToolUse(gate, { id: "tu_3", name: "get_order", input: { customerId: 42 } }, { session });
    expect(again.result).toBeUndefined();
    expect(again.block).toMatchObject({ is_error: true, tool_use_id: "tu_3" });
    expect(JSON.parse(again.block.content as string)).toMatchObject({ refused: true, reason: "no_new_evidence" });
  });
});

describe("schemas a target cannot express", () => {
  const echo = (input: z.ZodType) =>
    defineTool({ name: "echo", version: "1", description: "Echo", input, output: z.unknown(), effect: "read", execute: (v: unknown) => v });

  it("OpenAI: a root union falls back to a non-strict definition of one flattened object (the API takes only an object root) and is reported", async () => {
    const gate = createGate({ tools: [echo(z.union([z.object({ a: z.string() }), z.object({ b: z.number() })]))] });
    const reported: Array<[string, readonly string[]]> = [];
    const [t] = openAIChatTools(gate, { onProblems: (tool, problems) => reported.push([tool, problems]) });
    expect(t!.function.strict).toBe(false);
    expect(t!.function.parameters).toEqual({ type: "object", properties: { a: { type: "string" }, b: { type: "number" } }, additionalProperties: false });
    expect(reported).toHaveLength(1);
    expect(reported[0]![1]).toContain("(root): top-level `anyOf` flattened into one object with every branch's fields optional; the runtime still enforces the union");
    expect(reported[0]![1].at(-1)).toBe("(root): sent without strict mode");
    const a = await answerOpenAIChatToolCall(gate, chatCall("u1", "echo", '{"b":2}'));
    expect(a.result).toMatchObject({ ok: true, data: { b: 2 } });
  });

  it("Anthropic: an input that is not an object throws ToolgateConfigError", () => {
    const gate = createGate({ tools: [echo(z.string())] });
    expect(() => anthropicTools(gate)).toThrow(expect.objectContaining({ code: "E_ADAPTER_SCHEMA" }));
  });

  it("OpenAI: an input that is not an object throws ToolgateConfigError, strict or not (the API takes only object parameters)", () => {
    for (const input of [z.string(), z.array(z.number())]) {
      const gate = createGate({ tools: [echo(input)] });
      for (const strict of [true, false]) {
        expect(() => openAIChatTools(gate, { strict })).toThrow(expect.objectContaining({ code: "E_ADAPTER_SCHEMA" }));
        expect(() => openAIResponsesTools(gate, { strict })).toThrow(expect.objectContaining({ code: "E_ADAPTER_SCHEMA" }));
      }
    }
  });
});

describe("callOptions that throws", () => {
  it("the call does not run; the answer throws CallOptionsError with a fixed message and the error as cause; a session stops", async () => {
    const { gate, service } = setup();
    const session = createLoopPolicy().start();
    const cause = new Error("db password=hunter2 unreachable");
    const callOptions = () => {
      throw cause;
    };
    const failed = answerOpenAIChatToolCall(gate, chatCall("c1", "get_order", '{"customerId":"c_1"}'), { session, callOptions });
    await expect(failed).rejects.toBeInstanceOf(CallOptionsError);
    const e = (await failed.catch((x: unknown) => x)) as CallOptionsError;
    expect(e.cause).toBe(cause);
    expect(e.tool).toBe("get_order");
    expect(e.message).not.toContain("hunter2");
    expect(service.calls.findOrders).toBe(0);
    expect(session.outcome?.action).toBe("stop");
  });
});

describe("call ids", () => {
  it("an empty provider call id lets the gate generate one (no session)", async () => {
    const { gate } = setup();
    const a = await answerAnthropicToolUse(gate, { id: "", name: "get_order", input: { customerId: "c_1" } });
    expect(a.result?.ok).toBe(true);
    expect(a.result?.meta.callId.length).toBeGreaterThan(0);
  });
});
