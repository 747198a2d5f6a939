import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { fromCallToolResult } from "../../src/mcp/index.js";
import { CallMetaSchema, FailureSchema, connectServe, fixture } from "./helpers.js";

type CallResult = Awaited<ReturnType<Client["callTool"]>>;

function failureOf(res: CallResult) {
  expect(res.isError).toBe(true);
  expect(res.structuredContent).toBeUndefined();
  const env = FailureSchema.parse((res._meta as Record<string, unknown>)["toolgate/result"]);
  const content = res.content as { type: string; text: string }[];
  expect(content).toHaveLength(1);
  expect(content[0]!.type).toBe("text");
  const [first, ...rest] = content[0]!.text.split("\n");
  expect(first).toBe(`${env.code}: ${env.message}`);
  expect(JSON.parse(rest.join("\n"))).toEqual(env);
  expect(fromCallToolResult(res)).toEqual(env);
  return env;
}

describe("toolgate serve over stdio, official v1 client", () => {
  let client: Client;
  beforeAll(async () => {
    client = await connectServe("examples/orders/index.ts");
  });
  afterAll(async () => {
    await client?.close();
  });

  it("lists the example tools with input-side schemas and annotations from the effect", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["get_order", "create_refund"]);
    const get = tools[0]!;
    expect(get.inputSchema).toMatchObject({ type: "object", required: ["customerId"], additionalProperties: false });
    expect(get.outputSchema).toMatchObject({ type: "object", required: ["found", "customerId", "orders"] });
    expect(get.annotations).toEqual({ readOnlyHint: true, destructiveHint: false, idempotentHint: true });
    expect(tools[1]!.annotations?.readOnlyHint).toBe(false);
    expect(get._meta).toEqual({ "toolgate/tool": { version: "1.0.0", effect: "read", approval: false } });
  });

  it("a valid call: structuredContent is the data and the text block is the same JSON", async () => {
    const res = await client.callTool({ name: "get_order", arguments: { customerId: "c_1" } });
    expect(res.isError).toBeFalsy();
    expect(res.structuredContent).toEqual({
      found: true,
      customerId: "c_1",
      orders: [
        { id: "o_100", status: "paid" },
        { id: "o_101", status: "pending" },
      ],
    });
    expect(JSON.parse((res.content as { text: string }[])[0]!.text)).toEqual(res.structuredContent);
    const meta = CallMetaSchema.parse((res._meta as Record<string, unknown>)["toolgate/meta"]);
    expect(meta).toMatchObject({ tool: "get_order", version: "1.0.0", attempts: 1 });
    expect(fromCallToolResult(res)).toEqual({ ok: true, data: res.structuredContent, meta });
  });

  it("INVALID_INPUT with per-field issues, never reworded by the SDK", async () => {
    const res = await client.callTool({ name: "get_order", arguments: { customerId: "", extra: 1 } });
    const env = failureOf(res);
    expect(env).toMatchObject({ code: "INVALID_INPUT", retryable: false, effect: "none", meta: { attempts: 0 } });
    expect(env.issues?.map((i) => i.path)).toContain("customerId");
    expect(JSON.stringify(res)).not.toContain("MCP error");
  });

  it("a __proto__ key in the arguments reaches the gate's hardening (not dropped by a record schema)", async () => {
    const res = await client.callTool({ name: "get_order", arguments: JSON.parse('{"customerId":"c_1","__proto__":{"x":1}}') as Record<string, unknown> });
    expect(failureOf(res)).toMatchObject({ code: "INVALID_INPUT", issues: [{ path: "__proto__", code: "forbidden_key" }] });
  });

  it("REJECTED from the business check, with the effect the tool reported", async () => {
    const res = await client.callTool({ name: "create_refund", arguments: { orderId: "o_nope", amountCents: 100 } });
    expect(failureOf(res)).toMatchObject({ code: "REJECTED", retryable: false, effect: "none", meta: { attempts: 1 } });
  });

  it("unknown tool is a JSON-RPC protocol error (-32602) carrying the UNKNOWN_TOOL envelope", async () => {
    const err = await client.callTool({ name: "nope", arguments: {} }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(McpError);
    const e = err as McpError;
    expect(e.code).toBe(-32602);
    expect(e.message).toBe("MCP error -32602: Unknown tool; pick one of the listed tools");
    expect(FailureSchema.parse((e.data as Record<string, unknown>)["toolgate/result"])).toMatchObject({ code: "UNKNOWN_TOOL", meta: { tool: "nope", attempts: 0 } });
  });

  it("malformed tools/call params are JSON-RPC -32602 errors", async () => {
    const { CallToolResultSchema } = await import("@modelcontextprotocol/sdk/types.js");
    // (A non-object params._meta never reaches a handler: the SDK's transport drops the message.)
    for (const params of [{ name: 5 }, { name: "get_order", arguments: [1] }, { name: "get_order", arguments: "{}" }]) {
      await expect(client.request({ method: "tools/call", params } as never, CallToolResultSchema)).rejects.toMatchObject({ code: -32602 });
    }
  });

  it("callId is the JSON-RPC request id", async () => {
    const a = fromCallToolResult(await client.callTool({ name: "get_order", arguments: { customerId: "c_2" } }));
    const b = fromCallToolResult(await client.callTool({ name: "get_order", arguments: { customerId: "c_2" } }));
    expect(Number(b!.meta.callId)).toBe(Number(a!.meta.callId) + 1);
  });
});

