/**
 * The default Host and Origin checks of serveHttp (and of the CLI's --http) accept the server's own
 * URL for every bind they allow: any 127.0.0.0/8 address, IPv6 loopback, a host spelled otherwise
 * than its URL writes it, and port 80, where clients leave ":80" out of Host and browsers out of
 * Origin. Foreign hosts and origins, another loopback address and another port are still refused
 * (DNS rebinding). Only loopback addresses are used; no name but "localhost" is looked up.
 */
import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createMcpServer, serveHttp, type HttpHandle, type HttpOptions } from "../../src/mcp/index.js";
import gate from "../fixtures/mcp/codes.js";
import { spawnListening } from "./helpers.js";

const factory = () => createMcpServer(gate, { name: "codes", version: "1.0.0" });
const init = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});

/** Everything to undo after a test, run even when it fails: clients, servers, child processes. */
const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** POST initialize to `address:port` with these headers (a crafted Host too); resolves to the status. */
function status(address: string, port: number, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: address,
        port,
        path: "/mcp",
        method: "POST",
        setHost: !("host" in headers),
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on("error", reject);
    req.setTimeout(5_000, () => req.destroy(new Error("timeout")));
    req.end(init);
  });
}

/** The official client on `url`: connects and lists the tools, or throws what the server answered. */
async function listThrough(url: URL): Promise<string[]> {
  const client = new Client({ name: "own-host", version: "1" });
  cleanups.push(() => client.close());
  await client.connect(new StreamableHTTPClientTransport(url), { timeout: 5_000 });
  return (await client.listTools(undefined, { timeout: 5_000 })).tools.map((t) => t.name);
}

/** serveHttp, closed after the test; `undefined` when the address or port cannot be had here (port 80 needs privileges). */
async function serve(options: HttpOptions): Promise<HttpHandle | undefined> {
  try {
    const http = await serveHttp(factory, options);
    cleanups.push(() => http.close());
    return http;
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (code === "EACCES" || code === "EADDRINUSE" || code === "EADDRNOTAVAIL") return undefined;
    throw e;
  }
}

