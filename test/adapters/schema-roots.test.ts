import { describe, it, expect } from "vitest";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import type { LanguageModelV3GenerateResult } from "@ai-sdk/provider";
import { z } from "zod";
import { createGate, defineTool, type Gate } from "../../src/index.js";
import { aiSdkTools, anthropicTools, answerOpenAIChatToolCall, openAIAgentsTools, openAIChatTools, openAIResponsesTools } from "../../src/adapters/index.js";

type Node = Record<string, unknown>;

const echo = (name: string, input: z.ZodType) =>
  defineTool({ name, version: "1", description: "Echo", input, output: z.unknown(), effect: "read", execute: (v: unknown) => v });

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
const done: LanguageModelV3GenerateResult = { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };

/** OpenAI's rule for `parameters` (and Anthropic's for `input_schema`): an object root, no top-level union, enum or not. */
function rootOk(schema: unknown): boolean {
  const s = schema as Node;
  return s.type === "object" && ["anyOf", "oneOf", "allOf", "enum", "not"].every((k) => !(k in s));
}

/** Paths of sub-schemas without a type (strict mode refuses them). */
function typeless(node: unknown, path = "(root)", out: string[] = []): string[] {
  if (typeof node !== "object" || node === null) return out;
  const n = node as Node;
  if (!["type", "anyOf", "$ref", "const", "enum"].some((k) => k in n)) out.push(path);
  for (const [k, v] of Object.entries((n.properties as Node | undefined) ?? {})) typeless(v, `${path}.${k}`, out);
  if (n.items !== undefined) typeless(n.items, `${path}[]`, out);
  for (const b of (n.anyOf as unknown[] | undefined) ?? []) typeless(b, `${path}|`, out);
  return out;
}

/** What every adapter hands the provider for the gate's one tool: the schema, the strict flag and the reported problems. */
async function sent(gate: Gate): Promise<Array<{ via: string; schema: unknown; strict: boolean; problems: readonly string[] }>> {
  const out: Array<{ via: string; schema: unknown; strict: boolean; problems: readonly string[] }> = [];
  let problems: readonly string[] = [];
  const onProblems = (_tool: string, p: readonly string[]): void => void (problems = p);
  for (const strict of [true, false]) {
    problems = [];
    const chat = openAIChatTools(gate, { strict, onProblems })[0]!.function;
    out.push({ via: `chat strict=${strict}`, schema: chat.parameters, strict: chat.strict === true, problems });
    problems = [];
    const resp = openAIResponsesTools(gate, { strict, onProblems })[0]!;
    out.push({ via: `responses strict=${strict}`, schema: resp.parameters, strict: resp.strict === true, problems });
    problems = [];
    const agents = (await openAIAgentsTools(gate, { strict, onProblems }))[0] as unknown as { parameters: unknown; strict: boolean };
    out.push({ via: `agents strict=${strict}`, schema: agents.parameters, strict: agents.strict, problems });
    problems = [];
    const model = new MockLanguageModelV3({ doGenerate: async () => done });
    await generateText({ model, prompt: "p", tools: aiSdkTools(gate, { strict, onProblems }), stopWhen: stepCountIs(1) });
    const tool = model.doGenerateCalls[0]!.tools![0] as unknown as { inputSchema: unknown; strict?: boolean };
    out.push({ via: `ai sdk strict=${strict}`, schema: tool.inputSchema, strict: tool.strict === true, problems });
  }
  problems = [];
  const anth = anthropicTools(gate, { onProblems })[0]!;
  out.push({ via: "anthropic", schema: anth.input_schema, strict: false, problems });
  return out;
}

