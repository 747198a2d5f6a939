/**
 * Request bodies held at once, all requests together, are bounded (maxBodyBytesInFlight): bodies
 * that arrive slowly, each within maxBodyBytes, cannot pile up in memory without bound.
 */
import { request, type ClientRequest } from "node:http";
import { describe, expect, it } from "vitest";
import { createGate } from "../../src/index.js";
import { checkHttpOptions, createMcpServer, serveHttp } from "../../src/mcp/index.js";
import { createFakeOrders, makeOrderTools } from "../../examples/orders/index.js";

const gate = createGate({ tools: makeOrderTools(createFakeOrders()) });

/** A POST whose body is sent in part, then held open: resolves the request and its status, when one comes. */
function stalled(url: URL, bytes: number): { req: ClientRequest; status: Promise<number> } {
  const req = request(url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" } });
  const status = new Promise<number>((resolve) => {
    req.on("response", (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", () => resolve(-1));
  });
  req.write(Buffer.alloc(bytes, 0x20));
  return { req, status };
}

describe("serveHttp: request bodies in flight", () => {
  it("a body that would take the server past maxBodyBytesInFlight gets 503; the budget comes back when requests end", async () => {
    const h = await serveHttp(() => createMcpServer(gate, { name: "t", version: "1" }), { port: 0, maxBodyBytes: 1024 * 1024, maxBodyBytesInFlight: 2 * 1024 * 1024 });
    try {
      const a = stalled(h.url, 900 * 1024);
      const b = stalled(h.url, 900 * 1024);
      await new Promise((r) => setTimeout(r, 200)); // both held by the server
      const c = stalled(h.url, 900 * 1024);
      expect(await c.status).toBe(503);
      a.req.destroy();
      b.req.destroy();
      c.req.destroy();
      await new Promise((r) => setTimeout(r, 200));
      const ok = await fetch(h.url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "c", version: "1" } } }),
      });
      expect(ok.status).toBe(200);
      await ok.body?.cancel();
    } finally {
      await h.close();
    }
  });

  it("maxBodyBytesInFlight below maxBodyBytes is refused", () => {
    expect(() => checkHttpOptions({ maxBodyBytes: 2048, maxBodyBytesInFlight: 1024 })).toThrow(/maxBodyBytesInFlight must be an integer of at least maxBodyBytes/);
  });
});
