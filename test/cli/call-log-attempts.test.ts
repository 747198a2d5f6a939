/**
 * `--log` of `toolgate serve` and `toolgate proxy` carries each call's attempt events, whether the
 * CLI builds the gate (a module exporting tools; the proxy) or the module exports a ready gate (the
 * call log listens to it through the gate's attempt seam, src/attempt-seam.ts).
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { createProxy } from "../../src/mcp/index.js";
import { createCallLog, type CallLogEvent } from "../../src/log/index.js";
import { CLI, ROOT } from "../mcp/helpers.js";
import { UPSTREAM, tempDir } from "../mcp/proxy-helpers.js";

const line = (m: unknown): string => JSON.stringify(m) + "\n";
const HELLO = [
  { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } },
  { jsonrpc: "2.0", method: "notifications/initialized" },
];
const call = (id: number, name: string) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: {} } });

type Logged = Record<string, unknown> & { attempts: Record<string, unknown>[] };

/** `toolgate serve <module> --log <file>` over stdio with these input lines (stdin then ends); the logged lines. */
function serveAndLog(module: string, lines: readonly unknown[]): Promise<Logged[]> {
  const file = join(tempDir(), "calls.jsonl");
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...CLI, "serve", module, "--log", file], { cwd: ROOT, stdio: ["pipe", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const t = setTimeout(() => child.kill("SIGKILL"), 20_000);
    child.on("close", (code) => {
      clearTimeout(t);
      if (code !== 0) return reject(new Error(`serve exited ${String(code)}: ${stderr}`));
      resolve(readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Logged));
    });
    child.stdin.end(lines.map(line).join(""));
  });
}

describe("toolgate serve --log: attempt events", () => {
  it("a module exporting tools: each line carries its attempts (a transient failure, then success)", async () => {
    const [logged, ...rest] = await serveAndLog("test/cli/fixtures/flaky-tools.ts", [...HELLO, call(1, "flaky_once")]);
    expect(rest).toEqual([]);
    expect(logged).toMatchObject({ event: "toolgate.call", "gen_ai.tool.name": "flaky_once", "toolgate.code": "OK", "toolgate.attempts": 2 });
    expect(logged!.attempts).toHaveLength(2);
    expect(logged!.attempts[0]).toMatchObject({ "toolgate.attempt.number": 1, "toolgate.attempt.outcome": "transient", "toolgate.attempt.backoff_ms": expect.any(Number) });
    expect(logged!.attempts[1]).toMatchObject({ "toolgate.attempt.number": 2, "toolgate.attempt.outcome": "success" });
  });

  it("a module exporting a ready gate: each line carries its attempts too, once each", async () => {
    const [logged, ...rest] = await serveAndLog("test/fixtures/mcp/codes.ts", [...HELLO, call(1, "flaky_read")]);
    expect(rest).toEqual([]);
    expect(logged).toMatchObject({ "gen_ai.tool.name": "flaky_read", "toolgate.code": "RETRYABLE", "toolgate.attempts": 2 });
    expect(logged!.attempts).toHaveLength(2);
    expect(logged!.attempts[0]).toMatchObject({ "toolgate.attempt.number": 1, "toolgate.attempt.outcome": "transient", "toolgate.attempt.backoff_ms": expect.any(Number) });
    expect(logged!.attempts[1]).toMatchObject({ "toolgate.attempt.number": 2, "toolgate.attempt.outcome": "transient" });
  });
});

describe("toolgate proxy --log: attempt events", () => {
  it("each line carries the attempts of the call the proxy forwarded", async () => {
    const file = join(tempDir(), "calls.jsonl");
    const client = new Client({ name: "call-log-test", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [...CLI, "proxy", "--no-lock", "--log", file, "--", process.execPath, UPSTREAM],
        cwd: ROOT,
        stderr: "pipe",
        env: { PATH: process.env.PATH ?? "" },
      }),
    );
    try {
      const r = await client.callTool({ name: "echo", arguments: { text: "hi" } });
      expect(r.isError).toBeFalsy();
      const bad = await client.callTool({ name: "echo", arguments: { text: 42 } });
      expect(bad.isError).toBe(true);
    } finally {
      await client.close();
    }
    const logged = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Logged);
    expect(logged).toHaveLength(2);
    expect(logged[0]).toMatchObject({ "gen_ai.tool.name": "echo", "toolgate.code": "OK", "toolgate.attempts": 1 });
    expect(logged[0]!.attempts).toEqual([expect.objectContaining({ "toolgate.attempt.number": 1, "toolgate.attempt.outcome": "success" })]);
    // Refused before the upstream: no attempt ran.
    expect(logged[1]).toMatchObject({ "toolgate.code": "INVALID_INPUT", "toolgate.attempts": 0, attempts: [] });
  });
});

describe("createProxy({ hooks })", () => {
  it.each([
    [42, /hooks must be an object/],
    [{ onAttempt: "no" }, /hooks\.onAttempt must be a function/],
    [{ onCal: () => undefined }, /hooks\.onCal is not a hook \(onCall, onAttempt, onBreakerChange\)/],
  ])("refuses %j before the upstream starts", async (hooks, message) => {
    await expect(
      createProxy({ upstream: { kind: "stdio", command: "/nonexistent/never-started", args: [] }, hooks: hooks as never }),
    ).rejects.toMatchObject({ code: "E_PROXY_CONFIG", message: expect.stringMatching(message) });
  });

  it("instrument alone (no hooks): the call log still hears each attempt, and not the admission check's", async () => {
    const calls: CallLogEvent[] = [];
    const log = createCallLog({ sink: (_l, e) => void (e.event === "toolgate.call" && calls.push(e)) });
    const proxy = await createProxy({
      upstream: { kind: "stdio", command: process.execPath, args: [UPSTREAM], env: { PATH: process.env.PATH ?? "" } },
      // A rate limit sends `fail` through the admission's own argument check (a call whose no-op attempt succeeds).
      config: { tools: { fail: { rateLimit: { perSecond: 1_000, burst: 1_000 } } } },
      instrument: (gate) => log.instrument(gate),
    });
    try {
      const r = await proxy.gate.call("echo", { text: "hi" });
      expect(r.ok).toBe(true);
      const failed = await proxy.gate.call("fail", {});
      expect(failed).toMatchObject({ ok: false, meta: { attempts: 1 } });
      expect(calls).toHaveLength(2);
      expect(calls[0]!.attempts).toEqual([expect.objectContaining({ "toolgate.attempt.number": 1, "toolgate.attempt.outcome": "success" })]);
      expect(calls[1]!.attempts).toEqual([expect.objectContaining({ "toolgate.attempt.number": 1, "toolgate.attempt.outcome": expect.not.stringMatching(/^success$/) })]);
    } finally {
      await proxy.close();
    }
  });

  it("passes the hooks to the gate it builds: onAttempt sees each attempt", async () => {
    const seen: unknown[] = [];
    const proxy = await createProxy({
      upstream: { kind: "stdio", command: process.execPath, args: [UPSTREAM], env: { PATH: process.env.PATH ?? "" } },
      hooks: { onAttempt: (e) => void seen.push([e.tool, e.attempt, e.outcome]) },
    });
    try {
      const r = await proxy.gate.call("echo", { text: "hi" });
      expect(r.ok).toBe(true);
      expect(seen).toEqual([["echo", 1, "success"]]);
    } finally {
      await proxy.close();
    }
  });
});
