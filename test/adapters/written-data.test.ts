/**
 * What leaves the process is JSON: a success's data as JSON writes it (a Date as its ISO string),
 * and a value that fails when it is written — checked by the gate, then failing on a later read
 * (a live handle's toJSON) — answers an envelope or an error, never a throw or a request left
 * unanswered.
 */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import type { LanguageModelV3GenerateResult } from "@ai-sdk/provider";
import { z } from "zod";
import { createGate, defineTool } from "../../src/index.js";
import { aiSdkTools, answerAnthropicToolUse, answerOpenAIChatToolCall } from "../../src/adapters/index.js";
import { createLoopPolicy } from "../../src/loop/index.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { createMcpServer, RESULT_META_KEY, serveHttp, serveStdio, toCallToolResult } from "../../src/mcp/index.js";
import { createCallLog } from "../../src/log/index.js";
import { captureValue } from "../../src/log/_capture.js";
import { createRedactor } from "../../src/redact.js";

/** Backed by a live resource: written `reads` times, then it throws (the handle closed). */
const liveHandle = (reads: number) => {
  let n = 0;
  return {
    toJSON: () => {
      if (++n > reads) throw new Error("handle closed");
      return { rows: 3 };
    },
  };
};
const handleTool = (name: string, reads: number, effect: "read" | "write") =>
  defineTool({ name, version: "1", description: "d", input: z.object({}), output: z.object({ result: z.any() }), effect, execute: () => ({ result: liveHandle(reads) }) });

