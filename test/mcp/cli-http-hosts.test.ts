/**
 * Host and Origin checks of serveHttp and the CLI's --http flags: `allowedHosts` (names without a
 * port match any port), a wildcard bind refused without it, malformed entries refused, and every
 * --http check made before the proxy starts its upstream or writes its lock file.
 */
import { request } from "node:http";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createMcpServer, serveHttp } from "../../src/mcp/index.js";
import { checkHttpOptions, isWildcard } from "../../src/mcp/http.js";
import gate from "../fixtures/mcp/codes.js";
import { runMain, spawnHttpServe } from "./helpers.js";
import { UPSTREAM, tempDir } from "./proxy-helpers.js";

const factory = () => createMcpServer(gate, { name: "codes", version: "1.0.0" });
const init = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});

/** POST initialize with a crafted Host header (fetch cannot set Host); resolves to the status. */
function withHost(port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, path: "/mcp", method: "POST", headers: { host, "content-type": "application/json", accept: "application/json, text/event-stream" } },
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

describe("serveHttp allowedHosts", () => {
  it("a name without a port matches any port, name:port only that port; others get 403", async () => {
    const http = await serveHttp(factory, { port: 0, allowedHosts: ["tools.example", "exact.example:8443", "[fd00::1]"] });
    try {
      expect(await withHost(http.port, "tools.example")).toBe(200);
      expect(await withHost(http.port, `tools.example:${http.port}`)).toBe(200);
      expect(await withHost(http.port, "TOOLS.example:9")).toBe(200);
      expect(await withHost(http.port, "exact.example:8443")).toBe(200);
      expect(await withHost(http.port, "exact.example:8444")).toBe(403);
      expect(await withHost(http.port, "[fd00::1]:1234")).toBe(200);
      expect(await withHost(http.port, "evil.example")).toBe(403);
      expect(await withHost(http.port, "tools.example.evil.example")).toBe(403);
      // The list replaces the default: the loopback names are not in it.
      expect(await withHost(http.port, `127.0.0.1:${http.port}`)).toBe(403);
    } finally {
      await http.close();
    }
  });

  it("a wildcard bind is refused without allowedHosts, with what to do, however it is spelled", async () => {
    for (const host of ["0.0.0.0", "::", "[::]", "0", "0.0", "00.0.0.0", "[::0.0.0.0]", "::0.0.0.0", "[::ffff:0.0.0.0]", "[0:0:0:0:0:0:0:0]"]) {
      await expect(serveHttp(factory, { host, allowNonLoopback: true })).rejects.toMatchObject({
        code: "E_MCP_HTTP",
        message: expect.stringMatching(/wildcard address .* name the hosts clients connect to \(allowedHosts/),
      });
    }
    expect(() => checkHttpOptions({ host: "0.0.0.0", allowNonLoopback: true, allowedHosts: ["tools.example"] })).not.toThrow();
    expect(isWildcard("127.0.0.1")).toBe(false);
    expect(isWildcard("[::1]")).toBe(false);
    expect(isWildcard("tools.example")).toBe(false);
  });

  it("on port 80 the URL it prints works: Host and Origin without the default port are the server's own", async (ctx) => {
    let http: Awaited<ReturnType<typeof serveHttp>>;
    try {
      http = await serveHttp(factory, { host: "127.0.0.1", port: 80 });
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      if (code === "EACCES" || code === "EADDRINUSE") return ctx.skip(); // port 80 needs privileges, or is taken
      throw e;
    }
    try {
      expect(http.url.href).toBe("http://127.0.0.1/mcp");
      expect(await withHost(80, "127.0.0.1")).not.toBe(403);
      expect(await withHost(80, "127.0.0.1:80")).not.toBe(403);
      expect(await withHost(80, "evil.example")).toBe(403);
    } finally {
      await http.close();
    }
  });

  it.each([
    [{ allowedHosts: [] }, /allowedHosts must be a non-empty array/],
    [{ allowedHosts: ["::1"] }, /"::1" is not a host name or host:port \(an IPv6 address goes in brackets/],
    [{ allowedHosts: ["http://tools.example"] }, /is not a host name/],
    [{ allowedHosts: ["tools.example:99999"] }, /is not a host name/],
    [{ allowedOrigins: ["http://tools.example/"] }, /"http:\/\/tools.example\/" is not an origin as a browser sends it; use "http:\/\/tools.example"/],
    [{ allowedOrigins: ["http://tools.example:80"] }, /use "http:\/\/tools.example"/],
    [{ allowedOrigins: ["tools.example"] }, /is not an origin/],
    [{ token: "short" }, /at least 16 characters/],
  ])("refuses %j", (options, message) => {
    expect(() => checkHttpOptions(options)).toThrow(message);
  });

  it("accepts a well-formed origin list", () => {
    expect(() => checkHttpOptions({ allowedOrigins: ["http://tools.example", "https://a.example:8443", "http://[::1]:3000"] })).not.toThrow();
  });
});

describe("CLI --http flags", () => {
  it("--allowed-host adds accepted Host names; the loopback names stay accepted", async () => {
    const server = await spawnHttpServe("test/fixtures/mcp/codes.ts", ["--allowed-host", "tools.example", "--log", "off"]);
    try {
      const port = Number(server.url.port);
      expect(await withHost(port, "tools.example")).toBe(200);
      expect(await withHost(port, `127.0.0.1:${port}`)).toBe(200);
      expect(await withHost(port, "evil.example")).toBe(403);
    } finally {
      await server.stop();
    }
  });

  it.each([
    [["serve", "test/fixtures/mcp/codes.ts", "--http", "0.0.0.0:0", "--allow-remote"], /--http: refusing to bind 0.0.0.0: a wildcard address .*\(--allowed-host\)/],
    [["serve", "test/fixtures/mcp/codes.ts", "--http", "127.0.0.1:0", "--allowed-host", "::1"], /--allowed-host: "::1" is not a host name/],
    [["serve", "test/fixtures/mcp/codes.ts", "--http", "127.0.0.1:0", "--origin", "http://a.example/"], /--origin: "http:\/\/a.example\/" is not an origin.*use "http:\/\/a.example"/],
    [["serve", "test/fixtures/mcp/codes.ts", "--allowed-host", "a.example"], /apply to --http only \(got --allowed-host\)/],
  ])("%j exits 2", async (args, message) => {
    const r = await runMain(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toMatch(/\(E_USAGE\)/);
  });

  it("a short token names --token-env and its variable", async () => {
    process.env.TG_SHORT_TOKEN_TEST = "abc";
    try {
      const r = await runMain(["serve", "test/fixtures/mcp/codes.ts", "--http", "127.0.0.1:0", "--token-env", "TG_SHORT_TOKEN_TEST"]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/--token-env: the token in TG_SHORT_TOKEN_TEST is 3 characters; use at least 16/);
    } finally {
      delete process.env.TG_SHORT_TOKEN_TEST;
    }
  });

  it("proxy: a bad --http address or a short token exits 2 before the upstream starts or the lock file is written", async () => {
    const dir = tempDir();
    const lock = join(dir, "lock.json");
    const starts = join(dir, "starts.txt");
    process.env.UPSTREAM_STARTS_FILE = starts;
    process.env.TG_SHORT_TOKEN_TEST = "abc";
    try {
      const cases: [string[], RegExp][] = [
        [["--http", "0.0.0.0:0"], /refusing to bind 0.0.0.0: not a loopback address \(pass --allow-remote\)/],
        [["--http", "127.0.0.1:0", "--token-env", "TG_SHORT_TOKEN_TEST"], /--token-env: the token in TG_SHORT_TOKEN_TEST is 3 characters/],
        [["--http", "0.0.0.0:0", "--allow-remote"], /wildcard address/],
      ];
      for (const [flags, message] of cases) {
        const r = await runMain(["proxy", "--lock", lock, ...flags, "--env", "UPSTREAM_STARTS_FILE", "--", process.execPath, UPSTREAM]);
        expect(r.code, flags.join(" ")).toBe(2);
        expect(r.stderr).toMatch(message);
        expect(r.stderr).toMatch(/\(E_USAGE\)/);
      }
      expect(existsSync(lock)).toBe(false);
      expect(existsSync(starts)).toBe(false);
    } finally {
      delete process.env.UPSTREAM_STARTS_FILE;
      delete process.env.TG_SHORT_TOKEN_TEST;
    }
  });
});
