/**
 * `createProxy`'s options, checked before anything starts: a misspelt key is refused with the key
 * it likely meant (`lockpath` would otherwise turn pinning off without a word), the upstream spec
 * is checked for its kind, and a `config` given in code is checked as a config file is.
 * Misuse is `E_PROXY_CONFIG`.
 * @module
 */
import { ToolgateConfigError } from "../../errors.js";
import { checkKnownKeys, optionNames } from "../../known-keys.js";
import { parseProxyConfig, type ProxyConfig } from "./config.js";
import { isRecord } from "../../_record.js";
import type { ProxyOptions } from "./proxy.js";

const PROXY_KEYS = optionNames<ProxyOptions>()([
  "upstream",
  "config",
  "lockPath",
  "updateLock",
  "name",
  "version",
  "maxMessageBytes",
  "connectTimeoutMs",
  "startAttempts",
  "onLog",
  "instrument",
  "hooks",
]);
const STDIO_KEYS = ["kind", "command", "args", "env", "cwd"] as const;
const HTTP_KEYS = ["kind", "url", "headers"] as const;

function bad(message: string): never {
  throw new ToolgateConfigError("E_PROXY_CONFIG", `createProxy: ${message}`);
}

function stringRecord(v: unknown, name: string): void {
  if (v === undefined) return;
  if (!isRecord(v) || Object.values(v).some((x) => typeof x !== "string")) bad(`${name} must be an object of strings`);
}

/** Check `options`; the proxy's config, checked (a copy zod made). */
export function checkProxyOptions(options: ProxyOptions): ProxyConfig {
  if (!isRecord(options)) bad("options must be an object");
  checkKnownKeys(options, PROXY_KEYS, "", bad);
  const u: unknown = options.upstream;
  if (!isRecord(u)) bad('upstream must be { kind: "stdio", command, args } or { kind: "http", url }');
  if (u.kind === "stdio") {
    checkKnownKeys(u, STDIO_KEYS, "upstream.", bad);
    if (typeof u.command !== "string" || u.command.length === 0) bad("upstream.command must be a non-empty string");
    if (!Array.isArray(u.args) || u.args.some((a) => typeof a !== "string")) bad("upstream.args must be an array of strings");
    stringRecord(u.env, "upstream.env");
    if (u.cwd !== undefined && (typeof u.cwd !== "string" || u.cwd.length === 0)) bad("upstream.cwd must be a non-empty string");
  } else if (u.kind === "http") {
    checkKnownKeys(u, HTTP_KEYS, "upstream.", bad);
    if (!(u.url instanceof URL)) bad("upstream.url must be a URL");
    stringRecord(u.headers, "upstream.headers");
  } else bad('upstream.kind must be "stdio" or "http"');
  for (const k of ["maxMessageBytes", "connectTimeoutMs", "startAttempts"] as const) {
    const v = options[k];
    if (v !== undefined && (!Number.isSafeInteger(v) || v < 1)) bad(`${k} must be a positive integer`);
  }
  if (options.lockPath !== undefined && (typeof options.lockPath !== "string" || options.lockPath.length === 0)) bad("lockPath must be a non-empty string");
  if (options.updateLock !== undefined && typeof options.updateLock !== "boolean") bad("updateLock must be a boolean");
  if (options.updateLock === true && options.lockPath === undefined) bad("updateLock needs a lockPath");
  for (const k of ["name", "version"] as const) if (options[k] !== undefined && typeof options[k] !== "string") bad(`${k} must be a string`);
  if (options.onLog !== undefined && typeof options.onLog !== "function") bad("onLog must be a function");
  return options.config === undefined ? {} : parseProxyConfig(options.config, "createProxy: config");
}