describe("the provider adapters", () => {
  it("answer INVALID_OUTPUT for data that fails when written, and the session observes that answer", async () => {
    const gate = createGate({ tools: [handleTool("live", 1, "write")] });
    const session = createLoopPolicy().start();
    const anthropic = await answerAnthropicToolUse(gate, { id: "tu_1", name: "live", input: {} }, { session });
    expect(anthropic.block).toMatchObject({ type: "tool_result", tool_use_id: "tu_1", is_error: true });
    expect(JSON.parse(anthropic.block.content as string)).toMatchObject({ ok: false, code: "INVALID_OUTPUT", effect: "applied" });
    expect(session.steps.map((s) => [s.result?.ok, s.decision.action])).toEqual([[false, "stop"]]);
    const openai = await answerOpenAIChatToolCall(createGate({ tools: [handleTool("live", 1, "read")] }), { id: "c_1", type: "function", function: { name: "live", arguments: "{}" } });
    expect(JSON.parse(openai.message.content as string)).toMatchObject({ ok: false, code: "INVALID_OUTPUT", effect: "none" });
  });

  it("show the model a Date as its ISO string, so the AI SDK's next turn accepts its own messages", async () => {
    const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
    const call: LanguageModelV3GenerateResult = { content: [{ type: "tool-call", toolCallId: "c1", toolName: "get_order", input: '{"id":"o_1"}' }], finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage, warnings: [] };
    const done: LanguageModelV3GenerateResult = { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
    const getOrder = defineTool({
      name: "get_order",
      version: "1",
      description: "d",
      input: z.object({ id: z.string() }),
      effect: "read",
      output: z.object({ id: z.string(), createdAt: z.date() }),
      execute: ({ id }) => ({ id, createdAt: new Date("2026-01-02T03:04:05Z") }),
    });
    const gate = createGate({ tools: [getOrder] });
    let n = 0;
    const model = new MockLanguageModelV3({ doGenerate: async () => (++n === 1 ? call : done) });
    const turn1 = await generateText({ model, prompt: "show order o_1", tools: aiSdkTools(gate), stopWhen: stepCountIs(3) });
    const shown = turn1.steps[0]!.content.find((p) => p.type === "tool-result");
    expect(shown?.type === "tool-result" ? shown.output : undefined).toEqual({ ok: true, data: { id: "o_1", createdAt: "2026-01-02T03:04:05.000Z" } });
    const turn2 = await generateText({ model, messages: [{ role: "user", content: "show order o_1" }, ...turn1.response.messages, { role: "user", content: "and now?" }], tools: aiSdkTools(gate) });
    expect(turn2.text).toBe("done");
  });

  it("keep the gate's own envelope as `result` (a Date is still a Date) while the model is shown its JSON", async () => {
    const at = new Date("2026-01-02T03:04:05Z");
    const t = defineTool({ name: "when", version: "1", description: "d", input: z.object({}), output: z.object({ at: z.date() }), effect: "read", execute: () => ({ at }) });
    const answer = await answerOpenAIChatToolCall(createGate({ tools: [t] }), { id: "c_1", type: "function", function: { name: "when", arguments: "{}" } });
    expect(answer.result).toMatchObject({ ok: true, data: { at } });
    expect(answer.result?.ok === true && (answer.result.data as { at: unknown }).at).toBeInstanceOf(Date);
    expect(answer.view).toEqual({ ok: true, data: { at: "2026-01-02T03:04:05.000Z" } });
  });

  it("show no data for a root toJSON that answers undefined (the AI SDK could not clone the value)", async () => {
    const t = defineTool({ name: "nothing", version: "1", description: "d", input: z.object({}), output: z.any(), effect: "read", execute: () => ({ toJSON: () => undefined }) });
    const answer = await answerOpenAIChatToolCall(createGate({ tools: [t] }), { id: "c_1", type: "function", function: { name: "nothing", arguments: "{}" } });
    expect(answer.view).toEqual({ ok: true, data: undefined });
    expect(() => structuredClone(answer.view)).not.toThrow();
  });
});

describe("MCP", () => {
  it("toCallToolResult answers an INVALID_OUTPUT envelope for data that fails when written, with the tool's effect", () => {
    const meta = { tool: "t", version: "1", callId: "c", attempts: 1, durationMs: 1 };
    const broken = { ok: true as const, data: { n: { toJSON: () => { throw new Error("closed"); } } }, meta };
    expect(toCallToolResult(broken, true, "write")).toMatchObject({ isError: true, _meta: { [RESULT_META_KEY]: { code: "INVALID_OUTPUT", effect: "applied", meta } } });
    expect(toCallToolResult(broken, true)._meta?.[RESULT_META_KEY]).toMatchObject({ effect: "unknown" });
  });

  it("a structured tool's data that JSON does not write as an object (its own toJSON answers an array) is INVALID_OUTPUT, not a success without structuredContent", async () => {
    const meta = { tool: "t", version: "1", callId: "c", attempts: 1, durationMs: 1 };
    const reshaped = { ok: true as const, data: { a: 1, toJSON: () => [1, 2] }, meta };
    expect(toCallToolResult(reshaped, true, "read")).toMatchObject({ isError: true, _meta: { [RESULT_META_KEY]: { code: "INVALID_OUTPUT", effect: "none", meta } } });
    expect(toCallToolResult(reshaped, false, "read")).toMatchObject({ content: [{ type: "text", text: "[1,2]" }] }); // no outputSchema: the text is the answer
    // Through the official client, which refuses a success without structuredContent from a tool with an outputSchema.
    const tool = defineTool({ name: "reshaped", version: "1", description: "d", effect: "read", input: z.object({}), output: z.looseObject({ a: z.number() }), execute: () => ({ a: 1, toJSON: () => "s" }) });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await createMcpServer(createGate({ tools: [tool] }), { name: "s", version: "1" }).connect(a);
    const client = new Client({ name: "c", version: "1" });
    await client.connect(b);
    try {
      await client.listTools();
      const r = await client.callTool({ name: "reshaped", arguments: {} });
      expect(r).toMatchObject({ isError: true, _meta: { [RESULT_META_KEY]: { code: "INVALID_OUTPUT", effect: "none" } } });
      expect(r.structuredContent).toBeUndefined();
    } finally {
      await client.close();
    }
  });

  it("over stdio, every request is answered: an envelope when the text fails; the transport writes the text's JSON, never reading the value again", async () => {
    const gate = createGate({ tools: [handleTool("second_read_fails", 1, "write"), handleTool("third_read_fails", 2, "read")] });
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const answers = new Map<number, Record<string, unknown>>();
    let buf = "";
    stdout.on("data", (c: Buffer) => {
      buf += c.toString();
      for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
        const m = JSON.parse(buf.slice(0, i)) as { id: number } & Record<string, unknown>;
        answers.set(m.id, m);
        buf = buf.slice(i + 1);
      }
    });
    const server = createMcpServer(gate, { name: "s", version: "1" });
    const errors: string[] = [];
    const handle = await serveStdio(server, { stdin, stdout });
    server.onerror = (e) => void errors.push(e.message);
    const send = (m: object) => stdin.write(JSON.stringify(m) + "\n");
    send({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "c", version: "1" } } });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "second_read_fails", arguments: {} } });
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "third_read_fails", arguments: {} } });
    try {
      for (let i = 0; i < 200 && !(answers.has(1) && answers.has(2)); i++) await new Promise((r) => setTimeout(r, 10));
      expect(answers.get(1)).toMatchObject({ result: { isError: true, _meta: { [RESULT_META_KEY]: { code: "INVALID_OUTPUT", effect: "applied" } } } });
      expect(answers.get(2)).toMatchObject({ result: { structuredContent: { result: { rows: 3 } } } });
      expect(errors).toEqual([]);
    } finally {
      await handle.close();
    }
  });
});