async function builds(gate: Gate): Promise<Array<[string, unknown]>> {
  const attempts: Array<[string, () => unknown]> = [
    ["chat", () => openAIChatTools(gate)],
    ["chat strict=false", () => openAIChatTools(gate, { strict: false })],
    ["responses", () => openAIResponsesTools(gate)],
    ["agents", () => openAIAgentsTools(gate)],
    ["ai sdk", () => aiSdkTools(gate)],
    ["ai sdk strict", () => aiSdkTools(gate, { strict: true })],
    ["anthropic", () => anthropicTools(gate)],
  ];
  const out: Array<[string, unknown]> = [];
  for (const [via, build] of attempts) {
    try {
      await build();
      out.push([via, "built"]);
    } catch (e) {
      out.push([via, (e as { code?: unknown }).code]);
    }
  }
  return out;
}

describe("every adapter sends an object root or refuses the tool when it is built", () => {
  it.each([
    ["z.union", z.union([z.object({ a: z.string() }), z.object({ b: z.number() })])],
    ["z.discriminatedUnion", z.discriminatedUnion("kind", [z.object({ kind: z.literal("cat"), lives: z.number().int() }), z.object({ kind: z.literal("dog"), good: z.boolean() })])],
  ])("a root %s of objects is flattened into one object, non-strict, and reported", async (_name, input) => {
    const gate = createGate({ tools: [echo("pick", input)] });
    for (const s of await sent(gate)) {
      expect({ via: s.via, rootOk: rootOk(s.schema), strict: s.strict }).toEqual({ via: s.via, rootOk: true, strict: false });
      expect(s.problems, s.via).toContainEqual(expect.stringMatching(/^\(root\): top-level `(anyOf|oneOf)` flattened into one object/));
      if (s.via.includes("strict=true")) expect(s.problems.at(-1), s.via).toBe("(root): sent without strict mode");
    }
  });

  it("a union nested in a union (a.or(b).or(c)) is flattened too, with every leaf's fields", async () => {
    const input = z.object({ orderId: z.string() }).or(z.object({ email: z.string() })).or(z.object({ phone: z.string() }));
    const gate = createGate({ tools: [echo("find_customer", input)] });
    expect(JSON.stringify(gate.list()[0]!.inputSchema)).toContain('"anyOf":[{"anyOf":[');
    for (const s of await sent(gate)) {
      expect({ via: s.via, rootOk: rootOk(s.schema), strict: s.strict }).toEqual({ via: s.via, rootOk: true, strict: false });
      expect(Object.keys((s.schema as Node).properties as Node), s.via).toEqual(["orderId", "email", "phone"]);
      expect((s.schema as Node).required, s.via).toBeUndefined();
      expect(s.problems, s.via).toContainEqual(expect.stringMatching(/^\(root\): top-level `anyOf` flattened into one object/));
    }
  });

  it("an object behind a root $ref (z.object().meta({ id })) is sent as that object, its $defs kept for inner refs", async () => {
    const Thing: z.ZodType = z.object({ name: z.string(), parts: z.array(z.lazy(() => Thing)).optional() }).meta({ id: "Thing" });
    const gate = createGate({ tools: [echo("thing", Thing)] });
    expect(gate.list()[0]!.inputSchema.$ref).toBe("#/$defs/Thing");
    for (const s of await sent(gate)) {
      const schema = s.schema as Node;
      expect({ via: s.via, rootOk: rootOk(schema), $ref: schema.$ref }).toEqual({ via: s.via, rootOk: true, $ref: undefined });
      expect(Object.keys(schema.properties as Node), s.via).toEqual(["name", "parts"]);
      expect(schema.required, s.via).toEqual(["name"]);
      // The inner ref still resolves: the root's $defs (or draft-07 definitions, for the AI SDK) came along.
      const defs = (schema.$defs ?? schema.definitions) as Node;
      expect(Object.keys(defs), s.via).toContain("Thing");
      expect(s.problems.filter((p) => p.includes("flattened")), s.via).toEqual([]);
    }
    const call = (args: string) => answerOpenAIChatToolCall(gate, { id: "c", type: "function", function: { name: "thing", arguments: args } });
    expect((await call('{"name":"a","parts":[{"name":"b"}]}')).result).toMatchObject({ ok: true });
    expect((await call('{"parts":[]}')).result).toMatchObject({ ok: false, code: "INVALID_INPUT" });
  });

  it("the gate still enforces the union behind a flattened definition", async () => {
    const gate = createGate({ tools: [echo("pick", z.union([z.object({ a: z.string() }), z.object({ b: z.number() })]))] });
    const call = (args: string) => answerOpenAIChatToolCall(gate, { id: "c", type: "function", function: { name: "pick", arguments: args } });
    expect((await call('{"b":2}')).result).toMatchObject({ ok: true, data: { b: 2 } });
    expect((await call("{}")).result).toMatchObject({ ok: false, code: "INVALID_INPUT" });
  });

  it.each([
    ["a nullable object", z.object({ a: z.string() }).nullable()],
    ["an object or a string", z.union([z.object({ a: z.string() }), z.string()])],
    ["a nested union with a null leaf", z.object({ a: z.string() }).or(z.object({ b: z.number() }).nullable())],
    ["a string", z.string()],
    ["an array", z.array(z.number())],
  ])("%s throws E_ADAPTER_SCHEMA in every adapter, the AI SDK's included", async (_name, input) => {
    const gate = createGate({ tools: [echo("odd", input)] });
    expect(await builds(gate)).toEqual([
      ["chat", "E_ADAPTER_SCHEMA"],
      ["chat strict=false", "E_ADAPTER_SCHEMA"],
      ["responses", "E_ADAPTER_SCHEMA"],
      ["agents", "E_ADAPTER_SCHEMA"],
      ["ai sdk", "E_ADAPTER_SCHEMA"],
      ["ai sdk strict", "E_ADAPTER_SCHEMA"],
      ["anthropic", "E_ADAPTER_SCHEMA"],
    ]);
  });

  it("an object input is sent as it was (strict where asked), with nothing reported", async () => {
    const gate = createGate({ tools: [echo("plain", z.object({ a: z.string(), n: z.number().optional() }))] });
    for (const s of await sent(gate)) {
      expect({ via: s.via, rootOk: rootOk(s.schema), strict: s.strict, problems: s.problems }).toEqual({ via: s.via, rootOk: true, strict: s.via.includes("strict=true"), problems: [] });
    }
  });
});

