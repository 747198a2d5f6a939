/**
 * The `--http` flags shared by `serve` and `proxy`: parsed and checked in full (the same checks as
 * `serveHttp`) before a command loads a module or starts an upstream, so a bad flag costs nothing.
 * @module
 */
import { CliError } from "./command.js";
import { checkHttpOptions, ownHostNames, type HttpOptions } from "../mcp/http.js";
import { isToolgateConfigError } from "../errors.js";

/** The `parseArgs` options of the HTTP flags. */
export const httpFlagOptions = {
  http: { type: "string" },
  "allow-remote": { type: "boolean" },
  "token-env": { type: "string" },
  origin: { type: "string", multiple: true },
  "allowed-host": { type: "string", multiple: true },
} as const;

/** The parsed values of {@link httpFlagOptions}. */
export interface HttpFlagValues {
  readonly http?: string | undefined;
  readonly "allow-remote"?: boolean | undefined;
  readonly "token-env"?: string | undefined;
  readonly origin?: string[] | undefined;
  readonly "allowed-host"?: string[] | undefined;
}

/** Usage lines of the HTTP flags, for a command's `--help`. */
export const httpFlagUsage = `  --http <host:port>       Streamable HTTP instead of stdio, e.g. 127.0.0.1:8080 (port 0: pick one)
  --allow-remote           allow --http on a non-loopback address
  --allowed-host <name>    an accepted Host header, name or name:port (repeatable; needed for 0.0.0.0 / [::];
                           the loopback names and the --http address stay accepted)
  --token-env <VAR>        require "Authorization: Bearer <token>" (≥ 16 characters), token read from env VAR
  --origin <origin>        an accepted Origin, scheme://host[:port] (repeatable; default: those of the --http address and the loopback names)`;

/**
 * Parse `host:port` (`[::1]:8080` for IPv6).
 * @example parseHostPort("[::1]:8080"); // { host: "::1", port: 8080 }
 */
export function parseHostPort(s: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(s);
  const port = m === null ? NaN : Number(m[3]);
  if (m === null || !(port >= 0 && port <= 65535)) throw new CliError("E_USAGE", `--http expects host:port, got ${JSON.stringify(s)}`);
  return { host: (m[1] ?? m[2])!, port };
}

/**
 * Turn the HTTP flags into checked {@link HttpOptions}, or `undefined` without `--http`. Throws
 * {@link CliError} `E_USAGE` for anything `serveHttp` would refuse, naming the flag.
 * @example const http = httpOptionsFromFlags(values); // before any module or upstream is started
 */
export function httpOptionsFromFlags(values: HttpFlagValues): HttpOptions | undefined {
  if (values.http === undefined) {
    const stray = (["allow-remote", "token-env", "origin", "allowed-host"] as const).filter((f) => values[f] !== undefined && values[f] !== false);
    if (stray.length > 0) throw new CliError("E_USAGE", `--allow-remote, --allowed-host, --token-env and --origin apply to --http only (got ${stray.map((f) => `--${f}`).join(", ")})`);
    return undefined;
  }
  const { host, port } = parseHostPort(values.http);
  let token: string | undefined;
  const tokenEnv = values["token-env"];
  if (tokenEnv !== undefined) {
    token = process.env[tokenEnv];
    if (token === undefined || token.length === 0) throw new CliError("E_USAGE", `--token-env: environment variable ${tokenEnv} is not set`);
    if (token.length < 16) throw new CliError("E_USAGE", `--token-env: the token in ${tokenEnv} is ${token.length} characters; use at least 16 (e.g. openssl rand -hex 24)`);
  }
  const named = values["allowed-host"];
  // The loopback names stay accepted (a local client), and the bound address's own names (any
  // 127.x address too: the printed URL must work), none for a wildcard.
  const allowedHosts = named === undefined ? undefined : [...named, "127.0.0.1", "localhost", "[::1]", ...ownHostNames(host)];
  const options: HttpOptions = {
    host,
    port,
    allowNonLoopback: values["allow-remote"] === true,
    ...(token !== undefined ? { token } : {}),
    ...(values.origin !== undefined ? { allowedOrigins: values.origin } : {}),
    ...(allowedHosts !== undefined ? { allowedHosts } : {}),
  };
  try {
    checkHttpOptions(options);
  } catch (e) {
    if (!isToolgateConfigError(e)) throw e;
    throw new CliError("E_USAGE", cliMessage(e.message));
  }
  return options;
}

/** serveHttp's message in the CLI's words (flags instead of option names). */
function cliMessage(m: string): string {
  return m
    .replace(/^serveHttp: /, "--http: ")
    .replace("(pass allowNonLoopback: true, or --allow-remote on the CLI)", "(pass --allow-remote)")
    .replace("(allowedHosts, or --allowed-host on the CLI)", "(--allowed-host)")
    .replace(/^--http: allowedHosts: /, "--allowed-host: ")
    .replace(/^--http: allowedOrigins: /, "--origin: ");
}
