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
import { reject } from "../../errors.js";
import { onAttemptAbort } from "../../attempt.js";
import type { CallMeta, ToolFailure } from "../../result.js";
import { _createMcpServer } from "../server.js";
import { toMcpTool, type McpTool } from "../listing.js";
import { CALL_META_KEY, type McpToolResult } from "../result.js";
import { ajvStandardSchema, createAjvCompilers, type AjvCompilers } from "./ajv.js";
import { checkPin, hashTool, readLock, writeLock, type LockFile } from "./pin.js";
import { createUpstream, UpstreamError, type Upstream, type UpstreamSpec } from "./upstream.js";
import { tokenBucket, type Bucket } from "./rate.js";
import type { ProxyConfig } from "./config.js";
import { outputSchemaFor } from "./output.js";

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
}

/** A running proxy. */
export interface Proxy {
  /** The gate over the upstream's accepted tools. */
  readonly gate: Gate;
  /** Tool name → why it is not served (`changed`, `unpinned`, `denied by config`, a schema that does not compile…). */
  refused(): ReadonlyMap<string, string>;
  /** A new MCP server for one client connection (stdio, or one per HTTP session). */
  createServer(): Server;
  /** The upstream connection. */
  readonly upstream: Upstream;
  close(): Promise<void>;
}

const MSG = {
  changed: "The tool's definition changed since it was pinned; an operator must re-approve it (toolgate proxy --update-lock)",
  unpinned: "The tool is not pinned in the lock file; an operator must approve it (toolgate proxy --update-lock)",
  down: "The upstream server is restarting; try again later",
  rate: "The tool's rate limit is reached; try again later",
  upstreamError: "The upstream tool reported an error",
} as const;

function failure(name: string, version: string, callId: string, code: "DENIED" | "RETRYABLE", message: string, retryAfterMs?: number): ToolFailure {
  return {
    ok: false,
    code,
    message,
    retryable: code === "RETRYABLE",
    ...(retryAfterMs !== undefined ? { retryAfterMs: Math.max(1, Math.ceil(retryAfterMs)) } : {}),
    effect: "none",
    meta: { tool: name, version, callId, attempts: 0, durationMs: 0 },
  };
}

function textOf(result: Record<string, unknown>): string {
  const content = Array.isArray(result.content) ? (result.content as unknown[]) : [];
  for (const c of content) {
    if (typeof c === "object" && c !== null && (c as { type?: unknown }).type === "text" && typeof (c as { text?: unknown }).text === "string") {
      const t = (c as { text: string }).text.trim();
      if (t.length > 0) return t.slice(0, 200);
    }
  }
  return MSG.upstreamError;
}