describe("a strict definition never carries a sub-schema without a type", () => {
  it("fields that accept any value (z.any, z.unknown, an array of z.unknown) send the tool non-strict, reported", async () => {
    const gate = createGate({ tools: [echo("save_note", z.object({ text: z.string(), metadata: z.any(), tags: z.array(z.unknown()) }))] });
    for (const s of (await sent(gate)).filter((x) => x.via.includes("strict=true"))) {
      expect({ via: s.via, strict: s.strict }).toEqual({ via: s.via, strict: false });
      expect(s.problems, s.via).toEqual([
        "metadata: accepts any value; strict mode needs a type there",
        "tags.*: accepts any value; strict mode needs a type there",
        "(root): sent without strict mode",
      ]);
    }
  });

  it("a field whose only keyword strict mode removes (z.never) is no longer sent strict with {} in its place", async () => {
    const gate = createGate({ tools: [echo("never", z.object({ x: z.never().optional(), y: z.string() }))] });
    for (const s of (await sent(gate)).filter((x) => x.via.includes("strict=true"))) {
      expect({ via: s.via, strict: s.strict }).toEqual({ via: s.via, strict: false });
      expect(s.problems, s.via).toContain("x: accepts any value; strict mode needs a type there");
    }
  });

  it("every definition that is sent strict has a type in every sub-schema", async () => {
    const gate = createGate({
      tools: [echo("mixed", z.object({ id: z.string(), note: z.string().optional(), tags: z.array(z.object({ k: z.enum(["a", "b"]) })), kind: z.literal("x").optional() }))],
    });
    const strict = (await sent(gate)).filter((s) => s.strict);
    expect(strict.map((s) => s.via)).toEqual(["chat strict=true", "responses strict=true", "agents strict=true", "ai sdk strict=true"]);
    for (const s of strict) expect(typeless(s.schema), s.via).toEqual([]);
  });
});
