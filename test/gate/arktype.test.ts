/**
 * ArkType 2.2 end to end through the public API: ArkType types implement Standard Schema
 * (`~standard.validate`) and Standard JSON Schema (`~standard.jsonSchema`), so a tool built from them
 * is validated, listed, served over MCP and checked like a zod one. What breaks is not asserted
 * here as if it were intended (see the findings in the session report: echoes in ArkType messages,
 * `"+": "reject"` keys in messages, `unknownKeys: "strip"` keeping keys, arrays as objects, a Date
 * advertised as `{}`).
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import { type } from "arktype";
import { Ajv2020 } from "ajv/dist/2020.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { createGate, defineTool, type ArgsOf, type CallRecord, type InputOf, type OutputOf, type ToolResult } from "../../src/index.js";
import { createMcpServer, fromCallToolResult, RESULT_META_KEY } from "../../src/mcp/index.js";
import { checkTool, contractProperties } from "../../src/testing/index.js";
import { answerOpenAIChatToolCall, openAIChatTools } from "../../src/adapters/index.js";

const Input = type({ customerId: "string > 0", "includeHistory?": "boolean", limit: "number = 5" });
const Order = type({ id: "string", status: "'pending' | 'paid' | 'cancelled'" });
const Output = type({ found: "boolean", customerId: "string", orders: Order.array() });
type Out = typeof Output.infer;

/** The get_order tool over ArkType schemas; `seen` records each input execute received. */
function getOrderTool(answer: (input: typeof Input.infer) => unknown = (i) => ({ found: true, customerId: i.customerId, orders: [{ id: "o_1", status: "paid" }] })) {
  const seen: unknown[] = [];
  const tool = defineTool({
    name: "get_order",
    version: "1.0.0",
    description: "Look up a customer's orders",
    input: Input,
    output: Output,
    effect: "read",
    execute: (input) => {
      seen.push(input);
      return answer(input) as Out;
    },
  });
  return { tool, seen };
}

function failure(r: ToolResult<unknown>) {
  if (r.ok) throw new Error(`expected a failure, got ${JSON.stringify(r.data)}`);
  return r;
}

/** One read tool around any ArkType input/output. */
function gateOf(input: Parameters<typeof defineTool>[0]["input"], output: Parameters<typeof defineTool>[0]["output"] = type("unknown"), answer: (i: unknown) => unknown = (i) => i) {
  const seen: unknown[] = [];
  const tool = defineTool({ name: "t", version: "1", description: "d", input, output, effect: "read", execute: (i: unknown) => (seen.push(i), answer(i)) as never });
  return { gate: createGate({ tools: [tool] }), seen, tool };
}

