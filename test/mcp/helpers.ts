/** Shared helpers of the MCP tests: spawn the CLI, connect the official client, the envelope schema. */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const CLI = ["--import", "tsx", "src/cli/main.ts"];
export const fixture = (name: string): string => `test/fixtures/mcp/${name}`;

/** The envelope as DESIGN.md defines it, strictly: what `_meta["toolgate/result"]` must parse as. */
const CallMetaSchema = z.strictObject({
  tool: z.string(),
  version: z.string(),
  callId: z.string().min(1),
  attempts: z.number().int().min(0),
  durationMs: z.number().min(0),
  replayed: z.boolean().optional(),
});
export const FailureSchema = z.strictObject({
  ok: z.literal(false),
  code: z.enum(["UNKNOWN_TOOL", "INVALID_INPUT", "DENIED", "CONFLICT", "REJECTED", "RETRYABLE", "INVALID_OUTPUT", "FAILED"]),
  message: z.string().min(1).max(200),
  issues: z.array(z.strictObject({ path: z.string(), code: z.string(), message: z.string() })).optional(),
  retryable: z.boolean(),
  retryAfterMs: z.number().int().min(0).optional(),
  effect: z.enum(["none", "applied", "unknown"]),
  effects: z.array(z.strictObject({ kind: z.string(), ref: z.string() })).optional(),
  meta: CallMetaSchema,
});
export { CallMetaSchema };

/** Connect the v1 SDK client to `toolgate serve <module>` over stdio. */
export async function connectServe(module: string, extra: readonly string[] = []): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...CLI, "serve", module, ...extra],
    cwd: ROOT,
    stderr: "pipe",
  });
  const client = new Client({ name: "toolgate-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

/** Run the CLI to completion (bounded), capturing output. */
export function runCli(args: readonly string[], { timeoutMs = 20_000, env }: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...CLI, ...args], { cwd: ROOT, env: env ?? process.env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const t = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("close", (code) => {
      clearTimeout(t);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end();
  });
}

/** Spawn `toolgate serve --http 127.0.0.1:0` and wait for its listening line. */
export function spawnHttpServe(module: string, extra: readonly string[] = [], env?: NodeJS.ProcessEnv): Promise<{ url: URL; stop: () => Promise<number | null> }> {
  return spawnListening(["serve", module, "--http", "127.0.0.1:0", ...extra], env);
}

/** Spawn the CLI with `args` (a command that serves HTTP) and wait for its "listening on <url>" line. */
export function spawnListening(args: readonly string[], env?: NodeJS.ProcessEnv): Promise<{ url: URL; stop: () => Promise<number | null> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...CLI, ...args], {
      cwd: ROOT,
      env: env ?? process.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    const t = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`no listening line: ${stderr}`));
    }, 20_000);
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
      const m = /listening on (\S+)/.exec(stderr);
      if (m !== null) {
        clearTimeout(t);
        resolve({
          url: new URL(m[1]!),
          stop: () =>
            new Promise((r) => {
              child.once("close", (code) => r(code));
              child.kill("SIGTERM");
            }),
        });
      }
    });
    child.once("close", (code) => {
      clearTimeout(t);
      reject(new Error(`exited ${String(code)}: ${stderr}`));
    });
  });
}

/** Run the CLI's `main` in this process (for paths that end before serving), capturing its output. */
export async function runMain(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { main } = await import("../../src/cli/main.js");
  let stdout = "";
  let stderr = "";
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  process.stdout.write = ((chunk: string | Uint8Array) => ((stdout += String(chunk)), true)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => ((stderr += String(chunk)), true)) as typeof process.stderr.write;
  try {
    const code = await main(args);
    return { code, stdout, stderr };
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
}
