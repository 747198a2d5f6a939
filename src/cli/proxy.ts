/**
 * `toolgate proxy [options] -- <upstream command…>` (or `--upstream-url`): serve an upstream MCP
 * server's tools through a gate, with Ajv validation, policy and pinned definitions.
 * @module
 */
import { CliError, parseFlags, type Command } from "./command.js";
import { DEFAULT_INHERITED_ENV_VARS, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { httpFlagOptions, httpFlagUsage, httpOptionsFromFlags } from "./http-flags.js";
import { createProxy } from "../mcp/proxy/proxy.js";
import { loadProxyConfig, type ProxyConfig } from "../mcp/proxy/config.js";
import { UpstreamError, type UpstreamSpec } from "../mcp/proxy/upstream.js";
import { serveStdio } from "../mcp/stdio.js";
import { serveHttp } from "../mcp/http.js";
import { isToolgateConfigError } from "../errors.js";
import type { Gate } from "../gate.js";
import { cliCallLog, openCallLog } from "./call-log.js";

const DEFAULT_ENV_LIST = DEFAULT_INHERITED_ENV_VARS.join(", ");

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
  --env <VAR>              pass environment variable VAR to the upstream command (repeatable)
  --inherit-env            pass the proxy's whole environment to the upstream command
                           (default: only ${DEFAULT_ENV_LIST}, plus --env; never the proxy's own token variables)
  --log <where>            one JSON line per call, refusals included: stderr, stdout (with --http only),
                           off, or a file path to append to (default: off)
${httpFlagUsage}
  -h, --help               this help`;

function log(line: string): void {
  process.stderr.write(`toolgate proxy: ${line}\n`);
}

/** An HTTP header name (RFC 9110 token); a value may hold no control character but tab, nor a character fetch cannot send (above U+00FF). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Headers Node's fetch refuses to send (the connection is its own): named here, not at each connection. */
const FETCH_REFUSES = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "expect"]);

function parseHeader(h: string): [string, string] {
  const i = h.indexOf(":");
  if (i <= 0 || h.slice(i + 1).trim() === "") throw new CliError("E_USAGE", `--upstream-header expects "Name: value", got ${JSON.stringify(h)}`);
  const name = h.slice(0, i).trim();
  const value = h.slice(i + 1).trim();
  // Checked here, or fetch refuses it at each connection and the proxy reports a dead upstream (exit 1).
  if (!HEADER_NAME.test(name)) throw new CliError("E_USAGE", `--upstream-header: ${JSON.stringify(name)} is not a valid header name`);
  if (FETCH_REFUSES.has(name.toLowerCase())) throw new CliError("E_USAGE", `--upstream-header: ${name} is set by the connection itself and cannot be sent`);
  // eslint-disable-next-line no-control-regex -- the control characters are what is refused
  if (/[\0-\x08\x0a-\x1f\x7f]|[^\0-\xff]/.test(value)) throw new CliError("E_USAGE", `--upstream-header ${name}: the value must not contain a control character (tab aside) or a character above U+00FF`);
  return [name, value];
}

function envToken(flag: string, name: string): string {
  const v = process.env[name];
  if (v === undefined || v.length === 0) throw new CliError("E_USAGE", `${flag}: environment variable ${name} is not set`);
  return v;
}

/**
 * The upstream command's environment: the SDK's safe defaults (what an MCP host gives a server it
 * starts) plus each `--env` variable, or the whole environment with `--inherit-env`. The proxy's
 * own secrets (`--token-env`, `--upstream-token-env`) are never passed.
 */
export function upstreamEnv(names: readonly string[], inherit: boolean, secrets: readonly string[]): Record<string, string> {
  for (const name of names) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      throw new CliError("E_USAGE", `--env expects a variable name, got ${JSON.stringify(name)} (set the value in the proxy's environment, not in argv)`);
    }
    if (secrets.includes(name)) throw new CliError("E_USAGE", `--env ${name}: that variable holds one of the proxy's own tokens (--token-env, --upstream-token-env); it is never passed to the upstream`);
    if (process.env[name] === undefined) throw new CliError("E_USAGE", `--env: environment variable ${name} is not set`);
  }
  const base: Record<string, string> = inherit
    ? Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined))
    : getDefaultEnvironment();
  for (const name of names) base[name] = process.env[name]!;
  for (const name of secrets) delete base[name];
  return base;
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
      env: { type: "string", multiple: true },
      "inherit-env": { type: "boolean" },
      log: { type: "string" },
      ...httpFlagOptions,
    },
  });
  // Every --http and --log check before the upstream starts or the lock file is written.
  const http = httpOptionsFromFlags(values);
  const callLog = cliCallLog("toolgate proxy", openCallLog(values.log ?? "off", http === undefined), values.log ?? "off");
  // hooks: the attempt events of each call; instrument: every call, the proxy's own refusals too.
  const observe = callLog === undefined ? {} : { hooks: callLog.hooks, instrument: (g: Gate) => callLog.instrument(g) };
  const secrets = [values["token-env"], values["upstream-token-env"]].filter((v): v is string => v !== undefined);
  let upstream: UpstreamSpec;
  if (values["upstream-url"] !== undefined) {
    if (command.length > 0) throw new CliError("E_USAGE", "give either --upstream-url or -- <command>, not both");
    if (values.env !== undefined || values["inherit-env"] === true) throw new CliError("E_USAGE", "--env and --inherit-env apply to an upstream command (-- <command>) only");
    let url: URL;
    try {
      url = new URL(values["upstream-url"]);
    } catch {
      throw new CliError("E_USAGE", `--upstream-url is not a URL: ${JSON.stringify(values["upstream-url"])}`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new CliError("E_USAGE", "--upstream-url must be http: or https:");
    // fetch refuses such a URL anyway, and its error would print the password: say so before.
    if (url.username !== "" || url.password !== "") {
      throw new CliError("E_USAGE", "--upstream-url must not carry a user or password (user:password@host); send credentials as --upstream-header or --upstream-token-env");
    }
    const headers = Object.fromEntries((values["upstream-header"] ?? []).map(parseHeader));
    if (values["upstream-token-env"] !== undefined) headers.Authorization = `Bearer ${envToken("--upstream-token-env", values["upstream-token-env"])}`;
    upstream = { kind: "http", url, headers };
  } else {
    if (command.length === 0) throw new CliError("E_USAGE", "expected an upstream: -- <command> [args…] or --upstream-url <url>");
    if (values["upstream-header"] !== undefined || values["upstream-token-env"] !== undefined) {
      throw new CliError("E_USAGE", "--upstream-header and --upstream-token-env apply to --upstream-url only");
    }
    upstream = { kind: "stdio", command: command[0]!, args: command.slice(1), env: upstreamEnv(values.env ?? [], values["inherit-env"] === true, secrets) };
  }
  if (values["no-lock"] === true && (values.lock !== undefined || values["update-lock"] === true)) {
    throw new CliError("E_USAGE", "--no-lock cannot be combined with --lock or --update-lock");
  }
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
      ...observe,
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
    const server = await serveHttp(() => proxy.createServer(), http).catch((e: unknown) => {
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