describe("ArkType: a read tool's input", () => {
  it("types come from the ArkType schemas: execute sees the default filled, a caller may leave it out", () => {
    const { tool } = getOrderTool();
    expect(tool.input).toBe(Input);
    expectTypeOf<InputOf<typeof tool>>().toEqualTypeOf<{ customerId: string; includeHistory?: boolean; limit: number }>();
    expectTypeOf<ArgsOf<typeof tool>>().toEqualTypeOf<{ customerId: string; includeHistory?: boolean; limit?: number }>();
    expectTypeOf<OutputOf<typeof tool>["orders"][number]["status"]>().toEqualTypeOf<"pending" | "paid" | "cancelled">();
  });

  it("a valid call succeeds with the parsed value: the default is filled in before execute, given values are kept", async () => {
    const { tool, seen } = getOrderTool();
    const gate = createGate({ tools: [tool] });
    const r = await gate.call("get_order", { customerId: "c_1" });
    expect(r.ok ? r.data : failure(r)).toEqual({ found: true, customerId: "c_1", orders: [{ id: "o_1", status: "paid" }] });
    expect(r.meta).toMatchObject({ tool: "get_order", version: "1.0.0", attempts: 1 });
    const text = await gate.call("get_order", '{"customerId":"c_2","includeHistory":true,"limit":3}');
    expect(text.ok).toBe(true);
    expect(seen).toEqual([
      { customerId: "c_1", limit: 5 },
      { customerId: "c_2", includeHistory: true, limit: 3 },
    ]);
  });

  it.each<[string, unknown, string[], string]>([
    ["wrong type", { customerId: 42 }, ["customerId"], "domain"],
    ["missing field", {}, ["customerId"], "required"],
    ["empty string under `string > 0`", { customerId: "" }, ["customerId"], "minLength"],
    ["wrong type of a defaulted field", { customerId: "c_1", limit: "5" }, ["limit"], "domain"],
    ["wrong type of an optional field", { customerId: "c_1", includeHistory: "yes" }, ["includeHistory"], "union"],
    ["extra field (refused by comparing with the advertised schema)", { customerId: "c_1", extra: 1 }, ["extra"], "unrecognized_key"],
    ["two extra fields, one issue each", { customerId: "c_1", a: 1, b: 2 }, ["a", "b"], "unrecognized_key"],
    ["null", null, [""], "domain"],
    ["a number", 7, [""], "domain"],
    // ArkType's object domain includes arrays: an array is an object without the required key.
    ["an array", [], ["customerId"], "required"],
    ["JSON text with a wrong type", '{"customerId":42}', ["customerId"], "domain"],
    ["JSON text that is not JSON", '{"customerId":', [""], "invalid_json"],
    ["JSON text with a duplicate key", '{"customerId":"a","customerId":"b"}', ["customerId"], "duplicate_key"],
  ])("%s: INVALID_INPUT with the path, and the tool never runs", async (_label, payload, paths, code) => {
    const { tool, seen } = getOrderTool();
    const records: CallRecord[] = [];
    const r = failure(await createGate({ tools: [tool], onCall: (rec) => records.push(rec) }).call("get_order", payload));
    expect([r.code, r.retryable, r.effect, r.meta.attempts]).toEqual(["INVALID_INPUT", false, "none", 0]);
    expect(r.issues?.map((i) => i.path)).toEqual(paths);
    expect(r.issues?.[0]?.code).toBe(code);
    expect(seen).toEqual([]);
    expect(records.map((rec) => [rec.code, rec.attempts])).toEqual([["INVALID_INPUT", 0]]);
  });

  it("no issue message repeats a received secret-looking value, though ArkType's own messages do", async () => {
    const secrets = ["correct-horse-battery-staple", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "AKIAIOSFODNN7EXAMPLE"];
    const Contact = type({ email: "string.email", status: "'open' | 'closed'", code: /^[A-Z]{3}$/, flag: "boolean", "n?": "number" });
    const { gate, seen } = gateOf(Contact);
    const order = getOrderTool();
    const orderGate = createGate({ tools: [order.tool] });
    for (const s of secrets) {
      const payloads = [
        { email: s, status: "open", code: "ABC", flag: true },
        { email: "a@b.co", status: s, code: "ABC", flag: true },
        { email: "a@b.co", status: "open", code: s, flag: true },
        { email: "a@b.co", status: "open", code: "ABC", flag: s },
        { email: s, status: s, code: s, flag: s, n: s },
      ];
      for (const p of payloads) {
        // ArkType itself prints the value ("(was \"…\")"): the gate is what keeps it out.
        expect(Contact(p).toString()).toContain(s);
        const r = failure(await gate.call("t", p));
        expect(r.code).toBe("INVALID_INPUT");
        expect(r.issues?.length).toBeGreaterThan(0);
        for (const i of r.issues ?? []) expect(i.message.toLowerCase()).not.toContain(s.toLowerCase());
        expect(JSON.stringify(r)).not.toContain(s);
      }
      const wrong = failure(await orderGate.call("get_order", { customerId: "c_1", includeHistory: s }));
      expect(wrong.issues?.map((i) => [i.path, i.code])).toEqual([["includeHistory", "union"]]);
      // An unknown key is named in the path only (redacted there when it looks like a secret), its value nowhere.
      const unknown = failure(await orderGate.call("get_order", { customerId: "c_1", [s]: s }));
      expect(unknown.issues?.map((i) => [i.code, i.message])).toEqual([["unrecognized_key", "Unknown field"]]);
      for (const o of [wrong, unknown]) for (const i of o.issues ?? []) expect(i.message).not.toContain(s);
    }
    expect([seen, order.seen]).toEqual([[], []]);
  });
});

