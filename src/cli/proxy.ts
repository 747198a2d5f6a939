/**
 * `toolgate proxy [options] -- <upstream command…>` (or `--upstream-url`): serve an upstream MCP
 * server's tools through a gate, with Ajv validation, policy and pinned definitions.
 * @module
 */
import { CliError, parseFlags, type Command } from "./command.js";
import { parseHostPort } from "./serve.js";
import { createProxy } from "../mcp/proxy/proxy.js";
import { loadProxyConfig, type ProxyConfig } from "../mcp/proxy/config.js";
import { UpstreamError, type UpstreamSpec } from "../mcp/proxy/upstream.js";
import { serveStdio } from "../mcp/stdio.js";
import { serveHttp } from "../mcp/http.js";
import { isToolgateConfigError } from "../errors.js";

const usage = `Usage: toolgate proxy [options] -- <upstream command> [args…]
       toolgate proxy [options] --upstream-url <url>

Serve an upstream MCP server's tools through toolgate: arguments and results are validated
against the upstream's own schemas (Ajv), failures are toolgate envelopes, per-tool policy comes
from --config, and tool definitions are pinned in a lock file.

Options:
  --config <file>          JSON policy file (allow, deny, defaults, tools.<name>.effect/retries/timeoutMs/concurrency/rateLimit)
  --lock <file>            lock file of pinned tool definitions (default: toolgate.lock.json)
  --no-lock                do not pin tool definitions
  --update-lock            re-approve: pin every current upstream tool, then serve
  --upstream-url <url>     Streamable HTTP upstream instead of a command
  --upstream-header <h>    "Name: value" header for --upstream-url (repeatable)
  --upstream-token-env <VAR>  send "Authorization: Bearer <token>" to --upstream-url, token from env VAR
  --http <host:port>       serve clients over Streamable HTTP instead of stdio
  --allow-remote           allow --http on a non-loopback address
  --token-env <VAR>        with --http: require a bearer token from clients, read from env VAR
  -h, --help               this help`;

function log(line: string): void {
  process.stderr.write(`toolgate proxy: ${line}\n`);
}

function parseHeader(h: string): [string, string] {
  const i = h.indexOf(":");
  if (i <= 0 || h.slice(i + 1).trim() === "") throw new CliError("E_USAGE", `--upstream-header expects "Name: value", got ${JSON.stringify(h)}`);
  return [h.slice(0, i).trim(), h.slice(i + 1).trim()];
}

function envToken(flag: string, name: string): string {
  const v = process.env[name];
  if (v === undefined || v.length === 0) throw new CliError("E_USAGE", `${flag}: environment variable ${name} is not set`);
  return v;
}

async function run(argv: readonly string[]): Promise<number> {
  const sep = argv.indexOf("--");
  const own = sep === -1 ? [...argv] : argv.slice(0, sep);
  const command = sep === -1 ? [] : argv.slice(sep + 1);
  const { values } = parseFlags({
    args: own,
    allowPositionals: false,
    options: {
      config: { type: "string" },
      lock: { type: "string" },
      "no-lock": { type: "boolean" },
      "update-lock": { type: "boolean" },
      "upstream-url": { type: "string" },
      "upstream-header": { type: "string", multiple: true },
      "upstream-token-env": { type: "string" },
      "token-env": { type: "string" },
      http: { type: "string" },
      "allow-remote": { type: "boolean" },
    },
  });
  let upstream: UpstreamSpec;
  if (values["upstream-url"] !== undefined) {
    if (command.length > 0) throw new CliError("E_USAGE", "give either --upstream-url or -- <command>, not both");
    let url: URL;
    try {
      url = new URL(values["upstream-url"]);
    } catch {
      throw new CliError("E_USAGE", `--upstream-url is not a URL: ${JSON.stringify(values["upstream-url"])}`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new CliError("E_USAGE", "--upstream-url must be http: or https:");
    const headers = Object.fromEntries((values["upstream-header"] ?? []).map(parseHeader));
    if (values["upstream-token-env"] !== undefined) headers.Authorization = `Bearer ${envToken("--upstream-token-env", values["upstream-token-env"])}`;
    upstream = { kind: "http", url, headers };
  } else {
    if (command.length === 0) throw new CliError("E_USAGE", "expected an upstream: -- <command> [args…] or --upstream-url <url>");
    if (values["upstream-header"] !== undefined || values["upstream-token-env"] !== undefined) {
      throw new CliError("E_USAGE", "--upstream-header and --upstream-token-env apply to --upstream-url only");
    }
    // The upstream is a command the operator chose: it inherits the proxy's environment.
    const env = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
    upstream = { kind: "stdio", command: command[0]!, args: command.slice(1), env };
  }
  if (values["no-lock"] === true && (values.lock !== undefined || values["update-lock"] === true)) {
    throw new CliError("E_USAGE", "--no-lock cannot be combined with --lock or --update-lock");
  }
  if (values.http === undefined && (values["allow-remote"] === true || values["token-env"] !== undefined)) {
    throw new CliError("E_USAGE", "--allow-remote and --token-env apply to --http only");
  }
  const token = values["token-env"] === undefined ? undefined : envToken("--token-env", values["token-env"]);
  const http = values.http === undefined ? undefined : parseHostPort(values.http);
  let config: ProxyConfig = {};
  try {
    if (values.config !== undefined) config = await loadProxyConfig(values.config);
  } catch (e) {
    if (isToolgateConfigError(e)) throw new CliError(e.code, e.message);
    throw e;
  }
  const lockPath = values["no-lock"] === true ? undefined : (values.lock ?? "toolgate.lock.json");
  let proxy;
  try {
    proxy = await createProxy({
      upstream,
      config,
      ...(lockPath !== undefined ? { lockPath } : {}),
      updateLock: values["update-lock"] === true,
      onLog: log,
    });
  } catch (e) {
    if (isToolgateConfigError(e)) throw new CliError(e.code, e.message);
    if (e instanceof UpstreamError) {
      log(`${e.message} (E_UPSTREAM)`);
      return 1;
    }
    throw e;
  }
  for (const [name, why] of proxy.refused()) if (why === "changed" || why === "unpinned") log(`refusing ${name} (${why})`);
  try {
    if (http === undefined) {
      const handle = await serveStdio(proxy.createServer());
      const stop = (): void => void handle.close();
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
      await handle.closed;
      return 0;
    }
    const server = await serveHttp(() => proxy.createServer(), {
      host: http.host,
      port: http.port,
      allowNonLoopback: values["allow-remote"] === true,
      ...(token !== undefined ? { token } : {}),
    }).catch((e: unknown) => {
      throw isToolgateConfigError(e) ? new CliError("E_USAGE", e.message) : new CliError("E_LISTEN", `cannot listen on ${values.http}: ${e instanceof Error ? e.message : String(e)}`);
    });
    log(`listening on ${server.url.href}`);
    await new Promise<void>((resolve) => {
      process.once("SIGINT", resolve);
      process.once("SIGTERM", resolve);
    });
    await server.close();
    return 0;
  } finally {
    await proxy.close();
  }
}

const proxy: Command = { summary: "Guard any MCP server: validate, enforce policy, pin tool definitions", usage, run };
export default proxy;
