import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createMcpServer, fromCallToolResult, serveHttp, type HttpHandle } from "../../src/mcp/index.js";
import gate from "../fixtures/mcp/codes.js";
import { FailureSchema, spawnHttpServe } from "./helpers.js";

const TOKEN = "test-token-0123456789abcdef";
const factory = () => createMcpServer(gate, { name: "codes", version: "1.0.0" });

async function connect(url: URL, token?: string): Promise<Client> {
  const client = new Client({ name: "t", version: "1" });
  const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  return client;
}

const init = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});
const post = (url: URL, body: string, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: "POST",
    body,
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    signal: AbortSignal.timeout(5_000),
  });

describe("serveHttp: Streamable HTTP, official v1 client", () => {
  let http: HttpHandle;
  let client: Client;
  beforeAll(async () => {
    http = await serveHttp(factory, { port: 0 });
    client = await connect(http.url);
  });
  afterAll(async () => {
    await client?.close();
    await http?.close();
  });

  it("binds 127.0.0.1 on an ephemeral port", () => {
    expect(http.host).toBe("127.0.0.1");
    expect(http.port).toBeGreaterThan(0);
    expect(http.url.href).toBe(`http://127.0.0.1:${http.port}/mcp`);
  });

  it("list, valid call, failure envelopes; callId carries the session", async () => {
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("get_order");
    const ok = await client.callTool({ name: "get_order", arguments: { customerId: "c_2" } });
    expect(ok.structuredContent).toEqual({ found: true, customerId: "c_2", orders: [{ id: "o_200", status: "paid" }] });
    expect(fromCallToolResult(ok)?.meta.callId).toMatch(/^[0-9a-f-]{36}:\d+$/);
    for (const [name, args, code] of [
      ["get_order", { customerId: 7 }, "INVALID_INPUT"],
      ["create_refund", { orderId: "o_x", amountCents: 5 }, "REJECTED"],
      ["flaky_read", {}, "RETRYABLE"],
      ["bad_output", {}, "INVALID_OUTPUT"],
      ["forbidden", {}, "DENIED"],
      ["lost_write", { n: 2 }, "FAILED"],
    ] as const) {
      const res = await client.callTool({ name, arguments: args });
      expect(res.isError, name).toBe(true);
      expect(FailureSchema.parse((res._meta as Record<string, unknown>)["toolgate/result"]).code).toBe(code);
    }
    await expect(client.callTool({ name: "nope", arguments: {} })).rejects.toMatchObject({ code: -32602 });
  });

  it("50 concurrent calls on one session (below the gate's per-tool concurrency of 64) all answer", async () => {
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => client.callTool({ name: "get_order", arguments: { customerId: i % 2 ? "c_1" : "c_2" } })));
    expect(results.every((r) => r.isError !== true)).toBe(true);
    const ids = new Set(results.map((r) => fromCallToolResult(r)?.meta.callId));
    expect(ids.size).toBe(50);
  });

  it("refuses a foreign Origin and a foreign Host (DNS rebinding)", async () => {
    expect((await post(http.url, init, { origin: "http://evil.example" })).status).toBe(403);
    expect((await post(http.url, init, { origin: `http://localhost:${http.port}` })).status).toBe(200);
    // fetch does not let us set Host; a raw request does.
    const { request } = await import("node:http");
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port: http.port, path: "/mcp", method: "POST", headers: { host: "evil.example:80", "content-type": "application/json", accept: "application/json, text/event-stream" } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end(init);
    });
    expect(status).toBe(403);
  });

  it("answers 404 for another path, 400 for non-JSON, 400 without a session, 404 for an unknown session, 413 for a huge body", async () => {
    expect((await post(new URL("/other", http.url), init)).status).toBe(404);
    const nonJson = await post(http.url, "{not json");
    expect(nonJson.status).toBe(400);
    expect(await nonJson.json()).toMatchObject({ error: { code: -32700 } });
    const noSession = await post(http.url, JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }));
    expect(noSession.status).toBe(400);
    expect(await noSession.json()).toMatchObject({ error: { code: -32600 } }); // an invalid request, not a parse error
    expect((await post(http.url, JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }), { "mcp-session-id": "nope" })).status).toBe(404);
    expect((await post(http.url, "x".repeat(5 * 1024 * 1024))).status).toBe(413);
  });
});

describe("serveHttp options", () => {
  it("refuses a non-loopback bind unless allowed, and bad options", async () => {
    await expect(serveHttp(factory, { host: "0.0.0.0" })).rejects.toMatchObject({ code: "E_MCP_HTTP", message: expect.stringMatching(/not a loopback address/) });
    await expect(serveHttp(factory, { token: "short" })).rejects.toMatchObject({ code: "E_MCP_HTTP" });
    await expect(serveHttp(factory, { port: 70_000 })).rejects.toMatchObject({ code: "E_MCP_HTTP" });
  });

  it("closes a session that stays idle past sessionIdleMs", async () => {
    const http = await serveHttp(factory, { port: 0, sessionIdleMs: 50 });
    try {
      const client = await connect(http.url);
      expect(http.sessions()).toBe(1);
      await new Promise((r) => setTimeout(r, 1_300));
      expect(http.sessions()).toBe(0);
      await expect(client.listTools()).rejects.toThrow();
      await client.close();
    } finally {
      await http.close();
    }
  });

  it("requires the bearer token when one is set", async () => {
    const http = await serveHttp(factory, { port: 0, token: TOKEN });
    try {
      const no = await post(http.url, init);
      expect(no.status).toBe(401);
      expect(no.headers.get("www-authenticate")).toMatch(/^Bearer/);
      expect((await post(http.url, init, { authorization: "Bearer wrong-token-0123456789" })).status).toBe(401);
      const client = await connect(http.url, TOKEN);
      const res = await client.callTool({ name: "get_order", arguments: { customerId: "c_1" } });
      expect(res.isError).toBeFalsy();
      await client.close();
    } finally {
      await http.close();
    }
  });
});

describe("toolgate serve --http (CLI)", () => {
  it("serves the example over Streamable HTTP with a token from the environment", async () => {
    const server = await spawnHttpServe("examples/orders/index.ts", ["--token-env", "TG_TOKEN"], { ...process.env, TG_TOKEN: TOKEN });
    try {
      expect(server.url.hostname).toBe("127.0.0.1");
      expect((await post(server.url, init)).status).toBe(401);
      const client = await connect(server.url, TOKEN);
      const res = await client.callTool({ name: "create_refund", arguments: { orderId: "o_100", amountCents: 250 } });
      expect(res.structuredContent).toMatchObject({ orderId: "o_100", amountCents: 250, status: "accepted" });
      await client.close();
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});