describe("ArkType: output that breaks the output schema", () => {
  it.each<[string, unknown, string]>([
    ["unknown status", { found: true, customerId: "c_1", orders: [{ id: "o_1", status: "shipped" }] }, "orders.0.status"],
    ["wrong nested type", { found: true, customerId: "c_1", orders: [{ id: 1, status: "paid" }] }, "orders.0.id"],
    ["missing field", { customerId: "c_1", orders: [] }, "found"],
    ["wrong type", { found: "yes", customerId: "c_1", orders: [] }, "found"],
    ["null", null, ""],
    ["an array instead of an object's array", { found: true, customerId: "c_1", orders: {} }, "orders"],
  ])("%s: INVALID_OUTPUT with the path", async (_label, value, path) => {
    const { tool, seen } = getOrderTool(() => value);
    const r = failure(await createGate({ tools: [tool] }).call("get_order", { customerId: "c_1" }));
    expect([r.code, r.retryable, r.effect, r.meta.attempts]).toEqual(["INVALID_OUTPUT", false, "none", 1]);
    expect(r.issues?.map((i) => i.path)).toEqual([path]);
    expect(seen).toHaveLength(1);
  });

  it("a write whose output breaks the ArkType schema reports the effect as applied", async () => {
    const w = defineTool({ name: "w", version: "1", description: "d", input: type({}), output: type({ id: "string" }), effect: "write", execute: () => ({ id: 5 }) as never });
    const r = failure(await createGate({ tools: [w] }).call("w", {}));
    expect([r.code, r.effect, r.issues?.map((i) => i.path)]).toEqual(["INVALID_OUTPUT", "applied", ["id"]]);
  });

  it("a service value that ArkType's message would print is not in the issue", async () => {
    const leaked = "alice.smith@example.com";
    const { gate } = gateOf(type({}), type({ owner: "string.email", state: "'a' | 'b'" }), () => ({ owner: `x ${leaked}`, state: leaked }));
    const r = failure(await gate.call("t", {}));
    expect(r.issues?.map((i) => i.path).sort()).toEqual(["owner", "state"]);
    expect(JSON.stringify(r)).not.toContain(leaked);
  });
});

