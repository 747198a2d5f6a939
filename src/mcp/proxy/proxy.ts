/**
 * `createProxy`: put a gate in front of any MCP server. Each upstream tool becomes a
 * `defineTool` whose input and output are Ajv-backed Standard Schemas of the upstream's own
 * JSON Schemas, so every call gets the gate's hardening, validation, envelope, timeout, retry
 * (reads marked in the config only) and breaker; definitions are pinned in a lock file.
 * @module
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Tool as SdkTool } from "@modelcontextprotocol/sdk/types.js";
import { createGate, type Gate } from "../../gate.js";
import { defineTool, type AnyTool } from "../../tool.js";
import type { Limits } from "../../harden.js";
import { onAttemptAbort } from "../../attempt.js";
import type { CallMeta } from "../../result.js";
import { _createMcpServer } from "../server.js";
import { toMcpTool, type McpTool } from "../listing.js";
import { CALL_META_KEY, PROXIED_META_KEY, type McpToolResult } from "../result.js";
import { ajvStandardSchema, createAjvCompilers, type AjvCompilers } from "./ajv.js";
import { checkPin, lockChanges, readLock, writeLock, type LockFile } from "./pin.js";
import { createUpstream, UpstreamError, type InvalidTool, type Upstream, type UpstreamSpec } from "./upstream.js";
import { admissionGate, deniedFor, deniedMessage, DUPLICATE, PLACEHOLDER_TOOL, type AdmissionState } from "./admission.js";
import { hashOf, nameCounts, recheckTools, versionOf, type PinState } from "./relist.js";
import { denied } from "../../errors.js";
import { tokenBucket, type Bucket } from "./rate.js";
import type { ProxyConfig } from "./config.js";
import { outputSchemaFor } from "./output.js";
import { forwardMeta, upstreamToolError } from "./upstream-result.js";
import type { HookSet } from "../../log/compose.js";
import { checkHooks, checkInstrument, instrumented } from "./observers.js";
import { checkProxyOptions } from "./options.js";
import { scrubLine } from "./error-text.js";
import { isRecord, setOwn } from "../../_record.js";

/** Options of {@link createProxy}. */
export interface ProxyOptions {
  /** The upstream server: a command over stdio or a URL over Streamable HTTP. */
  readonly upstream: UpstreamSpec;
  /** Policy (see docs/mcp.md). Default `{}`: every tool exposed, treated as a write (never retried). */
  readonly config?: ProxyConfig;
  /** Lock file path. Default: no pinning. When the file does not exist it is created (trust on first use). */
  readonly lockPath?: string;
  /** Re-pin every current upstream tool and write the lock file. Default `false`. */
  readonly updateLock?: boolean;
  /** Server info the proxy reports to its clients. Default `{ name: "toolgate-proxy", version: "0.0.0" }`. */
  readonly name?: string;
  readonly version?: string;
  /** Largest message accepted from a stdio upstream, bytes. Default 16 MiB. */
  readonly maxMessageBytes?: number;
  /** Time allowed to connect, initialize and list tools, per attempt, ms. Default 10,000. */
  readonly connectTimeoutMs?: number;
  /** Connection attempts at start-up. Default 3. */
  readonly startAttempts?: number;
  /** Diagnostics (never payloads). Default: none. */
  onLog?(line: string): void;
  /**
   * Wrap the gate the proxy serves, e.g. with a call log or OpenTelemetry spans. `proxy.gate` and
   * every server from `createServer()` call what this returns, so each call is recorded, the
   * proxy's own refusals included (a changed pin, invalid arguments, a rate limit, a down upstream).
   * Default: none.
   * @example instrument: (gate) => createCallLog({ sink: jsonLineSink(process.stderr) }).instrument(gate)
   */
  instrument?(gate: Gate): Gate;
  /**
   * Observation hooks for the gate the proxy builds (`createGate`'s `onCall`, `onAttempt`,
   * `onBreakerChange`), e.g. a call log's `hooks`, so its lines carry each call's attempt events.
   * Pair them with `instrument` of the same recorder. Default: none.
   * @example
   * const log = createCallLog({ sink: jsonLineSink(process.stderr) });
   * const proxy = await createProxy({ upstream, hooks: log.hooks, instrument: (gate) => log.instrument(gate) });
   */
  readonly hooks?: HookSet;
}

