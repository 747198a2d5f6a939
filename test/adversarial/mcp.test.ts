import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { createMcpServer, serveHttp, type HttpHandle } from "../../src/mcp/index.js";
import { adversarialGate } from "./_inputs.js";
import { WIRE, rawSession } from "./_mcp.js";

describe("adversarial inputs through the MCP HTTP server (raw bodies)", () => {
  let http: HttpHandle;
  let serviceCalls: () => number;
  beforeAll(async () => {
    const g = adversarialGate();
    serviceCalls = g.serviceCalls;
    http = await serveHttp(() => createMcpServer(g.gate, { name: "adversarial", version: "1.0.0" }), { port: 0 });
  });
  afterAll(async () => {
    await http.close();
  });

  it.each(WIRE.map((c) => [c.name, c] as const))("%s → INVALID_INPUT envelope, no service call", async (_n, c) => {
    const s = await rawSession(http.url);
    const reply = await s.call(c.tool, c.args());
    expect(reply.status).toBe(200);
    const result = reply.message?.result as { isError?: boolean; _meta?: Record<string, unknown> } | undefined;
    expect(result?.isError).toBe(true);
    const env = result?._meta?.["toolgate/result"] as { code: string; issues?: { code: string }[]; meta: { attempts: number } };
    expect(env.code).toBe("INVALID_INPUT");
    expect(c.codes).toContain(env.issues?.[0]?.code);
    expect(env.meta.attempts).toBe(0);
    expect(JSON.stringify(reply.message).length).toBeLessThan(4_000);
    expect(serviceCalls()).toBe(0);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("duplicate keys cannot be seen over MCP: JSON-RPC bodies are parsed before the gate (last one wins)", async () => {
    const s = await rawSession(http.url);
    const reply = await s.call("get_order", '{"customerId":"c_9","customerId":"c_1"}');
    const result = reply.message?.result as { isError?: boolean; structuredContent?: { customerId: string } };
    // documented limitation: the transport's JSON.parse resolves duplicates; the gate sees one key
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent?.customerId).toBe("c_1");
  });

  it("a body over the server's limit is refused by the transport (HTTP 413), not passed on", async () => {
    const before = serviceCalls();
    const s = await rawSession(http.url);
    const reply = await s.call("get_order", `{"customerId":"${"x".repeat(10 * 1024 * 1024)}"}`);
    expect(reply.status).toBe(413);
    expect(serviceCalls()).toBe(before);
  });

  it("a body nested 1,500,000 deep (under the size limit) is refused by the transport before it is parsed (HTTP 400)", async () => {
    const before = serviceCalls();
    const s = await rawSession(http.url);
    const deep = "[".repeat(1_500_000) + "]".repeat(1_500_000);
    const reply = await s.call("get_order", `{"customerId":${deep}}`);
    expect(reply.status).toBe(400);
    expect(JSON.stringify(reply.message)).toContain("nests deeper than 100000 levels");
    expect(serviceCalls()).toBe(before);
  });
});