describe("ArkType: what the gate advertises", () => {
  it("gate.list(): input side with the defaulted field optional and objects closed; output side with every field required", () => {
    const gate = createGate({ tools: [getOrderTool().tool] });
    const [l] = gate.list();
    expect(l?.inputSchema).toMatchObject({
      type: "object",
      properties: { customerId: { type: "string", minLength: 1 }, includeHistory: { type: "boolean" }, limit: { type: "number" } },
      required: ["customerId"],
      additionalProperties: false,
    });
    expect(l?.outputSchema).toMatchObject({
      type: "object",
      properties: { found: { type: "boolean" }, customerId: { type: "string" }, orders: { type: "array", items: { properties: { status: { enum: ["cancelled", "paid", "pending"] } } } } },
    });
    expect([...((l?.outputSchema?.required as string[] | undefined) ?? [])].sort()).toEqual(["customerId", "found", "orders"]);
    expect(l?.outputSchemaError).toBeUndefined();
    expect(Object.isFrozen(l?.inputSchema)).toBe(true);
  });

  it("the advertised input schema (Ajv 2020-12) accepts exactly what the gate accepts", async () => {
    const { tool, seen } = getOrderTool();
    const gate = createGate({ tools: [tool] });
    const validate = new Ajv2020({ strict: false }).compile(gate.list()[0]!.inputSchema);
    const payloads: unknown[] = [
      { customerId: "c_1" },
      { customerId: "c_1", includeHistory: false },
      { customerId: "c_1", limit: 0.5 },
      { customerId: "c_1", includeHistory: true, limit: -3 },
      { customerId: "" },
      { customerId: 1 },
      {},
      { customerId: "c_1", limit: null },
      { customerId: "c_1", includeHistory: "true" },
      { customerId: "c_1", other: true },
      { customerId: ["c_1"] },
      null,
      "c_1",
      [],
    ];
    const verdicts: Array<[string, boolean, boolean]> = [];
    for (const p of payloads) verdicts.push([JSON.stringify(p), validate(p), (await gate.call("get_order", p)).ok]);
    for (const [p, advertised, runtime] of verdicts) expect(runtime, p).toBe(advertised);
    expect(verdicts.filter(([, a]) => a)).toHaveLength(4);
    expect(seen).toHaveLength(4);
  });

  it("over MCP: tools/list carries the ArkType schemas and tools/call answers the envelope", async () => {
    const { tool } = getOrderTool();
    const gate = createGate({ tools: [tool] });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await createMcpServer(gate, { name: "s", version: "1" }).connect(a);
    const client = new Client({ name: "c", version: "1" });
    await client.connect(b);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(["get_order"]);
      expect(tools[0]?.inputSchema).toEqual(gate.list()[0]?.inputSchema);
      expect(tools[0]?.outputSchema).toMatchObject({ type: "object", required: expect.arrayContaining(["found", "customerId", "orders"]) });
      expect(tools[0]?.annotations?.readOnlyHint).toBe(true);

      const ok = await client.callTool({ name: "get_order", arguments: { customerId: "c_9" } });
      expect(ok.isError).toBeFalsy();
      expect(ok.structuredContent).toEqual({ found: true, customerId: "c_9", orders: [{ id: "o_1", status: "paid" }] });
      expect(fromCallToolResult(ok)).toMatchObject({ ok: true, meta: { tool: "get_order", attempts: 1 } });

      const bad = await client.callTool({ name: "get_order", arguments: { customerId: 9, extra: true } });
      expect(bad.isError).toBe(true);
      expect(bad._meta?.[RESULT_META_KEY]).toMatchObject({ ok: false, code: "INVALID_INPUT", issues: [{ path: "customerId" }] });
    } finally {
      await client.close();
    }
  });

  it("OpenAI strict mode: every field listed, the optional and defaulted ones nullable, and a null maps back to absent", async () => {
    const { tool, seen } = getOrderTool();
    const gate = createGate({ tools: [tool] });
    const [def] = openAIChatTools(gate);
    expect(def?.function.strict).toBe(true);
    const params = def?.function.parameters as { required: string[]; properties: Record<string, unknown> };
    expect([...params.required].sort()).toEqual(["customerId", "includeHistory", "limit"]);
    const call = { id: "call_1", type: "function" as const, function: { name: "get_order", arguments: '{"customerId":"c_3","includeHistory":null,"limit":null}' } };
    const answer = await answerOpenAIChatToolCall(gate, call);
    expect(answer.result?.ok).toBe(true);
    expect(seen).toEqual([{ customerId: "c_3", limit: 5 }]);
  });
});

describe("ArkType: contractProperties for a well-behaved tool", () => {
  const { tool } = getOrderTool();
  for (const p of contractProperties(tool, { runs: 60, drift: { runs: 100 } })) {
    it(p.name, async () => {
      const r = await p.run();
      expect(r.message).toBe("");
      expect(r.ok).toBe(true);
    });
  }
});