/** A running proxy. */
export interface Proxy {
  /**
   * The gate the proxy serves: the upstream's accepted tools, with the proxy's own checks in the
   * pipeline's order (a refused tool is DENIED; arguments are validated; then the upstream's state
   * and the rate limit). What the MCP server calls; a library caller gets the same answers.
   */
  readonly gate: Gate;
  /**
   * Tool name → why it is not served: `changed`, `unpinned`, `listed twice by the upstream` (these
   * three answer DENIED), or a reason it cannot be served (an invalid definition, a schema that
   * does not compile, a name outside `[A-Za-z0-9_-]{1,64}`). Tools left out by allow/deny are not here.
   */
  refused(): ReadonlyMap<string, string>;
  /** A new MCP server for one client connection (stdio, or one per HTTP session). */
  createServer(): Server;
  /** The upstream connection. */
  readonly upstream: Upstream;
  close(): Promise<void>;
}

/** Why a tool whose definition cannot be hashed (so cannot be pinned) is not served. */
const UNHASHABLE = "its definition cannot be hashed, so it cannot be pinned";
/** The DENIED message of a served tool refused for a reason without one of its own. */
const NOT_SERVED = "The proxy no longer serves this tool";

interface Built {
  readonly tool: AnyTool;
  readonly hash: string;
  readonly listing: SdkTool;
}

/** What a built tool reads of the proxy: its upstream, and why the tool is refused now (a DENIED message), if it is. */
interface ToolLinks {
  readonly upstream: Upstream;
  refusedNow(name: string): string | undefined;
}

function buildTool(t: SdkTool, hash: string, config: ProxyConfig, ajv: AjvCompilers, links: ToolLinks): Built | { reason: string } {
  const policy = policyOf(config, t.name) ?? {};
  const defaults = config.defaults ?? {};
  const input = ajv.compile(t.inputSchema as Record<string, unknown>);
  if (!input.ok) return { reason: `its inputSchema does not compile (${input.reason})` };
  const output = outputSchemaFor(t, ajv);
  if (!output.ok) return { reason: output.reason };
  const effect = policy.effect ?? "write";
  const timeoutMs = policy.timeoutMs ?? defaults.timeoutMs ?? 30_000;
  const concurrency = policy.concurrency ?? defaults.concurrency;
  try {
    const tool = defineTool({
      name: t.name,
      version: versionOf(hash),
      description: t.description !== undefined && t.description.length > 0 ? t.description : t.name,
      input: ajvStandardSchema(t.inputSchema as Record<string, unknown>, input.validate),
      output: output.schema,
      effect,
      unknownKeys: "strip", // Ajv enforces the upstream's own additionalProperties; nothing is dropped
      timeoutMs,
      ...(concurrency !== undefined ? { concurrency } : {}),
      retry: effect === "read" ? { attempts: 1 + (policy.retries ?? 2) } : false,
      classify: (e) => (e instanceof UpstreamError ? (e.transient ? { kind: "transient", ...(e.retryAfterMs !== undefined ? { retryAfterMs: e.retryAfterMs } : {}) } : "permanent") : undefined),
      // One promise per attempt (no async function around it): the upstream's answer, or its tool
      // error thrown. A tool refused since the call was admitted (a retry after a restart that
      // re-listed it changed) gets no further attempt: DENIED, nothing sent.
      execute: (args, ctx) => {
        const refusal = links.refusedNow(t.name);
        if (refusal !== undefined) return Promise.reject(denied(refusal));
        return links.upstream.call(t.name, args, forwardMeta(ctx.meta), onAttemptAbort(ctx), timeoutMs).then((result) => {
          if (result.isError === true) throw upstreamToolError(result, effect);
          return result;
        });
      },
    });
    return { tool, hash, listing: t };
  } catch (e) {
    return { reason: e instanceof Error ? e.message : String(e) };
  }
}

/**
 * Start a proxy: connect the upstream, list its tools, apply allow/deny and pins, build the gate.
 * Throws {@link UpstreamError} when the upstream does not start, `ToolgateConfigError` on a bad lock file.
 * @example
 * const proxy = await createProxy({ upstream: { kind: "stdio", command: "node", args: ["server.js"] }, lockPath: "toolgate.lock.json" });
 * await serveStdio(proxy.createServer());
 */
