/**
 * The proxy's connection to its upstream MCP server (a child process over stdio, or a URL over
 * Streamable HTTP) with the official v1 client: bounded start-up, restart with capped exponential
 * backoff after a crash, and failures as classified errors, never a hang.
 * @module
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, McpError, ToolListChangedNotificationSchema, type Tool as SdkTool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { UpstreamError } from "./upstream-error.js";
import { openRequestLane, type RequestLane } from "./request-lane.js";
import { installLineBuffer, InvalidAnswerError } from "./line-buffer.js";
import { errorText, isZodError, scrubLine, zodSummary } from "./error-text.js";
import { checkTools, LooseToolList, type InvalidTool, type Listing } from "./tool-list.js";
import type { AbortSource } from "../../attempt.js";
import { MAX_TIMER_MS } from "../../policy/deadline.js";
import { outsideCalls } from "../../policy/shared-context.js";

export { UpstreamError };
export type { InvalidTool };

/** Where the upstream is. */
export type UpstreamSpec =
  | { readonly kind: "stdio"; readonly command: string; readonly args: readonly string[]; readonly env?: Readonly<Record<string, string>>; readonly cwd?: string }
  | { readonly kind: "http"; readonly url: URL; readonly headers?: Readonly<Record<string, string>> };

/** Options of {@link createUpstream}. */
export interface UpstreamOptions {
  /** First restart delay, ms. Default 200. */
  readonly initialDelayMs?: number;
  /** Restart delay cap, ms. Default 10,000. */
  readonly maxDelayMs?: number;
  /** Time allowed to connect, initialize and list tools, per attempt, ms. Default 10,000. */
  readonly connectTimeoutMs?: number;
  /** Connection attempts at start-up before giving up. Default 3. */
  readonly startAttempts?: number;
  /** Largest message accepted from a stdio upstream, bytes; a larger one closes the connection. Default 16 MiB. */
  readonly maxMessageBytes?: number;
  /** Diagnostics (never payloads). Default: none. */
  onLog?(line: string): void;
  /**
   * The upstream's tools after every (re)connection and `list_changed` notification; `invalid`:
   * the entries that are not valid MCP tool definitions (left out of `tools`).
   */
  onTools?(tools: readonly SdkTool[], invalid: readonly InvalidTool[]): void;
}

/** A connected upstream. */
export interface Upstream {
  /** `up`, `down` (restarting) or `closed`. */
  state(): "up" | "down" | "closed";
  /** Connect (bounded attempts) and return the valid tools of its list. Throws UpstreamError when it cannot. */
  start(): Promise<readonly SdkTool[]>;
  /** The entries of the latest tool list that are not valid MCP tools (see {@link InvalidTool}). */
  invalidTools(): readonly InvalidTool[];
  /**
   * Call a tool; resolves to the raw result object, rejects with {@link UpstreamError} (or the
   * abort's reason). `signal`: an AbortSignal, or a function that registers one abort callback.
   */
  call(name: string, args: unknown, meta: Record<string, unknown> | undefined, signal: AbortSignal | AbortSource, timeoutMs: number): Promise<Record<string, unknown>>;
  /** Milliseconds until the next restart attempt (0 when up). */
  retryAfterMs(): number;
  /** How many times the upstream was (re)started. */
  starts(): number;
  close(): Promise<void>;
}

const LooseResult = z.object({}).loose();

/** A fresh connection: its tool list, its client and the calls' lane. */
type Connected = Listing & {
  client: Client;
  lane: RequestLane | undefined;
  /** Called once the connection is adopted: re-lists if a `list_changed` came before that. */
  adopted(): void;
};

/** The most `tools/list` pages read from an upstream (a server that pages forever must not hang the proxy). */
const MAX_LIST_PAGES = 1_000;

/**
 * A transport error after which an HTTP upstream's session is gone: the server answers a message
 * POSTed on the session with 404 (it restarted, or dropped the session), or nothing answers at all
 * (fetch failed). The SDK client transport never closes by itself, so the proxy closes it and
 * reconnects. A 404 to the optional GET stream is not one: servers without that stream often
 * answer GET with 404, and reconnecting would not change that. @internal (exported for its test)
 */