describe("ArkType features through the gate", () => {
  it("a morph (pipe): execute gets the piped value; the advertised and enforced input is the pipe's input", async () => {
    const { gate, seen } = gateOf(type({ text: type("string").pipe((s) => s.length) }));
    expect(gate.list()[0]?.inputSchema).toMatchObject({ properties: { text: { type: "string" } }, required: ["text"] });
    const ok = await gate.call("t", { text: "abcd" });
    expect(ok.ok ? ok.data : failure(ok)).toEqual({ text: 4 });
    const bad = failure(await gate.call("t", { text: 4 }));
    expect([bad.code, bad.issues?.map((i) => i.path)]).toEqual(["INVALID_INPUT", ["text"]]);
    expect(seen).toEqual([{ text: 4 }]);
  });

  it("a built-in parse morph (`string.numeric.parse`) and an output morph", async () => {
    const { gate, seen } = gateOf(type({ n: "string.numeric.parse" }), type({ doubled: type("number").pipe((n) => n * 2) }), (i) => ({ doubled: (i as { n: number }).n }));
    const ok = await gate.call("t", { n: "21" });
    expect(ok.ok ? ok.data : failure(ok)).toEqual({ doubled: 42 });
    const bad = failure(await gate.call("t", { n: "21 apples" }));
    expect([bad.code, bad.issues?.map((i) => [i.path, i.code])]).toEqual(["INVALID_INPUT", [["n", "pattern"]]]);
    expect(bad.issues?.[0]?.message).not.toContain("21 apples");
    expect(seen).toEqual([{ n: 21 }]);
  });

  it("a narrow predicate on a field: refused with the path before execute; the schema cannot say it, and the drift check reports it", async () => {
    const Even = type({ qty: type("0 <= number.integer <= 100").narrow((n) => n % 2 === 0) });
    const { gate, seen, tool } = gateOf(Even);
    expect((await gate.call("t", { qty: 4 })).ok).toBe(true);
    const odd = failure(await gate.call("t", { qty: 3 }));
    expect([odd.code, odd.issues?.map((i) => [i.path, i.code])]).toEqual(["INVALID_INPUT", [["qty", "predicate"]]]);
    expect(seen).toEqual([{ qty: 4 }]);
    // The advertised schema accepts 3: the contract differs there, and `toolgate check` says so.
    expect(new Ajv2020({ strict: false }).compile(gate.list()[0]!.inputSchema)({ qty: 3 })).toBe(true);
    const report = await checkTool(tool, { runs: 150, seed: 1, targets: ["mcp"] });
    const drift = report.targets[0]?.findings.filter((f) => f.kind === "drift") ?? [];
    expect(drift.map((f) => f.kind === "drift" && [f.path, f.accepted])).toContainEqual(["qty", "advertised"]);
  });

  it("union types: a union of primitives and a discriminated union of objects, with paths into the branch", async () => {
    const Shape = type({
      id: "string | number",
      shape: type({ kind: "'circle'", r: "number > 0" }).or({ kind: "'rect'", w: "number", h: "number" }),
    });
    const { gate, seen } = gateOf(Shape);
    expect(gate.list()[0]?.inputSchema).toMatchObject({ properties: { id: { anyOf: expect.any(Array) }, shape: { anyOf: expect.any(Array) } } });
    expect((await gate.call("t", { id: 1, shape: { kind: "circle", r: 2 } })).ok).toBe(true);
    expect((await gate.call("t", { id: "a", shape: { kind: "rect", w: 1, h: 2 } })).ok).toBe(true);
    const cases: Array<[unknown, string[]]> = [
      [{ id: true, shape: { kind: "circle", r: 2 } }, ["id"]],
      [{ id: 1, shape: { kind: "square", r: 2 } }, ["shape.kind"]],
      [{ id: 1, shape: { kind: "circle", r: 0 } }, ["shape.r"]],
      [{ id: 1, shape: { kind: "rect", w: 1 } }, ["shape.h"]],
    ];
    for (const [p, paths] of cases) {
      const r = failure(await gate.call("t", p));
      expect([r.code, r.issues?.map((i) => i.path)], JSON.stringify(p)).toEqual(["INVALID_INPUT", paths]);
    }
    // A key no branch declares is refused at its path. (The other branch's keys are reported with it
    // today: the unknown-key check reads every anyOf branch — a finding of its own, not ArkType's.)
    const extra = failure(await gate.call("t", { id: 1, shape: { kind: "circle", r: 1, colour: "red" } }));
    expect([extra.code, extra.issues?.map((i) => i.path)]).toEqual(["INVALID_INPUT", expect.arrayContaining(["shape.colour"])]);
    expect(seen).toHaveLength(2);
  });

  it("optional keys: absent stays absent, a nullable one takes null, and neither is required by the advertised schema", async () => {
    const { gate, seen } = gateOf(type({ q: "string", "note?": "string", "max?": "number | null" }));
    const l = gate.list()[0]!;
    expect(l.inputSchema.required).toEqual(["q"]);
    expect((await gate.call("t", { q: "a" })).ok).toBe(true);
    expect((await gate.call("t", { q: "a", max: null, note: "n" })).ok).toBe(true);
    expect(seen).toEqual([{ q: "a" }, { q: "a", max: null, note: "n" }]);
    expect(Object.hasOwn(seen[0] as object, "note")).toBe(false);
    const bad = failure(await gate.call("t", { q: "a", note: 1, max: "x" }));
    expect(bad.issues?.map((i) => i.path).sort()).toEqual(["max", "note"]);
  });

  it('`"string.email"`: advertised with its pattern and format; a non-address is refused at its path', async () => {
    const { gate, seen } = gateOf(type({ email: "string.email" }));
    expect(gate.list()[0]?.inputSchema).toMatchObject({ properties: { email: { type: "string", format: "email", pattern: expect.any(String) } } });
    expect((await gate.call("t", { email: "ada@example.com" })).ok).toBe(true);
    const bad = failure(await gate.call("t", { email: "ada at example" }));
    expect([bad.code, bad.issues?.map((i) => [i.path, i.code])]).toEqual(["INVALID_INPUT", [["email", "pattern"]]]);
    expect(seen).toEqual([{ email: "ada@example.com" }]);
  });

  it('a closed ArkType object (`"+": "reject"`): an undeclared key is refused at its path, as the gate\'s own check would', async () => {
    const { gate, seen } = gateOf(type({ "+": "reject", a: "string" }));
    const r = failure(await gate.call("t", { a: "x", extra: 1 }));
    expect([r.code, r.issues?.map((i) => i.path)]).toEqual(["INVALID_INPUT", ["extra"]]);
    expect(seen).toEqual([]);
  });

  it('output: an ArkType object keeps undeclared keys (they reach the agent) unless it says `"+": "delete"`', async () => {
    const answer = () => ({ ok: true, internalNote: "n" });
    const open = await gateOf(type({}), type({ ok: "boolean" }), answer).gate.call("t", {});
    const deleting = await gateOf(type({}), type({ "+": "delete", ok: "boolean" }), answer).gate.call("t", {});
    expect(open.ok ? open.data : failure(open)).toEqual({ ok: true, internalNote: "n" });
    expect(deleting.ok ? deleting.data : failure(deleting)).toEqual({ ok: true });
  });

  it("an output ArkType accepts but JSON cannot carry (a Map under `unknown`) is INVALID_OUTPUT with the path", async () => {
    const { gate } = gateOf(type({}), type({ data: "unknown" }), () => ({ data: new Map([["k", 1]]) }));
    const r = failure(await gate.call("t", {}));
    expect([r.code, r.issues?.map((i) => i.path)]).toEqual(["INVALID_OUTPUT", ["data"]]);
  });
});

