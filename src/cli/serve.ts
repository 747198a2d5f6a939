/**
 * `toolgate serve <module> [--http host:port]`: serve a module's tools over MCP (stdio by default).
 * @module
 */
import { basename, extname } from "node:path";
import { CliError, parseFlags, type Command } from "./command.js";
import { loadGate } from "./load.js";
import { createMcpServer } from "../mcp/server.js";
import { serveStdio } from "../mcp/stdio.js";
import { serveHttp } from "../mcp/http.js";
import { isToolgateConfigError } from "../errors.js";
import { createWriteStream } from "node:fs";
import { createCallLog, jsonLineSink } from "../log/index.js";
import type { Gate } from "../gate.js";

const usage = `Usage: toolgate serve <module> [options]

Serve the tools of <module> (default export: a gate or an array of defineTool values) over MCP.
Speaks stdio unless --http is given.

Options:
  --http <host:port>     Streamable HTTP instead of stdio, e.g. 127.0.0.1:8080 (port 0: pick one)
  --allow-remote         allow --http on a non-loopback address
  --token-env <VAR>      require "Authorization: Bearer <token>" with the token read from env VAR
  --origin <origin>      an accepted Origin (repeatable; default: the loopback origins of the port)
  --name <name>          server name in initialize (default: the module's file name)
  --server-version <v>   server version in initialize (default: 0.0.0)
  --log <where>          one JSON line per call: stdout, stderr, off, or a file path to append to
                         (default: stdout with --http; stderr with stdio, whose stdout is the protocol)
  -h, --help             this help`;

/** Wrap the gate with a call log writing where `--log` says (never stdout on stdio). */
function withCallLog(gate: Gate, where: string | undefined, stdio: boolean): Gate {
  const target = where ?? (stdio ? "stderr" : "stdout");
  if (target === "off") return gate;
  if (target === "stdout" && stdio) throw new CliError("E_USAGE", "--log stdout would corrupt the stdio protocol; use stderr, off or a file");
  const stream = target === "stdout" ? process.stdout : target === "stderr" ? process.stderr : createWriteStream(target, { flags: "a" });
  return createCallLog({ sink: jsonLineSink(stream) }).instrument(gate);
}

/** Parse `host:port` (`[::1]:8080` for IPv6). */
export function parseHostPort(s: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(s);
  const port = m === null ? NaN : Number(m[3]);
  if (m === null || !(port >= 0 && port <= 65535)) throw new CliError("E_USAGE", `--http expects host:port, got ${JSON.stringify(s)}`);
  return { host: (m[1] ?? m[2])!, port };
}

async function run(argv: readonly string[]): Promise<number> {
  const parsed = parseFlags({
    args: [...argv],
    allowPositionals: true,
    options: {
      http: { type: "string" },
      "allow-remote": { type: "boolean" },
      "token-env": { type: "string" },
      origin: { type: "string", multiple: true },
      name: { type: "string" },
      "server-version": { type: "string" },
      log: { type: "string" },
    },
  });
  const { values, positionals } = parsed;
  if (positionals.length !== 1) throw new CliError("E_USAGE", positionals.length === 0 ? "expected a module path" : "expected exactly one module path");
  const modulePath = positionals[0]!;
  if (values.http === undefined && (values["token-env"] !== undefined || values["allow-remote"] === true || values.origin !== undefined)) {
    throw new CliError("E_USAGE", "--token-env, --allow-remote and --origin apply to --http only");
  }
  let token: string | undefined;
  if (values["token-env"] !== undefined) {
    token = process.env[values["token-env"]];
    if (token === undefined || token.length === 0) throw new CliError("E_USAGE", `--token-env: environment variable ${values["token-env"]} is not set`);
  }
  const gate = withCallLog(await loadGate(modulePath), values.log, values.http === undefined);
  const info = { name: values.name ?? basename(modulePath, extname(modulePath)), version: values["server-version"] ?? "0.0.0" };
  try {
    createMcpServer(gate, info); // check the listing once, before any client connects
  } catch (e) {
    if (isToolgateConfigError(e)) throw new CliError("E_MODULE_TOOL", `${modulePath}: ${e.message}`);
    throw e;
  }
  if (values.http === undefined) {
    const handle = await serveStdio(createMcpServer(gate, info));
    const stop = (): void => void handle.close();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    await handle.closed;
    return 0;
  }
  const { host, port } = parseHostPort(values.http);
  let http;
  try {
    http = await serveHttp(() => createMcpServer(gate, info), {
      host,
      port,
      allowNonLoopback: values["allow-remote"] === true,
      ...(token !== undefined ? { token } : {}),
      ...(values.origin !== undefined ? { allowedOrigins: values.origin } : {}),
    });
  } catch (e) {
    if (isToolgateConfigError(e)) throw new CliError("E_USAGE", e.message);
    const code = typeof e === "object" && e !== null ? (e as { code?: unknown }).code : undefined;
    throw new CliError("E_LISTEN", `cannot listen on ${values.http}: ${typeof code === "string" ? code : e instanceof Error ? e.message : String(e)}`);
  }
  process.stderr.write(`toolgate serve: listening on ${http.url.href}\n`);
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await http.close();
  return 0;
}

const serve: Command = { summary: "Serve a module's tools over MCP (stdio or Streamable HTTP)", usage, run };
export default serve;
