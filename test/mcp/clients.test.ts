/** Outside clients: the v2 SDK client (@modelcontextprotocol/client 2.x) and the MCP Inspector CLI. */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { fromCallToolResult } from "../../src/mcp/index.js";
import { CLI, FailureSchema, ROOT, fixture, spawnHttpServe } from "./helpers.js";

describe("v2 client (@modelcontextprotocol/client 2.x)", () => {
  let client: Client;
  beforeAll(async () => {
    client = new Client({ name: "v2-test", version: "1.0.0" });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [...CLI, "serve", fixture("codes.ts")], cwd: ROOT, stderr: "pipe" }));
  });
  afterAll(async () => {
    await client?.close();
  });

  it("over stdio: list, valid call, failure envelope, unknown tool as a protocol error", async () => {
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === "get_order")?.annotations?.readOnlyHint).toBe(true);
    const ok = await client.callTool({ name: "get_order", arguments: { customerId: "c_1", includeHistory: true } });
    expect((ok.structuredContent as { orders: unknown[] }).orders).toHaveLength(3);
    const bad = await client.callTool({ name: "create_refund", arguments: { orderId: "o_100", amountCents: 2_000_000 } });
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent).toBeUndefined();
    expect(FailureSchema.parse((bad._meta as Record<string, unknown>)["toolgate/result"])).toMatchObject({
      code: "INVALID_INPUT",
      issues: [{ path: "amountCents", code: "too_big" }],
    });
    await expect(client.callTool({ name: "nope", arguments: {} })).rejects.toMatchObject({ code: -32602 });
  });

  it("over Streamable HTTP, against the CLI", async () => {
    const server = await spawnHttpServe(fixture("codes.ts"));
    const http = new Client({ name: "v2-http", version: "1.0.0" });
    try {
      await http.connect(new StreamableHTTPClientTransport(server.url));
      const res = await http.callTool({ name: "bad_output", arguments: {} });
      expect(FailureSchema.parse((res._meta as Record<string, unknown>)["toolgate/result"]).code).toBe("INVALID_OUTPUT");
      const ok = await http.callTool({ name: "get_order", arguments: { customerId: "c_2" } });
      expect(fromCallToolResult(ok)).toMatchObject({ ok: true, data: { found: true } });
    } finally {
      await http.close();
      await server.stop();
    }
  });
});

/**
 * MCP Inspector CLI 1.0.3 (the last release without an engines field asking for Node 22). It runs
 * on Node 20; its one quirk: it looks for its own package.json relative to the working directory,
 * so it is run from a directory whose parent has a package.json (`test/`).
 */
function inspector(args: readonly string[]): Promise<{ code: number | null; stdout: string }> {
  const bin = join(ROOT, "node_modules/@modelcontextprotocol/inspector-cli/build/index.js");
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: join(ROOT, "test"), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    const t = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.on("close", (code) => {
      clearTimeout(t);
      resolve({ code, stdout });
    });
  });
}

describe("MCP Inspector CLI 1.0.3 on Node 20", () => {
  const serveArgs = [process.execPath, "--import", "tsx", "../src/cli/main.ts", "serve", "../examples/orders/index.ts"];

  it("lists the tools and calls one over stdio", async () => {
    const list = await inspector([...serveArgs, "--method", "tools/list"]);
    expect(list.code).toBe(0);
    expect((JSON.parse(list.stdout) as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual(["get_order", "create_refund"]);
    const call = await inspector([...serveArgs, "--method", "tools/call", "--tool-name", "create_refund", "--tool-arg", "orderId=o_100", "--tool-arg", "amountCents=-5"]);
    expect(call.code).toBe(0);
    const res = JSON.parse(call.stdout) as { isError: boolean; _meta: Record<string, unknown> };
    expect(res.isError).toBe(true);
    expect(FailureSchema.parse(res._meta["toolgate/result"])).toMatchObject({ code: "INVALID_INPUT", issues: [{ path: "amountCents" }] });
  });

  it("calls a tool over Streamable HTTP", async () => {
    const server = await spawnHttpServe("examples/orders/index.ts");
    try {
      const call = await inspector([server.url.href, "--transport", "http", "--method", "tools/call", "--tool-name", "get_order", "--tool-arg", "customerId=c_2"]);
      expect(call.code).toBe(0);
      expect(JSON.parse(call.stdout)).toMatchObject({ structuredContent: { found: true, customerId: "c_2" } });
    } finally {
      await server.stop();
    }
  });
});