export async function createProxy(options: ProxyOptions): Promise<Proxy> {
  const config = checkProxyOptions(options);
  checkInstrument(options.instrument);
  const hooks = checkHooks(options.hooks);
  const log = (l: string): void => options.onLog?.(scrubLine(l));
  const refused = new Map<string, string>();
  const pinned = new Map<string, string>();
  const versions = new Map<string, string>();
  const locked = options.lockPath !== undefined;
  let rebuildList: (() => void) | undefined;
  /** Set once the start-up pins are: from then on every listing is checked against them. */
  let checks: PinState | undefined;
  let pending: { list: readonly SdkTool[]; invalid: readonly InvalidTool[] } | undefined;
  const upstream = createUpstream(options.upstream, {
    ...(config.restart?.initialDelayMs !== undefined ? { initialDelayMs: config.restart.initialDelayMs } : {}),
    ...(config.restart?.maxDelayMs !== undefined ? { maxDelayMs: config.restart.maxDelayMs } : {}),
    ...(options.maxMessageBytes !== undefined ? { maxMessageBytes: options.maxMessageBytes } : {}),
    ...(options.connectTimeoutMs !== undefined ? { connectTimeoutMs: options.connectTimeoutMs } : {}),
    ...(options.startAttempts !== undefined ? { startAttempts: options.startAttempts } : {}),
    onLog: (l) => options.onLog?.(l), // the upstream scrubs its own lines
    // A listing that arrives before the pins are set (right after the first tools/list) is kept and
    // checked once they are, before anything is served: no change slips through that window.
    onTools: (list, invalid) => {
      if (checks === undefined) pending = { list, invalid };
      else {
        recheckTools(checks, list, invalid);
        rebuildList?.();
      }
    },
  });
  const tools = await upstream.start();
  try {
    const invalid = upstream.invalidTools();
    const allow = config.allow === undefined ? undefined : new Set(config.allow);
    const deny = new Set(config.deny ?? []);
    const exposed = (name: string): boolean => (allow === undefined || allow.has(name)) && !deny.has(name);
    const lock: LockFile | undefined = options.lockPath === undefined ? undefined : await readLock(options.lockPath);
    const counts = nameCounts(tools, invalid);
    const offered = new Set(counts.keys());
    // Each tool hashed on its own: one that cannot be hashed is refused alone, never the start-up.
    const hashes = new Map<SdkTool, string | undefined>(tools.map((t) => [t, hashOf(t)]));
    for (const t of tools) {
      const h = hashes.get(t);
      if (h !== undefined && !versions.has(t.name)) versions.set(t.name, versionOf(h));
    }
    for (const bad of invalid) {
      if (bad.name !== undefined && exposed(bad.name) && (counts.get(bad.name) ?? 0) === 1) refused.set(bad.name, bad.reason);
    }
    const ajv = createAjvCompilers();
    const built: Built[] = [];
    const lockPins: Record<string, string> = {};
    const links: ToolLinks = { upstream, refusedNow: (name) => (refused.has(name) ? (deniedMessage({ refused, locked }, name) ?? NOT_SERVED) : undefined) };
    for (const t of tools) {
      if (!exposed(t.name)) continue; // not exposed at all
      if ((counts.get(t.name) ?? 0) > 1) {
        if (!refused.has(t.name)) log(`tool ${t.name}: ${DUPLICATE}; not served and not pinned`);
        refused.set(t.name, DUPLICATE);
        continue;
      }
      const hash = hashes.get(t);
      if (hash === undefined) {
        refused.set(t.name, UNHASHABLE);
        log(`tool ${t.name}: not served: ${UNHASHABLE}`);
        continue;
      }
      setOwn(lockPins, t.name, hash); // a tool named __proto__ is pinned like any other
      if (lock !== undefined && options.updateLock !== true) {
        const v = checkPin(lock, t.name, hash);
        if (!v.ok) {
          refused.set(t.name, v.reason);
          log(`tool ${t.name}: ${v.reason === "changed" ? "definition changed since it was pinned" : "not pinned"}; refused until --update-lock`);
          continue;
        }
      }
      const b = buildTool(t, hash, config, ajv, links);
      if ("reason" in b) {
        refused.set(t.name, b.reason);
        log(`tool ${t.name}: not served: ${b.reason}`);
        continue;
      }
      built.push(b);
      pinned.set(t.name, b.hash);
    }
    for (const [where, names] of [["allow", config.allow ?? []], ["deny", config.deny ?? []], ["tools", Object.keys(config.tools ?? {})]] as const) {
      for (const name of names) if (!offered.has(name)) log(`config: ${where} names tool ${name}, which the upstream does not offer`);
    }
    if (built.length === 0) log("no upstream tool is served");
    const limits: Partial<Limits> | undefined = config.limits !== undefined ? definedOnly(config.limits) : undefined;
    const gate = createGate({
      tools: built.length > 0 ? built.map((b) => b.tool) : [placeholderTool()],
      ...(limits !== undefined ? { limits } : {}),
      ...hooks,
    });
    const buckets = new Map<string, Bucket>();
    for (const b of built) {
      const rl = policyOf(config, b.tool.name)?.rateLimit ?? config.defaults?.rateLimit;
      if (rl !== undefined) buckets.set(b.tool.name, tokenBucket(rl));
    }
    let listing: McpTool[] = [];
    /** The servers made by `createServer`, while connected: told when the listing changes. */
    const servers = new Set<Server>();
    rebuildList = () => {
      const before = JSON.stringify(listing.map((t) => t.name));
      listing = built
        .filter((b) => !refused.has(b.tool.name))
        .map((b) => {
          const gl = gate.list().find((l) => l.name === b.tool.name)!;
          const m = toMcpTool(gl);
          return b.listing.title !== undefined ? { ...m, title: b.listing.title } : m;
        });
      if (JSON.stringify(listing.map((t) => t.name)) === before) return;
      for (const s of servers) s.sendToolListChanged().catch(() => undefined); // a client gone meanwhile
    };
    // The pins are set: check the listing that came meanwhile, if any, before anything is served.
    checks = { refused, pinned, versions, locked, log };
    if (pending !== undefined) recheckTools(checks, pending.list, pending.invalid);
    pending = undefined;
    rebuildList();
    const state: AdmissionState = { refused, versions, buckets, upstream, locked };
    const admitted = admissionGate(gate, built.map((b) => b.tool), limits, state);
    const served = options.instrument === undefined ? admitted : instrumented(options.instrument.call(options, admitted));
    // Pins are written last: a proxy that cannot start (a bad instrument) leaves the lock file as it was.
    if (options.lockPath !== undefined && (lock === undefined || options.updateLock === true)) {
      if (lock !== undefined) {
        const diff = lockChanges(lock.tools, lockPins);
        for (const line of diff) log(`lock: ${line}`);
        if (diff.length === 0) log("lock: no tool changed");
      }
      await writeLock(options.lockPath, { version: 1, tools: lockPins });
      log(`pinned ${Object.keys(lockPins).length} tool(s) in ${options.lockPath}`);
    }
    const before = (name: string, callId: string) => deniedFor(state, name, callId);
    // The upstream's result with toolgate's envelope meta under _meta. Its own _meta passes through,
    // except keys in toolgate's namespace (no spoofed envelopes). Copied key by key: on Node 20 a
    // spread of the parsed result followed by one more key costs about 1 µs (V8 leaves its fast
    // path for the copy), more than the rest of the proxy's own work on the answer.
    const success = (data: unknown, meta: CallMeta): McpToolResult => {
      const r = data as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const k in r) if (k !== "_meta" && Object.hasOwn(r, k)) setOwn(out, k, r[k]);
      const m: Record<string, unknown> = {};
      const upstreamMeta = r._meta;
      if (isRecord(upstreamMeta)) {
        for (const k in upstreamMeta) if (Object.hasOwn(upstreamMeta, k) && !k.startsWith("toolgate/")) setOwn(m, k, upstreamMeta[k]);
      }
      m[CALL_META_KEY] = meta;
      m[PROXIED_META_KEY] = true;
      out._meta = m;
      return out as McpToolResult;
    };
    const info = { name: options.name ?? "toolgate-proxy", version: options.version ?? "0.0.0" };
    return {
      gate: served,
      upstream,
      refused: () => refused,
      createServer: () => {
        const server = _createMcpServer(served, info, { tools: () => listing, listChanged: true, before, success });
        const closed = server.onclose;
        server.oninitialized = () => void servers.add(server);
        server.onclose = () => {
          servers.delete(server);
          closed?.();
        };
        return server;
      },
      close: () => upstream.close(),
    };
  } catch (e) {
    await upstream.close();
    throw e;
  }
}

/** A tool's own policy (an own key only: a tool named `constructor` has none unless the config gives it one). */
function policyOf(config: ProxyConfig, name: string): NonNullable<ProxyConfig["tools"]>[string] | undefined {
  return config.tools !== undefined && Object.hasOwn(config.tools, name) ? config.tools[name] : undefined;
}

function definedOnly<T extends object>(o: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as { [K in keyof T]: Exclude<T[K], undefined> };
}

/** A gate needs one tool; when nothing is served, an unlisted placeholder keeps the server answering UNKNOWN_TOOL. */
function placeholderTool(): AnyTool {
  return defineTool({
    name: PLACEHOLDER_TOOL,
    version: "0",
    description: "placeholder",
    input: ajvStandardSchema({ type: "object" }, Object.assign(() => false, { errors: null }) as never),
    output: ajvStandardSchema({ type: "object" }, Object.assign(() => false, { errors: null }) as never),
    effect: "read",
    execute: () => ({}),
  });
}