export function _sessionLost(e: unknown): boolean {
  // 404 is the spec's answer to an unknown session; some servers (the reference server-everything)
  // answer 400 "no valid session ID" instead. The proxy's own messages are well-formed, so a 400 to
  // a POST on an established session means the session is gone too.
  if (e instanceof StreamableHTTPError) return (e.code === 404 || e.code === 400) && /POSTing/.test(e.message);
  return e instanceof TypeError && /fetch failed/i.test(e.message);
}

/**
 * The upstream as the log names it: the command, or the URL without its query, fragment and
 * credentials (hosted servers often take an API key in the query string).
 */
export function describe(spec: UpstreamSpec): string {
  return spec.kind === "stdio" ? spec.command : `${spec.url.origin}${spec.url.pathname}`;
}

/**
 * Create the upstream connection (not started).
 * @example
 * const up = createUpstream({ kind: "stdio", command: "node", args: ["server.js"] }, { onLog: console.error });
 * const tools = await up.start();
 */
export function createUpstream(spec: UpstreamSpec, options: UpstreamOptions = {}): Upstream {
  const initialDelayMs = options.initialDelayMs ?? 200;
  const maxDelayMs = options.maxDelayMs ?? 10_000;
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  const startAttempts = options.startAttempts ?? 3;
  // Every line: the upstream's stderr and its errors are its own text (a connection string, a key).
  const log = (line: string): void => options.onLog?.(scrubLine(line));
  let client: Client | undefined;
  let lane: RequestLane | undefined;
  let state: "up" | "down" | "closed" = "down";
  let failures = 0;
  let nextAttemptAt = 0;
  let timer: NodeJS.Timeout | undefined;
  let connectedAt = 0;
  let startCount = 0;
  let invalid: readonly InvalidTool[] = [];

  const transportFor = (): Transport => {
    if (spec.kind === "http") {
      return new StreamableHTTPClientTransport(spec.url, { requestInit: { headers: { ...spec.headers } } });
    }
    const t = new StdioClientTransport({
      command: spec.command,
      args: [...spec.args],
      ...(spec.env !== undefined ? { env: { ...spec.env } } : {}),
      ...(spec.cwd !== undefined ? { cwd: spec.cwd } : {}),
      stderr: "pipe",
      maxBufferSize: options.maxMessageBytes ?? 16 * 1024 * 1024,
    });
    // The proxy's own reader: an invalid answer to a lane call fails that call at once (./line-buffer.ts).
    installLineBuffer(t, options.maxMessageBytes ?? 16 * 1024 * 1024);
    let partial = "";
    t.stderr?.on("data", (d: Buffer) => {
      const lines = (partial + d.toString("utf8")).split("\n");
      partial = (lines.pop() ?? "").slice(0, 2000);
      for (const l of lines) if (l.length > 0) log(`upstream stderr: ${l.slice(0, 500)}`);
    });
    return t;
  };

  /** Every page of `tools/list`, all of them by `deadline` (one budget for the whole list, not one per page). */
  const listAll = async (c: Client, deadline: number): Promise<Listing> => {
    const out: Listing = { tools: [], invalid: [] };
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const params = cursor === undefined ? {} : { cursor };
      const r = await c.request({ method: "tools/list", params }, LooseToolList, { timeout: timeLeft(deadline) });
      checkTools(r.tools, out);
      cursor = r.nextCursor;
      if (cursor === undefined) break;
    }
    // Never cut silently: a list longer than the cap is served as far as it was read, and said so.
    if (cursor !== undefined) log(`upstream tool list has more than ${MAX_LIST_PAGES} pages; only the tools of the first ${MAX_LIST_PAGES} are served`);
    for (const bad of out.invalid) log(`upstream tool ${bad.name === undefined ? "(without a name)" : JSON.stringify(bad.name.slice(0, 100))}: ${bad.reason}; not served`);
    return out;
  };

  const connectOnce = async (): Promise<Connected> => {
    const c = new Client({ name: "toolgate-proxy", version: "1.0.0" }, { capabilities: {} });
    let dropping = false;
    c.onerror = (e) => {
      if (e instanceof InvalidAnswerError) log(`${e.message.slice(0, 300)}; that call failed`);
      else if (/ReadBuffer exceeded/.test(e.message)) log(`upstream sent a message larger than the limit; connection closed`);
      else if (e instanceof SyntaxError) log(`upstream wrote a line that is not JSON-RPC; ignored`);
      else if (isZodError(e)) log(`upstream wrote a message that is not valid JSON-RPC (${zodSummary(e.issues)}); ignored`);
      else log(`upstream error: ${errorText(e)}`);
      if (spec.kind === "http" && client === c && !dropping && _sessionLost(e)) {
        // The session is gone: close this connection; onclose below schedules the reconnection.
        dropping = true;
        log(`upstream ${describe(spec)} lost the session; reconnecting`);
        void c.close().catch(() => undefined);
      }
    };
    c.onclose = () => {
      if (client !== c || state === "closed") return;
      client = undefined;
      lane = undefined;
      state = "down";
      // A connection that lived 10 s resets the backoff; one that died sooner doubles it, as a failed
      // start does (an upstream that crashes right after each start must not restart every second).
      if (Date.now() - connectedAt >= 10_000) failures = 0;
      else failures++;
      log(`upstream ${describe(spec)} closed; restarting`);
      schedule();
    };
    const relist = async (): Promise<void> => {
      let fresh: Listing;
      try {
        fresh = await listAll(c, Date.now() + connectTimeoutMs);
      } catch (e) {
        log(`upstream tools/list after list_changed failed: ${errorText(e, 200)}`);
        return;
      }
      if (client !== c) return; // a connection since replaced: its list is no longer the upstream's
      invalid = fresh.invalid;
      checkListing(c, fresh);
    };
    // Listened to from the start: a list_changed sent right after the first tools/list answer (in
    // the same read, before that answer's await resumes) is not lost, but re-listed once adopted.
    let adopted = false;
    let missed = false;
    c.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      if (adopted) return relist();
      missed = true;
      return Promise.resolve();
    });
    const transport = transportFor();
    // One deadline for the attempt: connect, initialize and every page of the list.
    const deadline = Date.now() + connectTimeoutMs;
    try {
      await c.connect(transport, { timeout: connectTimeoutMs });
      const tools = await listAll(c, deadline);
      const markAdopted = (): void => {
        adopted = true;
        if (missed) void relist();
      };
      // Calls go on the lane from now on (./request-lane.ts); the client keeps everything else.
      return { ...tools, client: c, lane: openRequestLane(transport), adopted: markAdopted };
    } catch (e) {
      await c.close().catch(() => undefined);
      throw e;
    }
  };

  const delay = (): number => {
    const d = Math.min(maxDelayMs, initialDelayMs * 2 ** Math.min(failures, 20));
    return Math.round(d / 2 + (Math.random() * d) / 2);
  };

  const schedule = (): void => {
    if (state === "closed" || timer !== undefined) return;
    const d = delay();
    nextAttemptAt = Date.now() + d;
    // A restart belongs to no call (it may be scheduled from inside the call that met the failure).
    timer = outsideCalls(() =>
      setTimeout(() => {
        timer = undefined;
        void attempt();
      }, d),
    );
    timer.unref();
  };

  /**
   * Hand a connection's list to `onTools`. Should that throw, the list was not checked: the
   * connection is closed (and restarted with backoff) rather than served unchecked.
   */
  const checkListing = (c: Client, listing: Listing): void => {
    try {
      options.onTools?.(listing.tools, listing.invalid);
    } catch (e) {
      log(`upstream tools could not be checked (${errorText(e, 200)}); connection closed`);
      void c.close().catch(() => undefined);
    }
  };

  const adopt = (tools: Connected): void => {
    // Never two live connections: one still held (it should not be) is closed, not leaked.
    const old = client;
    if (old !== undefined && old !== tools.client) void old.close().catch(() => undefined);
    client = tools.client;
    lane = tools.lane;
    invalid = tools.invalid;
    state = "up";
    connectedAt = Date.now();
    startCount++;
    tools.adopted();
  };

  const attempt = async (): Promise<void> => {
    if (state === "closed") return;
    let tools: Connected;
    try {
      tools = await connectOnce();
    } catch (e) {
      failures++;
      log(`upstream restart failed: ${errorText(e, 200)}`);
      schedule();
      return;
    }
    if ((state as string) === "closed") {
      await tools.client.close().catch(() => undefined);
      return;
    }
    // Adopted first, then checked: a check that fails closes this connection (its onclose
    // schedules the next one), so no connection is ever left open behind another.
    adopt(tools);
    log(`upstream ${describe(spec)} restarted`);
    checkListing(tools.client, tools);
  };

  return {
    state: () => state,
    starts: () => startCount,
    invalidTools: () => invalid,
    // The time to the next restart attempt; once it is connecting, about how long that takes (not 1 ms).
    retryAfterMs: () => {
      if (state === "up") return 0;
      const left = nextAttemptAt - Date.now();
      return left > 0 ? left : Math.min(1_000, connectTimeoutMs);
    },
    async start() {
      let last: unknown;
      for (let i = 0; i < startAttempts; i++) {
        if (i > 0) await new Promise((r) => setTimeout(r, Math.min(maxDelayMs, initialDelayMs * 2 ** (i - 1))));
        try {
          const tools = await connectOnce();
          adopt(tools);
          return tools.tools;
        } catch (e) {
          last = e;
        }
      }
      const why = errorText(last);
      throw new UpstreamError("unavailable", `upstream ${describe(spec)} did not start after ${startAttempts} attempts: ${why}`);
    },
    // Not async: the lane's promise is handed back as it is, without an async function's extra turns.
    call(name, args, meta, signal, timeoutMs) {
      const c = client;
      if (c === undefined || state !== "up") return Promise.reject(new UpstreamError("unavailable", "upstream is not connected", Math.max(1, nextAttemptAt - Date.now())));
      const params: Record<string, unknown> = { name, arguments: args };
      if (meta !== undefined && Object.keys(meta).length > 0) params._meta = meta;
      // A second or so past the gate's own timeout: the gate decides; this only stops an orphaned wait.
      const waitMs = Math.min(timeoutMs + 1_000, MAX_TIMER_MS);
      if (lane !== undefined) return lane.call(params, signal, waitMs);
      return callThroughClient(c, params, typeof signal === "function" ? signalOf(signal) : signal, waitMs);
    },
    async close() {
      state = "closed";
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      const c = client;
      client = undefined;
      lane = undefined;
      await c?.close().catch(() => undefined);
    },
  };
}

