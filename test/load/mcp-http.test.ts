import { describe, it, expect } from "vitest";
import { Agent, request } from "node:http";
import { Readable } from "node:stream";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { z } from "zod";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createGate, defineTool } from "../../src/index.js";
import { createMcpServer, fromCallToolResult, serveHttp } from "../../src/mcp/index.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const heapAfterGc = (): number => {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
};

const CALLS = 10_000;
const SESSIONS = 20;
const SOCKETS = 256;

/**
 * `fetch` over a keep-alive agent with a socket cap. Node's global fetch opens a socket per
 * concurrent request: 10,000 at once overflow the listen backlog (511) and the kernel resets the
 * excess, which says nothing about the server. Calls stay 10,000-way concurrent at the MCP layer.
 */
function pooledFetch(agent: Agent) {
  return (url: string | URL, init?: RequestInit): Promise<Response> =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string> = {};
      new Headers(init?.headers).forEach((v, k) => (headers[k] = v));
      const req = request(new URL(url), { method: init?.method ?? "GET", headers, agent }, (res) => {
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(", ") : v);
        const status = res.statusCode ?? 500;
        const empty = status === 204 || status === 304;
        if (empty) res.resume();
        resolve(new Response(empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), { status, headers: h }));
      });
      req.on("error", reject);
      req.end(typeof init?.body === "string" ? init.body : undefined);
    });
}

describe("load: 10,000 concurrent calls through the MCP HTTP server on loopback (20 sessions, 256 pooled sockets)", () => {
  it("every call answers with a result or an envelope, the concurrency limit holds, memory returns", async () => {
    const live = { now: 0, max: 0 };
    const work = defineTool({
      name: "work",
      version: "1",
      description: "a little async work",
      input: z.object({ n: z.number().int() }),
      output: z.object({ n: z.number() }),
      effect: "read",
      concurrency: 100,
      execute: async ({ n }) => {
        live.max = Math.max(live.max, ++live.now);
        await new Promise((r) => setTimeout(r, 1));
        live.now--;
        return { n };
      },
    });
    const gate = createGate({ tools: [work], breaker: false });
    const http = await serveHttp(() => createMcpServer(gate, { name: "load", version: "1.0.0" }), { port: 0, maxSessions: SESSIONS + 5 });
    const clients: Client[] = [];
    const agent = new Agent({ keepAlive: true, maxSockets: SOCKETS });
    try {
      for (let i = 0; i < SESSIONS; i++) {
        const c = new Client({ name: `load-${i}`, version: "1.0.0" });
        await c.connect(new StreamableHTTPClientTransport(http.url, { fetch: pooledFetch(agent) }));
        clients.push(c);
      }
      const burst = async (n: number): Promise<Map<string, number>> => {
        const calls = [];
        for (let i = 0; i < n; i++) {
          const c = clients[i % SESSIONS]!;
          const args = i % 10 === 9 ? { n: "bad" } : { n: i };
          calls.push(c.callTool({ name: "work", arguments: args }, undefined, { timeout: 120_000 }).then((r) => fromCallToolResult(r)));
        }
        const results = await Promise.all(calls);
        const codes = new Map<string, number>();
        for (const r of results) {
          const k = r === undefined ? "NOT_AN_ENVELOPE" : r.ok ? "OK" : r.code;
          codes.set(k, (codes.get(k) ?? 0) + 1);
        }
        return codes;
      };
      await burst(500); // warm-up: JIT, sockets, session state
      const baseline = heapAfterGc();
      const codes = await burst(CALLS);
      const growth = heapAfterGc() - baseline;
      expect([...codes.values()].reduce((a, b) => a + b, 0)).toBe(CALLS);
      expect(codes.get("NOT_AN_ENVELOPE")).toBeUndefined();
      expect(codes.get("INVALID_INPUT")).toBe(CALLS / 10);
      expect((codes.get("OK") ?? 0) + (codes.get("RETRYABLE") ?? 0)).toBe((CALLS * 9) / 10);
      expect(codes.get("OK")).toBeGreaterThan(0);
      expect(live.max).toBeLessThanOrEqual(100);
      expect(live.now).toBe(0);
      expect(http.sessions()).toBe(SESSIONS);
      expect(growth).toBeLessThan(8 * 1024 * 1024);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
      await http.close();
      agent.destroy();
    }
  }, 120_000);
});