/** Request `_meta` forwarded upstream: toolgate's own keys and the client's progress token stay here. */
function forwardMeta(meta: Readonly<Record<string, unknown>>): Record<string, unknown> | undefined {
  let out: Record<string, unknown> | undefined;
  for (const [k, v] of Object.entries(meta)) {
    if (k === "progressToken" || k.startsWith("toolgate/")) continue;
    (out ??= {})[k] = v;
  }
  return out;
}

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
      version: hashTool(t).slice(7, 19),
      description: t.description !== undefined && t.description.length > 0 ? t.description : t.name,
      input: ajvStandardSchema(t.inputSchema as Record<string, unknown>, input.validate),
      output: output.schema,
      effect,
      unknownKeys: "strip", // Ajv enforces the upstream's own additionalProperties; nothing is dropped
      timeoutMs,
      ...(concurrency !== undefined ? { concurrency } : {}),
      retry: effect === "read" ? { attempts: 1 + (policy.retries ?? 2) } : false,
      classify: (e) => (e instanceof UpstreamError ? (e.transient ? { kind: "transient", ...(e.retryAfterMs !== undefined ? { retryAfterMs: e.retryAfterMs } : {}) } : "permanent") : undefined),
      execute: async (args, ctx) => {
        const result = await upstream.call(t.name, args, forwardMeta(ctx.meta), onAttemptAbort(ctx), timeoutMs);
        if (result.isError === true) throw reject(textOf(result));
        return result;
      },
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
  const config = options.config ?? {};
  const log = (l: string): void => options.onLog?.(l);
  const refused = new Map<string, string>();
  const pinned = new Map<string, string>();
  let rebuildList: (() => void) | undefined;
  const upstream = createUpstream(options.upstream, {
    ...(config.restart?.initialDelayMs !== undefined ? { initialDelayMs: config.restart.initialDelayMs } : {}),
    ...(config.restart?.maxDelayMs !== undefined ? { maxDelayMs: config.restart.maxDelayMs } : {}),
    ...(options.maxMessageBytes !== undefined ? { maxMessageBytes: options.maxMessageBytes } : {}),
    ...(options.connectTimeoutMs !== undefined ? { connectTimeoutMs: options.connectTimeoutMs } : {}),
    ...(options.startAttempts !== undefined ? { startAttempts: options.startAttempts } : {}),
    onLog: log,
    onTools: (tools) => {
      // A definition that changed under a running proxy is refused from now on.
      for (const t of tools) {
        const pin = pinned.get(t.name);
        if (pin !== undefined && pin !== hashTool(t) && refused.get(t.name) !== "changed") {
          refused.set(t.name, "changed");
          log(`tool ${t.name}: definition changed since it was pinned; refused until --update-lock`);
        }
      }
      rebuildList?.();
    },
  });
  const tools = await upstream.start();
  try {
    const allow = config.allow === undefined ? undefined : new Set(config.allow);
    const deny = new Set(config.deny ?? []);
    const lock: LockFile | undefined = options.lockPath === undefined ? undefined : await readLock(options.lockPath);
    const ajv = createAjvCompilers();
    const built: Built[] = [];
    for (const t of tools) {
      if ((allow !== undefined && !allow.has(t.name)) || deny.has(t.name)) continue; // not exposed at all
      if (options.lockPath !== undefined && lock !== undefined && options.updateLock !== true) {
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
    for (const name of Object.keys(config.tools ?? {})) {
      if (!tools.some((t) => t.name === name)) log(`config: tool ${name} is not offered by the upstream`);
    }
    if (options.lockPath !== undefined && (lock === undefined || options.updateLock === true)) {
      const entries = Object.fromEntries(
        tools.filter((t) => !((allow !== undefined && !allow.has(t.name)) || deny.has(t.name))).map((t) => [t.name, hashTool(t)]),
      );
      await writeLock(options.lockPath, { version: 1, tools: entries });
      log(`pinned ${Object.keys(entries).length} tool(s) in ${options.lockPath}`);
    }
    if (built.length === 0) log("no upstream tool is served");
    const gate = createGate({
      tools: built.length > 0 ? built.map((b) => b.tool) : [placeholderTool()],
      ...(config.limits !== undefined ? { limits: definedOnly(config.limits) } : {}),
    });
    const buckets = new Map<string, Bucket>();
    for (const b of built) {
      const rl = config.tools?.[b.tool.name]?.rateLimit ?? config.defaults?.rateLimit;
      if (rl !== undefined) buckets.set(b.tool.name, tokenBucket(rl));
    }
    let listing: McpTool[] = [];
    rebuildList = () => {
      listing = built
        .filter((b) => !refused.has(b.tool.name))
        .map((b) => {
          const gl = gate.list().find((l) => l.name === b.tool.name)!;
          const m = toMcpTool(gl);
          return b.listing.title !== undefined ? { ...m, title: b.listing.title } : m;
        });
    };
    rebuildList();
    const versions = new Map(built.map((b) => [b.tool.name, b.tool.version]));
    const before = (name: string, callId: string): ToolFailure | undefined => {
      const why = refused.get(name);
      if (why === "changed" || why === "unpinned") return failure(name, versions.get(name) ?? "", callId, "DENIED", why === "changed" ? MSG.changed : MSG.unpinned);
      if (!versions.has(name)) return undefined; // the gate answers UNKNOWN_TOOL
      if (upstream.state() !== "up") return failure(name, versions.get(name)!, callId, "RETRYABLE", MSG.down, upstream.retryAfterMs());
      const wait = buckets.get(name)?.take();
      if (wait !== undefined && wait > 0) return failure(name, versions.get(name)!, callId, "RETRYABLE", MSG.rate, wait);
      return undefined;
    };
    const success = (data: unknown, meta: CallMeta): McpToolResult => {
      const r = data as Record<string, unknown>;
      // The upstream's own _meta passes through, except keys in toolgate's namespace (no spoofed envelopes).
      const upstreamMeta: Record<string, unknown> = {};
      if (typeof r._meta === "object" && r._meta !== null) {
        for (const [k, v] of Object.entries(r._meta)) if (!k.startsWith("toolgate/")) upstreamMeta[k] = v;
      }
      return { ...r, content: r.content as McpToolResult["content"], _meta: { ...upstreamMeta, [CALL_META_KEY]: meta } };
    };
    const info = { name: options.name ?? "toolgate-proxy", version: options.version ?? "0.0.0" };
    return {
      gate,
      upstream,
      refused: () => refused,
      createServer: () => _createMcpServer(gate, info, { tools: () => listing, before, success }),
      close: () => upstream.close(),
    };
  } catch (e) {
    await upstream.close();
    throw e;
  }
}

function definedOnly<T extends object>(o: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as { [K in keyof T]: Exclude<T[K], undefined> };
}

/** A gate needs one tool; when nothing is served, an unlisted placeholder keeps the server answering UNKNOWN_TOOL. */
function placeholderTool(): AnyTool {
  return defineTool({
    name: "__toolgate_none__",
    version: "0",
    description: "placeholder",
    input: ajvStandardSchema({ type: "object" }, Object.assign(() => false, { errors: null }) as never),
    output: ajvStandardSchema({ type: "object" }, Object.assign(() => false, { errors: null }) as never),
    effect: "read",
    execute: () => ({}),
  });
}