/** A call through the SDK client: the path when the lane could not be opened. */
async function callThroughClient(c: Client, params: Record<string, unknown>, signal: AbortSignal, waitMs: number): Promise<Record<string, unknown>> {
  try {
    return await c.request({ method: "tools/call", params }, LooseResult, { signal, timeout: waitMs });
  } catch (e) {
    if (e instanceof McpError) {
      if (e.code === ErrorCode.ConnectionClosed) throw new UpstreamError("closed", "upstream connection closed during the call");
      if (e.code === ErrorCode.RequestTimeout) throw new UpstreamError("timeout", "upstream did not answer in time");
      throw new UpstreamError("protocol", `upstream answered a JSON-RPC error ${e.code}`);
    }
    if (signal.aborted) throw signal.reason;
    throw new UpstreamError("closed", "upstream transport failed during the call");
  }
}

/** Milliseconds left until `deadline` (at least 1, so a spent budget times out at once rather than never). */
function timeLeft(deadline: number): number {
  return Math.min(MAX_TIMER_MS, Math.max(1, deadline - Date.now()));
}

/** An AbortSignal fed by an abort hook. */
function signalOf(source: AbortSource): AbortSignal {
  const controller = new AbortController();
  source((reason) => controller.abort(reason));
  return controller.signal;
}