describe("toolgate serve over stdio: every failure code the gate produces", () => {
  let client: Client;
  beforeAll(async () => {
    client = await connectServe(fixture("codes.ts"));
  });
  afterAll(async () => {
    await client?.close();
  });

  it.each([
    ["flaky_read", {}, { code: "RETRYABLE", retryable: true, effect: "none", meta: { attempts: 2 } }],
    ["bad_output", {}, { code: "INVALID_OUTPUT", retryable: false, effect: "none", issues: [{ path: "ok" }] }],
    ["forbidden", {}, { code: "DENIED", message: "missing scope orders:admin", retryable: false }],
    ["needs_approval", {}, { code: "DENIED", message: "not approved", meta: { attempts: 0 } }],
    ["lost_write", { n: 1 }, { code: "FAILED", retryable: false, effect: "unknown", meta: { attempts: 1 } }],
    ["slow", { ms: 5_000 }, { code: "RETRYABLE", message: "The tool timed out; try again later" }],
  ] as const)("%s → envelope under _meta", async (name, args, expected) => {
    const res = await client.callTool({ name, arguments: args });
    expect(failureOf(res)).toMatchObject(expected);
  });

  it("CONFLICT: the same idempotency key while the first call runs, and with different arguments", async () => {
    const key = { "toolgate/idempotencyKey": "idem-1" };
    const first = client.callTool({ name: "slow_write", arguments: { ms: 600 }, _meta: key });
    await new Promise((r) => setTimeout(r, 150));
    const running = failureOf(await client.callTool({ name: "slow_write", arguments: { ms: 600 }, _meta: key }));
    expect(running).toMatchObject({ code: "CONFLICT", retryable: true, effect: "unknown" });
    expect((await first).isError).toBeFalsy();
    const other = failureOf(await client.callTool({ name: "slow_write", arguments: { ms: 5 }, _meta: key }));
    expect(other).toMatchObject({ code: "CONFLICT", retryable: false, effect: "none" });
  });

  it("request _meta reaches ctx.meta, toolgate/idempotencyKey becomes the idempotency key", async () => {
    const res = await client.callTool({
      name: "echo_meta",
      arguments: { note: "x" },
      _meta: { traceparent: "00-abc-def-01", "toolgate/idempotencyKey": "k-1" },
    });
    expect(res.structuredContent).toMatchObject({ metaKeys: ["toolgate/idempotencyKey", "traceparent"], idempotencyKey: "k-1" });
  });

  it("an _meta key inside arguments is refused: the model cannot forge request metadata", async () => {
    const res = await client.callTool({ name: "echo_meta", arguments: { _meta: { principal: "admin" } } });
    expect(failureOf(res)).toMatchObject({ code: "INVALID_INPUT", issues: [{ path: "_meta", code: "reserved_key" }] });
  });
});

describe("toolgate serve over stdio: raw lines", () => {
  it("a non-JSON line, or JSON that is not JSON-RPC, is reported on stderr without its content, and the server keeps answering", async () => {
    const { spawn } = await import("node:child_process");
    const { CLI, ROOT } = await import("./helpers.js");
    const child = spawn(process.execPath, [...CLI, "serve", "examples/orders/index.ts"], { cwd: ROOT, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.stdin.write("secret-looking garbage sk-123\n");
    // JSON that the SDK's JSON-RPC schema refuses (an id of null, a key it does not know): a ZodError.
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: null, method: "tools/call", params: { name: "get_order" }, token_sk: "x" }) + "\n");
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list" }) + "\n");
    const deadline = Date.now() + 15_000;
    while (!stdout.includes('"id":7') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    child.stdin.end();
    const code = await new Promise<number | null>((r) => child.once("close", r));
    expect(JSON.parse(stdout.trim().split("\n").pop()!)).toMatchObject({ id: 7, result: { tools: expect.any(Array) } });
    expect(stderr.match(/^toolgate mcp: a line that is not JSON-RPC was ignored$/gm)).toHaveLength(2);
    expect(stderr).not.toContain("sk-123");
    expect(stderr).not.toContain("token_sk");
    expect(code).toBe(0);
  });
});
