/**
 * MCP entry points refuse option keys they do not know, naming the likely one: a misspelt `token`
 * served without authentication, a misspelt `lockPath` turned pinning off, without a word.
 */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { createGate } from "../../src/index.js";
import { checkHttpOptions, createMcpServer, createProxy, serveHttp, serveStdio, type ProxyOptions } from "../../src/mcp/index.js";
import { createFakeOrders, makeOrderTools } from "../../examples/orders/index.js";
import { UPSTREAM } from "./proxy-helpers.js";

const gate = createGate({ tools: makeOrderTools(createFakeOrders()) });
const upstream = { kind: "stdio", command: process.execPath, args: [UPSTREAM] } as const;

function configError(f: () => unknown): { code?: unknown; message?: unknown } | undefined {
  try {
    f();
  } catch (e) {
    return e as { code?: unknown; message?: unknown };
  }
  return undefined;
}

async function rejection(p: Promise<unknown>): Promise<{ code?: unknown; message?: unknown } | undefined> {
  return p.then(
    () => undefined,
    (e: unknown) => e as { code?: unknown; message?: unknown },
  );
}

describe("unknown option keys", () => {
  it("createMcpServer", () => {
    const e = configError(() => createMcpServer(gate, { name: "s", version: "1", principle: () => undefined } as never));
    expect(e).toMatchObject({ code: "E_MCP_OPTIONS", message: expect.stringContaining("unknown option principle (did you mean principal?)") });
    expect(configError(() => createMcpServer(gate, { name: "s", version: "1", instructions: 3 } as never))).toMatchObject({ code: "E_MCP_OPTIONS" });
  });

  it("serveHttp and checkHttpOptions: a misspelt token is refused, never served open", async () => {
    expect(configError(() => checkHttpOptions({ tokne: "x".repeat(20) } as never))).toMatchObject({ code: "E_MCP_HTTP", message: expect.stringContaining("did you mean token?") });
    expect(configError(() => checkHttpOptions({ allowedHost: ["a.example"] } as never))).toMatchObject({ message: expect.stringContaining("did you mean allowedHosts?") });
    const e = await rejection(serveHttp(() => createMcpServer(gate, { name: "s", version: "1" }), { port: 0, tokne: "x".repeat(20) } as never));
    expect(e).toMatchObject({ code: "E_MCP_HTTP" });
  });

  it("serveStdio", async () => {
    const server = createMcpServer(gate, { name: "s", version: "1" });
    const e = await rejection(serveStdio(server, { stdin: new PassThrough(), stdout: new PassThrough(), drain: 5 } as never));
    expect(e).toMatchObject({ code: "E_MCP_OPTIONS", message: expect.stringContaining("did you mean drainMs?") });
  });

  it("createProxy: options, the upstream spec and the config are checked before anything starts", async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ upstream, lockpath: "x.json" }, /unknown option lockpath \(did you mean lockPath\?\)/],
      [{ upstream: { ...upstream, argv: [] } }, /unknown option upstream\.argv/],
      [{ upstream: { kind: "ws", url: "x" } }, /upstream\.kind must be "stdio" or "http"/],
      [{ upstream: { kind: "http", url: "http://127.0.0.1:1/mcp" } }, /upstream\.url must be a URL/],
      [{ upstream, startAttempts: 0 }, /startAttempts must be a positive integer/],
      [{ upstream, updateLock: true }, /updateLock needs a lockPath/],
      [{ upstream, config: { tools: { echo: { efect: "read" } } } }, /createProxy: config\.tools\.echo/],
    ];
    for (const [options, message] of cases) {
      const e = await rejection(createProxy(options as unknown as ProxyOptions));
      expect(e, JSON.stringify(options)).toMatchObject({ code: "E_PROXY_CONFIG", message: expect.stringMatching(message) });
    }
  });
});
