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
import { checkPin, hashTool, lockChanges, readLock, writeLock, type LockFile } from "./pin.js";
import { createUpstream, UpstreamError, type InvalidTool, type Upstream, type UpstreamSpec } from "./upstream.js";
import { admissionGate, deniedFor, DUPLICATE, PLACEHOLDER_TOOL, REMOVED, type AdmissionState } from "./admission.js";
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

/** A tool's `version` in envelopes: the first 12 hex digits of its pin hash. */
const versionOf = (t: SdkTool): string => hashTool(t).slice(7, 19);

interface Built {
  readonly tool: AnyTool;
  readonly hash: string;
  readonly listing: SdkTool;
}

function buildTool(t: SdkTool, config: ProxyConfig, ajv: AjvCompilers, upstream: Upstream): Built | { reason: string } {
  const policy = config.tools?.[t.name] ?? {};
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
      version: versionOf(t),
      description: t.description !== undefined && t.description.length > 0 ? t.description : t.name,
      input: ajvStandardSchema(t.inputSchema as Record<string, unknown>, input.validate),
      output: output.schema,
      effect,
      unknownKeys: "strip", // Ajv enforces the upstream's own additionalProperties; nothing is dropped
      timeoutMs,
      ...(concurrency !== undefined ? { concurrency } : {}),
      retry: effect === "read" ? { attempts: 1 + (policy.retries ?? 2) } : false,
      classify: (e) => (e instanceof UpstreamError ? (e.transient ? { kind: "transient", ...(e.retryAfterMs !== undefined ? { retryAfterMs: e.retryAfterMs } : {}) } : "permanent") : undefined),
      // One promise per call (no async function around it): the upstream's answer, or its tool error thrown.
      execute: (args, ctx) =>
        upstream.call(t.name, args, forwardMeta(ctx.meta), onAttemptAbort(ctx), timeoutMs).then((result) => {
          if (result.isError === true) throw upstreamToolError(result, effect);
          return result;
        }),
    });
    return { tool, hash: hashTool(t), listing: t };
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
  let rebuildList: (() => void) | undefined;
  const upstream = createUpstream(options.upstream, {
    ...(config.restart?.initialDelayMs !== undefined ? { initialDelayMs: config.restart.initialDelayMs } : {}),
    ...(config.restart?.maxDelayMs !== undefined ? { maxDelayMs: config.restart.maxDelayMs } : {}),
    ...(options.maxMessageBytes !== undefined ? { maxMessageBytes: options.maxMessageBytes } : {}),
    ...(options.connectTimeoutMs !== undefined ? { connectTimeoutMs: options.connectTimeoutMs } : {}),
    ...(options.startAttempts !== undefined ? { startAttempts: options.startAttempts } : {}),
    onLog: (l) => options.onLog?.(l), // the upstream scrubs its own lines
    onTools: (list, invalid) => {
      // A served tool whose definition changed, is listed twice, or is no longer a valid tool is refused from now on.
      const counts = nameCounts(list, invalid);
      const changed = (name: string, why: string): void => {
        if (!pinned.has(name) || refused.get(name) === "changed") return;
        refused.set(name, "changed");
        log(`tool ${name}: ${why}; refused until --update-lock`);
      };
      for (const t of list) {
        const pin = pinned.get(t.name);
        if (pin === undefined) continue;
        if ((counts.get(t.name) ?? 0) > 1) changed(t.name, DUPLICATE);
        else if (pin !== hashTool(t)) {
          changed(t.name, "definition changed since it was pinned");
          versions.set(t.name, versionOf(t)); // DENIED names the refused definition
        }
      }
      for (const bad of invalid) if (bad.name !== undefined) changed(bad.name, "definition is no longer a valid MCP tool");
      // A served tool the list no longer has is refused (it is not offered; its calls would fail
      // upstream as unknown); one that comes back with its pinned definition is served again.
      for (const name of pinned.keys()) {
        const why = refused.get(name);
        if (!counts.has(name)) {
          if (why === undefined) {
            refused.set(name, REMOVED);
            log(`tool ${name}: no longer offered by the upstream; refused`);
          }
        } else if (why === REMOVED) {
          const t = list.find((x) => x.name === name);
          if (t !== undefined && (counts.get(name) ?? 0) === 1 && pinned.get(name) === hashTool(t)) {
            refused.delete(name);
            log(`tool ${name}: offered again by the upstream; served`);
          }
        }
      }
      rebuildList?.();
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
    for (const t of tools) if (!versions.has(t.name)) versions.set(t.name, versionOf(t));
    for (const bad of invalid) {
      if (bad.name !== undefined && exposed(bad.name) && (counts.get(bad.name) ?? 0) === 1) refused.set(bad.name, bad.reason);
    }
    const ajv = createAjvCompilers();
    const built: Built[] = [];
    const pins: Record<string, string> = {};
    for (const t of tools) {
      if (!exposed(t.name)) continue; // not exposed at all
      if ((counts.get(t.name) ?? 0) > 1) {
        if (!refused.has(t.name)) log(`tool ${t.name}: ${DUPLICATE}; not served and not pinned`);
        refused.set(t.name, DUPLICATE);
        continue;
      }
      pins[t.name] = hashTool(t);
      if (lock !== undefined && options.updateLock !== true) {
        const v = checkPin(lock, t.name, hashTool(t));
        if (!v.ok) {
          refused.set(t.name, v.reason);
          log(`tool ${t.name}: ${v.reason === "changed" ? "definition changed since it was pinned" : "not pinned"}; refused until --update-lock`);
          continue;
        }
      }
      const b = buildTool(t, config, ajv, upstream);
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
      const rl = config.tools?.[b.tool.name]?.rateLimit ?? config.defaults?.rateLimit;
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
    rebuildList();
    const state: AdmissionState = { refused, versions, buckets, upstream };
    const admitted = admissionGate(gate, built.map((b) => b.tool), limits, state);
    const served = options.instrument === undefined ? admitted : instrumented(options.instrument.call(options, admitted));
    // Pins are written last: a proxy that cannot start (a bad instrument) leaves the lock file as it was.
    if (options.lockPath !== undefined && (lock === undefined || options.updateLock === true)) {
      if (lock !== undefined) {
        const diff = lockChanges(lock.tools, pins);
        for (const line of diff) log(`lock: ${line}`);
        if (diff.length === 0) log("lock: no tool changed");
      }
      await writeLock(options.lockPath, { version: 1, tools: pins });
      log(`pinned ${Object.keys(pins).length} tool(s) in ${options.lockPath}`);
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

/** How often each name occurs in a tool list, valid or not. */
function nameCounts(tools: readonly SdkTool[], invalid: readonly InvalidTool[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const name of [...tools.map((t) => t.name), ...invalid.flatMap((b) => (b.name === undefined ? [] : [b.name]))]) counts.set(name, (counts.get(name) ?? 0) + 1);
  return counts;
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
