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
import { httpFlagOptions, httpFlagUsage, httpOptionsFromFlags } from "./http-flags.js";
import { cliCallLog, openCallLog } from "./call-log.js";

export { parseHostPort } from "./http-flags.js";

const usage = `Usage: toolgate serve <module> [options]

Serve the tools of <module> (default export: a gate or an array of defineTool values) over MCP.
Speaks stdio unless --http is given.

Options:
${httpFlagUsage}
  --name <name>            server name in initialize (default: the module's file name)
  --server-version <v>     server version in initialize (default: 0.0.0)
  --log <where>            one JSON line per call: stdout, stderr, off, or a file path to append to
                           (default: stdout with --http; stderr with stdio, whose stdout is the protocol).
                           Each line carries the call's attempt events
  -h, --help               this help`;

async function run(argv: readonly string[]): Promise<number> {
  const parsed = parseFlags({
    args: [...argv],
    allowPositionals: true,
    options: {
      ...httpFlagOptions,
      name: { type: "string" },
      "server-version": { type: "string" },
      log: { type: "string" },
    },
  });
  const { values, positionals } = parsed;
  if (positionals.length !== 1) throw new CliError("E_USAGE", positionals.length === 0 ? "expected a module path" : "expected exactly one module path");
  const modulePath = positionals[0]!;
  const httpOptions = httpOptionsFromFlags(values); // every --http check before the module loads
  const callLog = cliCallLog("toolgate serve", openCallLog(values.log, values.http === undefined), values.log ?? (values.http === undefined ? "stderr" : "stdout"));
  // The call log's hooks go into a gate built from an array of tools; a module's ready gate keeps its
  // own, and `instrument` hears each call's attempts with the call. Lines carry attempts either way.
  const loaded = await loadGate(modulePath, callLog === undefined ? {} : { hooks: callLog.hooks });
  const gate = callLog === undefined ? loaded : callLog.instrument(loaded);
  const info = { name: values.name ?? basename(modulePath, extname(modulePath)), version: values["server-version"] ?? "0.0.0" };
  try {
    createMcpServer(gate, info); // check the listing once, before any client connects
  } catch (e) {
    if (isToolgateConfigError(e)) throw new CliError("E_MODULE_TOOL", `${modulePath}: ${e.message}`);
    throw e;
  }
  if (httpOptions === undefined) {
    const handle = await serveStdio(createMcpServer(gate, info));
    const stop = (): void => void handle.close();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    await handle.closed;
    return 0;
  }
  let http;
  try {
    http = await serveHttp(() => createMcpServer(gate, info), httpOptions);
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