describe("serveHttp: the default checks accept the handle's own URL", () => {
  it("a 127.0.0.0/8 address other than 127.0.0.1: its URL works, other hosts and origins are refused", async () => {
    const http = await serve({ host: "127.0.0.2", port: 0 });
    if (http === undefined) throw new Error("127.0.0.2 cannot be bound");
    const port = http.port;
    expect(http.url.href).toBe(`http://127.0.0.2:${port}/mcp`);
    expect(await listThrough(http.url)).toContain("get_order");
    expect(await status("127.0.0.2", port)).toBe(200);
    expect(await status("127.0.0.2", port, { origin: `http://127.0.0.2:${port}` })).toBe(200);
    expect(await status("127.0.0.2", port, { host: `localhost:${port}` })).toBe(200);
    // Still refused: foreign names and origins, another loopback address, another or no port.
    for (const host of ["evil.example", `evil.example:${port}`, `127.0.0.3:${port}`, "127.0.0.2", `127.0.0.2:${port + 1}`, `127.0.0.2:${port}.evil.example`]) {
      expect(await status("127.0.0.2", port, { host }), host).toBe(403);
    }
    for (const origin of ["http://evil.example", `http://evil.example:${port}`, `http://127.0.0.3:${port}`, "http://127.0.0.2", `https://127.0.0.2:${port}`]) {
      expect(await status("127.0.0.2", port, { origin }), origin).toBe(403);
    }
  });

  it("port 80: Host and Origin without the default port are the server's own, for a 127.x address", async (ctx) => {
    const http = await serve({ host: "127.0.0.2", port: 80 });
    if (http === undefined) return ctx.skip(); // port 80 needs privileges, or is taken
    expect(http.url.href).toBe("http://127.0.0.2/mcp");
    expect(await listThrough(http.url)).toContain("get_order");
    expect(await status("127.0.0.2", 80, { host: "127.0.0.2" })).toBe(200);
    expect(await status("127.0.0.2", 80, { host: "127.0.0.2:80" })).toBe(200);
    expect(await status("127.0.0.2", 80, { origin: "http://127.0.0.2" })).toBe(200);
    expect(await status("127.0.0.2", 80, { host: "localhost", origin: "http://localhost" })).toBe(200);
    // A bare name is the default port, not any port; foreign names stay refused.
    for (const host of ["evil.example", "evil.example:80", "127.0.0.3", "127.0.0.2:81", "localhost:81"]) {
      expect(await status("127.0.0.2", 80, { host }), host).toBe(403);
    }
    for (const origin of ["http://evil.example", "http://127.0.0.3", "http://127.0.0.2:81"]) {
      expect(await status("127.0.0.2", 80, { origin }), origin).toBe(403);
    }
  });

  it("port 80, a host that takes the non-loopback path (as a name would): as given and as its URL writes it", async (ctx) => {
    // "127.3" is not loopback to isLoopback (a name like "vm" takes the same path); the system
    // reads it as 127.0.0.3 and the URL writes it so. Nothing leaves the loopback interface.
    const http = await serve({ host: "127.3", port: 80, allowNonLoopback: true });
    if (http === undefined) return ctx.skip();
    expect(http.url.href).toBe("http://127.0.0.3/mcp");
    expect(await listThrough(http.url)).toContain("get_order");
    for (const host of ["127.3", "127.0.0.3", "127.0.0.3:80"]) {
      expect(await status("127.0.0.3", 80, { host }), host).toBe(200);
    }
    expect(await status("127.0.0.3", 80, { host: "127.3", origin: "http://127.3" })).toBe(200);
    expect(await status("127.0.0.3", 80, { origin: "http://127.0.0.3" })).toBe(200);
    for (const host of ["evil.example", "127.3:81", "127.0.0.2"]) {
      expect(await status("127.0.0.3", 80, { host }), host).toBe(403);
    }
    expect(await status("127.0.0.3", 80, { origin: "http://evil.example" })).toBe(403);
  });

  it("IPv6 loopback: its URL works", async (ctx) => {
    const http = await serve({ host: "::1", port: 0 });
    if (http === undefined) return ctx.skip(); // no IPv6 here
    expect(http.url.href).toBe(`http://[::1]:${http.port}/mcp`);
    expect(await listThrough(http.url)).toContain("get_order");
    expect(await status("::1", http.port, { origin: `http://[::1]:${http.port}` })).toBe(200);
    expect(await status("::1", http.port, { host: "evil.example" })).toBe(403);
  });

  it("allowedHosts given replaces the default, the bound address too", async () => {
    const http = await serve({ host: "127.0.0.2", port: 0, allowedHosts: ["tools.example"] });
    if (http === undefined) throw new Error("127.0.0.2 cannot be bound");
    expect(await status("127.0.0.2", http.port, { host: "tools.example" })).toBe(200);
    expect(await status("127.0.0.2", http.port)).toBe(403);
  });
});

describe("CLI --http on a 127.0.0.0/8 address other than 127.0.0.1: the URL it prints works", () => {
  it.each([[[]], [["--allowed-host", "tools.example"]]])("with %j", async (extra) => {
    const server = await spawnListening(["serve", "test/fixtures/mcp/codes.ts", "--http", "127.0.0.2:0", "--log", "off", ...extra]);
    cleanups.push(() => server.stop());
    const port = Number(server.url.port);
    expect(server.url.href).toBe(`http://127.0.0.2:${port}/mcp`);
    expect(await listThrough(server.url)).toContain("get_order");
    expect(await status("127.0.0.2", port, { origin: `http://127.0.0.2:${port}` })).toBe(200);
    expect(await status("127.0.0.2", port, { host: "evil.example" })).toBe(403);
    expect(await status("127.0.0.2", port, { origin: "http://evil.example" })).toBe(403);
    if (extra.length > 0) expect(await status("127.0.0.2", port, { host: "tools.example" })).toBe(200);
    else expect(await status("127.0.0.2", port, { host: `127.0.0.3:${port}` })).toBe(403);
  }, 30_000);
});