describe("ArkType: what JSON Schema cannot express", () => {
  const t = (input: Parameters<typeof defineTool>[0]["input"], output: Parameters<typeof defineTool>[0]["output"] = type({})) =>
    defineTool({ name: "t", version: "1", description: "d", input, output, effect: "read", execute: () => ({}) as never });

  it("an input that cannot be advertised (a Date) is a configuration error, as zod's z.date() is, never advertised as {}", () => {
    expect(() => createGate({ tools: [t(type({ when: "Date" }))] })).toThrow(expect.objectContaining({ code: "E_GATE_SCHEMA", message: expect.stringMatching(/ArkType: date/) }));
  });

  it("an output that cannot be advertised (a morph's result, a Date) has outputSchemaError, no outputSchema", () => {
    const listing = createGate({ tools: [t(type({}), type({ at: "Date" }))] }).list()[0]!;
    expect(listing.outputSchema).toBeUndefined();
    expect(listing.outputSchemaError).toMatch(/cannot be represented/);
  });

  it("what JSON Schema can express is still served: two patterns on a string, an optional key that may be undefined", async () => {
    const gate = createGate({ tools: [t(type({ code: type(/^a/).and(/b$/), "note?": "string | undefined" }))] });
    expect(gate.list()[0]!.inputSchema).toMatchObject({ properties: { code: { type: "string", pattern: "^a", allOf: [{ pattern: "b$" }] } }, required: ["code"] });
    expect((await gate.call("t", { code: "axb", note: "n" })).ok).toBe(true);
    expect(await gate.call("t", { code: "ax" })).toMatchObject({ ok: false, code: "INVALID_INPUT", issues: [{ path: "code" }] });
  });

  it("a narrow is advertised as its base type (looser than the runtime, as a zod refine is)", () => {
    const listing = createGate({ tools: [t(type({ qty: type("number").narrow((n) => n % 2 === 0) }))] }).list()[0]!;
    expect(listing.inputSchema).toMatchObject({ type: "object", properties: { qty: { type: "number" } }, required: ["qty"] });
  });
});