describe("MCP over HTTP", () => {
  it("a value that would fail on the transport's read is answered from its text (the SDK's HTTP transport drops an answer it cannot write)", async () => {
    const gate = createGate({ tools: [handleTool("third_read_fails", 2, "read")] });
    const http = await serveHttp(() => createMcpServer(gate, { name: "s", version: "1" }), { port: 0 });
    const client = new Client({ name: "c", version: "1" });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(http.url)));
      const r = await client.callTool({ name: "third_read_fails", arguments: {} }, undefined, { timeout: 5_000 });
      expect(r).toMatchObject({ structuredContent: { result: { rows: 3 } } });
      expect(r.isError).toBeUndefined();
    } finally {
      await client.close();
      await http.close();
    }
  });
});

describe("result capture", () => {
  it("records what JSON writes: a Date as its string, and a field a class's toJSON hides stays out of the log", async () => {
    class Customer {
      constructor(
        readonly id: string,
        readonly taxNumber: string,
      ) {}
      toJSON(): { id: string } {
        return { id: this.id };
      }
    }
    const tool = defineTool({
      name: "get_customer",
      version: "1",
      description: "d",
      input: z.object({}),
      effect: "read",
      output: z.object({ at: z.date(), customer: z.instanceof(Customer) }),
      execute: () => ({ at: new Date("2026-01-02T03:04:05Z"), customer: new Customer("c_1", "DE123456789") }),
    });
    const lines: string[] = [];
    const log = createCallLog({ sink: (l) => void lines.push(l), capture: { result: true } });
    const gate = log.instrument(createGate({ tools: [tool], ...log.hooks }));
    expect((await gate.call("get_customer", {})).ok).toBe(true);
    const captured = JSON.parse((JSON.parse(lines[0]!) as Record<string, string>)["gen_ai.tool.call.result"]!) as unknown;
    expect(captured).toEqual({ at: "2026-01-02T03:04:05.000Z", customer: { id: "c_1" } });
    expect(lines.join("\n")).not.toContain("DE123456789");
  });

  it("leaves out the keys JSON leaves out, and writes null where JSON does in an array", () => {
    class Hidden {
      toJSON(): undefined {
        return undefined;
      }
    }
    const data = { a: 1, hidden: new Hidden(), gone: undefined, f: () => 1, list: [1, new Hidden(), () => 2], own: { b: 2, toJSON(this: object) { return { b: 2 }; } } };
    const captured = captureValue(data, undefined, createRedactor(), 10_000);
    expect(captured).toBe(JSON.stringify(data));
    expect(captured).toBe('{"a":1,"list":[1,null,null],"own":{"b":2}}');
  });
});
