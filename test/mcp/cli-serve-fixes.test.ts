/**
 * `toolgate serve`: --log targets that cannot be opened or written, a TypeScript module with a
 * syntax error, and stdin ending while calls are in flight (they still answer, as with the SDK's
 * own stdio server).
 */
import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { createMcpServer, serveStdio } from "../../src/mcp/index.js";
import gate from "../fixtures/mcp/codes.js";
import { CLI, ROOT, runCli, runMain } from "./helpers.js";
import { tempDir } from "./proxy-helpers.js";

const line = (m: unknown): string => JSON.stringify(m) + "\n";
const HELLO = [
  { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } },
  { jsonrpc: "2.0", method: "notifications/initialized" },
];
const slowCall = (id: number, ms: number) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "slow", arguments: { ms } } });

/** Run `toolgate serve` over stdio with these input lines (stdin then ends); bounded. */
function serveLines(args: readonly string[], lines: readonly unknown[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...CLI, "serve", ...args], { cwd: ROOT, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const t = setTimeout(() => child.kill("SIGKILL"), 20_000);
    child.on("close", (code) => {
      clearTimeout(t);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(lines.map(line).join(""));
  });
}

const answers = (stdout: string): { id?: unknown; result?: { isError?: boolean; structuredContent?: unknown } }[] =>
  stdout
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as { id?: unknown });

describe("toolgate serve --log", () => {
  it("a file that cannot be opened is a usage error before anything is served", async () => {
    const r = await runMain(["serve", "test/fixtures/mcp/codes.ts", "--log", "/nonexistent/dir/calls.log"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--log: cannot open \/nonexistent\/dir\/calls.log: ENOENT \(E_USAGE\)/);
    expect(r.stdout).toBe("");
  });

  it("a file appends one JSON line per call", async () => {
    const file = join(tempDir(), "calls.log");
    const r = await serveLines(["test/fixtures/mcp/codes.ts", "--log", file], [...HELLO, slowCall(1, 1), slowCall(2, 1)]);
    expect(r.code).toBe(0);
    expect(answers(r.stdout).filter((m) => m.id === 1 || m.id === 2)).toHaveLength(2);
    const { readFileSync } = await import("node:fs");
    const logged = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logged).toHaveLength(2);
    expect(logged[0]).toMatchObject({ event: "toolgate.call", "gen_ai.tool.name": "slow" });
  });

  it.runIf(existsSync("/dev/full"))("a write error later is reported once and the server keeps answering", async () => {
    const r = await serveLines(["test/fixtures/mcp/codes.ts", "--log", "/dev/full"], [...HELLO, slowCall(1, 1), slowCall(2, 1), slowCall(3, 1)]);
    expect(r.code).toBe(0);
    expect(answers(r.stdout).filter((m) => m.result?.structuredContent !== undefined).map((m) => m.id)).toEqual([1, 2, 3]);
    expect(r.stderr.match(/--log \/dev\/full: write failed \(ENOSPC\); call logging stopped/g)).toHaveLength(1);
  });
});

describe("loading a TypeScript module with a syntax error", () => {
  it("names the file, line, column and the error", async () => {
    const file = join(tempDir(), "syn.ts");
    writeFileSync(file, "export default [ ;\n");
    const r = await runCli(["serve", file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`cannot import ${file}: ${file}:1:17: Unexpected ";" (E_MODULE_IMPORT)`);
  });
});

describe("stdin ends while calls are in flight", () => {
  it("toolgate serve still answers them, then exits 0", async () => {
    const r = await serveLines(["test/fixtures/mcp/codes.ts", "--log", "off"], [...HELLO, slowCall(1, 150), slowCall(2, 50)]);
    expect(r.code).toBe(0);
    const byId = new Map(answers(r.stdout).map((m) => [m.id, m]));
    expect(byId.get(1)?.result?.structuredContent).toEqual({ ok: true });
    expect(byId.get(2)?.result?.structuredContent).toEqual({ ok: true });
  });

  it("serveStdio: answers within drainMs, then closes; past drainMs the rest is aborted", async () => {
    for (const [drainMs, expectAnswer] of [
      [5_000, true],
      [0, false],
    ] as const) {
      const stdin = new PassThrough();
      const stdout = new PassThrough();
      let out = "";
      stdout.on("data", (d: Buffer) => (out += d.toString()));
      const handle = await serveStdio(createMcpServer(gate, { name: "codes", version: "1" }), { stdin, stdout, drainMs });
      stdin.end([...HELLO, slowCall(1, 100)].map(line).join(""));
      await handle.closed;
      await new Promise((r) => setImmediate(r));
      const got = answers(out).find((m) => m.id === 1);
      expect(got === undefined ? undefined : got.result?.structuredContent, `drainMs ${drainMs}`).toEqual(expectAnswer ? { ok: true } : undefined);
    }
  });

  it("refuses a bad drainMs", async () => {
    await expect(serveStdio(createMcpServer(gate, { name: "codes", version: "1" }), { stdin: new PassThrough(), stdout: new PassThrough(), drainMs: -1 })).rejects.toMatchObject({
      code: "E_MCP_OPTIONS",
    });
  });
});
