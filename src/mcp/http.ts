/**
 * True for the wildcard addresses, which listen on every interface, however they are spelled
 * (`0.0.0.0`, `0`, `0.0`, `00.0.0.0`, `::`, `::0.0.0.0`, `::ffff:0.0.0.0`): read as a URL host
 * reads them, then compared.
 */
export function isWildcard(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "");
  if (h === "0.0.0.0" || /^[0:]+$/.test(h)) return true;
  let canonical: string;
  try {
    canonical = new URL(`http://${h.includes(":") ? `[${h}]` : h}/`).hostname;
  } catch {
    return false;
  }
  return canonical === "0.0.0.0" || canonical === "[::]" || canonical === "[::ffff:0:0]";
}

const HOST_ENTRY = /^(?:\[[0-9a-f:.]+\]|[a-z0-9_](?:[a-z0-9_.-]*[a-z0-9_])?)(?::\d{1,5})?$/i;

/**
 * Check {@link HttpOptions} the way {@link serveHttp} does, without binding anything: call it
 * before work that should not start on bad options. Throws {@link ToolgateConfigError}
 * `E_MCP_HTTP` (a non-loopback host without `allowNonLoopback`, a wildcard bind without
 * `allowedHosts`, a token shorter than 16 characters, a malformed host or origin entry, …).
 * @example
 * checkHttpOptions({ host: "0.0.0.0", allowNonLoopback: true, allowedHosts: ["tools.internal"] });
 */
export function checkHttpOptions(options: HttpOptions): void {
  if (typeof options !== "object" || options === null) bad("options must be an object");
  // A misspelt key is refused, not ignored: `tokne` would otherwise serve without authentication.
  checkKnownKeys(options, HTTP_KEYS, "", bad);
  const host = options.host ?? "127.0.0.1";
  const port = options.port ?? 0;
  const path = options.path ?? "/mcp";
  const maxBody = options.maxBodyBytes ?? 4 * 1024 * 1024;
  const maxSessions = options.maxSessions ?? 1_000;
  const idleMs = options.sessionIdleMs ?? 30 * 60_000;
  if (typeof host !== "string" || host.length === 0) bad("host must be a non-empty string");
  if (!isLoopback(host) && options.allowNonLoopback !== true) {
    bad(`refusing to bind ${host}: not a loopback address (pass allowNonLoopback: true, or --allow-remote on the CLI)`);
  }
  if (isWildcard(host) && options.allowedHosts === undefined) {
    bad(
      `refusing to bind ${host}: a wildcard address listens on every interface and has no name to check the Host header against; ` +
        "name the hosts clients connect to (allowedHosts, or --allowed-host on the CLI), or bind one address",
    );
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) bad("port must be an integer from 0 to 65535");
  if (typeof path !== "string" || !path.startsWith("/")) bad('path must start with "/"');
  if (!Number.isInteger(maxBody) || maxBody < 1) bad("maxBodyBytes must be a positive integer");
  const inFlight = options.maxBodyBytesInFlight ?? Math.max(64 * 1024 * 1024, maxBody);
  if (!Number.isInteger(inFlight) || inFlight < maxBody) bad("maxBodyBytesInFlight must be an integer of at least maxBodyBytes");
  if (!Number.isInteger(maxSessions) || maxSessions < 1) bad("maxSessions must be a positive integer");
  if (!Number.isInteger(idleMs) || idleMs < 1) bad("sessionIdleMs must be a positive integer (ms)");
  if (options.token !== undefined && (typeof options.token !== "string" || options.token.length < 16)) {
    bad("token must be a string of at least 16 characters");
  }
  if (options.allowedHosts !== undefined) {
    if (!Array.isArray(options.allowedHosts) || options.allowedHosts.length === 0) bad("allowedHosts must be a non-empty array of host names");
    for (const h of options.allowedHosts as unknown[]) {
      if (typeof h !== "string" || !HOST_ENTRY.test(h) || Number(/:(\d+)$/.exec(h.replace(/^\[[^\]]*\]/, ""))?.[1] ?? 0) > 65535) {
        bad(`allowedHosts: ${JSON.stringify(h)} is not a host name or host:port (an IPv6 address goes in brackets, e.g. [::1]:8080)`);
      }
    }
  }
  if (options.allowedOrigins !== undefined) {
    if (!Array.isArray(options.allowedOrigins)) bad("allowedOrigins must be an array of origins");
    for (const o of options.allowedOrigins as unknown[]) {
      let origin: string | undefined;
      try {
        origin = typeof o === "string" ? new URL(o).origin : undefined;
      } catch {
        origin = undefined;
      }
      if (origin === undefined || origin === "null" || origin !== (o as string).toLowerCase()) {
        bad(
          `allowedOrigins: ${JSON.stringify(o)} is not an origin as a browser sends it` +
            (origin !== undefined && origin !== "null" ? `; use ${JSON.stringify(origin)}` : "") +
            " (scheme://host[:port], no path or trailing slash)",
        );
      }
    }
  }
}

/**
 * Serve MCP over Streamable HTTP on `node:http`: loopback by default, Host and Origin checks
 * against DNS rebinding, an optional bearer token, a body size cap, one SDK server per session.
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import type { AddressInfo } from "node:net";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import { ToolgateConfigError } from "../errors.js";
import { checkKnownKeys, optionNames } from "../known-keys.js";
import { MAX_MESSAGE_DEPTH, nestsWithin } from "./json-depth.js";
import { isRecord } from "../_record.js";
import { LaneServer, sdkInFlight, sdkRequestController } from "./call-lane.js";
import { endCancelledResponse } from "./cancelled-response.js";

/** Options of {@link serveHttp}. */
export interface HttpOptions {
  /** Bind address. Default `127.0.0.1`. A non-loopback address needs `allowNonLoopback: true`. */
  readonly host?: string;
  /** Port; 0 picks a free one. Default 0. */
  readonly port?: number;
  /** Allow binding a non-loopback address (the network can reach the tools). Default `false`. */
  readonly allowNonLoopback?: boolean;
  /** Endpoint path. Default `/mcp`. */
  readonly path?: string;
  /** Require `Authorization: Bearer <token>`. Default: no token. */
  readonly token?: string;
  /**
   * Accepted `Origin` values, each `scheme://host[:port]` as a browser sends it (no path, no
   * trailing slash). A request without Origin is accepted. Default: `http://` + each default host
   * (on port 80 also without `:80`, as browsers send it).
   */
  readonly allowedOrigins?: readonly string[];
  /**
   * Accepted `Host` headers, replacing the default: `name:port` matches exactly, a bare `name`
   * (`[v6]` in brackets) matches that name on any port. Required for a wildcard bind
   * (`0.0.0.0`, `::`), which has no name of its own to check. Default: `127.0.0.1:<port>`,
   * `localhost:<port>`, `[::1]:<port>` and the bound `host:<port>` (as given and as `url` writes
   * it); on port 80 each also without the port, as clients send it.
   */
  readonly allowedHosts?: readonly string[];
  /** Largest accepted request body, bytes. Default 4 MiB. */
  readonly maxBodyBytes?: number;
  /**
   * Most bytes of request bodies held at once, all requests together (at least `maxBodyBytes`); a
   * body that would go past it gets 503. Bodies that arrive slowly (each within `maxBodyBytes` and
   * the 60 s request timeout) cannot pile up without bound. Default 64 MiB.
   */
  readonly maxBodyBytesInFlight?: number;
  /** Most concurrent sessions; a new one beyond it gets 503. Default 1,000. */
  readonly maxSessions?: number;
  /**
   * A session with no request in flight and none arriving or ending for this long is closed, ms. A
   * call still being answered (an approval wait, a long tool) keeps it open; an open GET stream
   * does not. Default 1,800,000 (30 min).
   */
  readonly sessionIdleMs?: number;
}

/** A running HTTP server. */
export interface HttpHandle {
  /** The endpoint, e.g. `http://127.0.0.1:54321/mcp`. */
  readonly url: URL;
  readonly host: string;
  readonly port: number;
  /** Number of open sessions. */
  sessions(): number;
  /** Close every session and the listener. */
  close(): Promise<void>;
}

/** True for `127.0.0.0/8`, `::1` and `localhost`. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/**
 * @internal The `Host` header names (no port) of a bound address: as given (IPv6 in brackets) and
 * as a URL writes it, which is what `handle.url` and fetch send (`127.1` is `127.0.0.1`,
 * `FD00:0::1` is `[fd00::1]`). None for a wildcard, which has no name of its own.
 */
export function ownHostNames(host: string): string[] {
  if (isWildcard(host)) return [];
  const bracketed = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  const names = new Set([bracketed.toLowerCase()]);
  try {
    names.add(new URL(`http://${bracketed}/`).hostname);
  } catch {
    // Not a URL host: only the spelling as given.
  }
  return [...names];
}

function bad(message: string): never {
  throw new ToolgateConfigError("E_MCP_HTTP", `serveHttp: ${message}`);
}

const HTTP_KEYS = optionNames<HttpOptions>()(["host", "port", "allowNonLoopback", "path", "token", "allowedOrigins", "allowedHosts", "maxBodyBytes", "maxBodyBytesInFlight", "maxSessions", "sessionIdleMs"]);

function digest(s: string): Buffer {
  return createHash("sha256").update(s).digest();
}

/** JSON-RPC's codes for a refused HTTP request: -32700 only when the body is not JSON. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;

function deny(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}, code = status === 400 ? INVALID_REQUEST : -32000): void {
  if (res.headersSent) return;
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } }));
}

type BodyResult = { ok: true; value: unknown } | { ok: false; status: number; message: string; code?: number };

/** The bytes of request bodies a server holds, all requests together, against its budget. */
interface BodyBudget {
  held: number;
  readonly max: number;
}

function readBody(req: IncomingMessage, max: number, budget: BodyBudget): Promise<BodyResult> {
  return new Promise((resolve) => {
    const declared = Number(req.headers["content-length"]);
    if (Number.isFinite(declared) && declared > max) {
      req.resume();
      return resolve({ ok: false, status: 413, message: "Request body too large" });
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    /** Give this request's bytes back to the budget, once, however the request ends. */
    const release = (): void => {
      budget.held -= size;
      size = 0;
    };
    req.once("close", release);
    req.on("data", (c: Buffer) => {
      if (done) return;
      if (size + c.length > max) {
        done = true;
        release();
        resolve({ ok: false, status: 413, message: "Request body too large" });
        return;
      }
      if (budget.held + c.length > budget.max) {
        done = true;
        release();
        resolve({ ok: false, status: 503, message: "Server busy: too many request bodies in flight; try again later" });
        return;
      }
      size += c.length;
      budget.held += c.length;
      chunks.push(c);
    });
    req.on("error", () => {
      if (!done) resolve({ ok: false, status: 400, message: "Request body could not be read" });
      done = true;
      release();
    });
    req.on("end", () => {
      if (done) return;
      done = true;
      release();
      try {
        const text = Buffer.concat(chunks).toString("utf8");
        // Parsing a body nested millions deep costs seconds; scanning it is linear (./json-depth.ts).
        if (!nestsWithin(text, MAX_MESSAGE_DEPTH)) {
          resolve({ ok: false, status: 400, message: `Parse error: the body nests deeper than ${MAX_MESSAGE_DEPTH} levels`, code: PARSE_ERROR });
          return;
        }
        resolve({ ok: true, value: JSON.parse(text) });
      } catch {
        resolve({ ok: false, status: 400, message: "Parse error: the body is not JSON", code: PARSE_ERROR });
      }
    });
  });
}

/**
 * A cancel for a request the SDK's own handlers serve (a server that is not createMcpServer's, or a
 * request the lane leaves to the SDK; the lane ends its own calls' responses): the SDK aborts the
 * handler and sends no answer, so the POST that carried the request would stay open
 * (./cancelled-response.ts). The SDK aborts on a later tick, hence the listener.
 */
function endSdkCancelledResponses(server: Server, transport: StreamableHTTPServerTransport): void {
  const next = transport.onmessage;
  if (next === undefined) return;
  transport.onmessage = (message, extra) => {
    const id = cancelledId(message);
    const controller = id === undefined ? undefined : sdkRequestController(server, id);
    next(message, extra);
    if (controller === undefined || id === undefined) return;
    const end = (): void => {
      const failed = endCancelledResponse(transport, id);
      if (failed !== undefined) server.onerror?.(new Error(`Failed to end a cancelled request's response: ${failed.message}`));
    };
    if (controller.signal.aborted) end();
    else controller.signal.addEventListener("abort", end, { once: true });
  };
}

/** The request id a `notifications/cancelled` names; `undefined` for any other message. */
function cancelledId(message: unknown): RequestId | undefined {
  if (!isRecord(message) || message.method !== "notifications/cancelled" || !isRecord(message.params)) return undefined;
  const id = message.params.requestId;
  return typeof id === "string" || typeof id === "number" ? id : undefined;
}

/** One session of {@link serveHttp}: `posts` counts its POSTs not yet answered in full. */
interface Session {
  readonly transport: StreamableHTTPServerTransport;
  readonly server: Server;
  lastSeen: number;
  posts: number;
}

/**
 * True while a session has work in flight: a POST not yet answered in full, or a request its server
 * is still handling (a call whose POST the client dropped runs on; MCP does not count a disconnect
 * as a cancel). An open GET stream is the client listening, not work: it does not count.
 */
function busy(s: Session): boolean {
  const server = s.server;
  return s.posts > 0 || (server instanceof LaneServer ? server._inFlight() : sdkInFlight(server)) > 0;
}

/** Mark a request of `s` as seen now and again when its response ends; a POST counts as in flight until then. */
function track(s: Session, res: ServerResponse, post: boolean): void {
  s.lastSeen = Date.now();
  if (post) s.posts++;
  res.once("close", () => {
    if (post) s.posts--;
    s.lastSeen = Date.now();
  });
}

function isInitialize(body: unknown): boolean {
  return Array.isArray(body) ? body.some((m) => isInitializeRequest(m)) : isInitializeRequest(body);
}

/**
 * Serve MCP over Streamable HTTP. `factory` builds one SDK server per session (e.g.
 * `() => createMcpServer(gate, info)`). Throws {@link ToolgateConfigError} (`E_MCP_HTTP`) on bad
 * options (see {@link checkHttpOptions}), such as a non-loopback host without `allowNonLoopback`.
 * @example
 * const http = await serveHttp(() => createMcpServer(gate, { name: "orders", version: "1.0.0" }), { port: 0 });
 * console.log(http.url.href); // http://127.0.0.1:PORT/mcp
 */
export async function serveHttp(factory: () => Server, options: HttpOptions = {}): Promise<HttpHandle> {
  if (typeof factory !== "function") bad("factory must be a function returning an MCP Server");
  checkHttpOptions(options);
  const host = options.host ?? "127.0.0.1";
  const port = options.port ?? 0;
  const path = options.path ?? "/mcp";
  const maxBody = options.maxBodyBytes ?? 4 * 1024 * 1024;
  const budget: BodyBudget = { held: 0, max: options.maxBodyBytesInFlight ?? Math.max(64 * 1024 * 1024, maxBody) };
  const maxSessions = options.maxSessions ?? 1_000;
  const tokenDigest = options.token === undefined ? undefined : digest(options.token);
  const idleMs = options.sessionIdleMs ?? 30 * 60_000;
  const sessions = new Map<string, Session>();
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const [id, s] of sessions) {
        // Work in flight (an approval wait, a long tool) is not idleness: the idle time starts when it ends.
        if (busy(s)) s.lastSeen = now;
        else if (s.lastSeen < now - idleMs) {
          sessions.delete(id);
          void s.server.close().catch(() => undefined);
        }
      }
    },
    Math.max(1_000, Math.min(60_000, Math.floor(idleMs / 2))),
  );
  sweep.unref();
  let allowedHosts: Set<string> = new Set();
  let allowedNames: Set<string> = new Set(); // entries without a port: any port
  let allowedOrigins: Set<string> = new Set();

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (url.pathname !== path) return deny(res, 404, "Not found");
    const hostHeader = (req.headers.host ?? "").toLowerCase();
    if (!allowedHosts.has(hostHeader) && !allowedNames.has(hostHeader.replace(/:\d+$/, ""))) return deny(res, 403, "Host not allowed");
    const origin = req.headers.origin;
    if (origin !== undefined && !allowedOrigins.has(origin.toLowerCase())) return deny(res, 403, "Origin not allowed");
    if (tokenDigest !== undefined) {
      const auth = req.headers.authorization ?? "";
      const m = /^Bearer (.+)$/i.exec(auth);
      if (m === null || !timingSafeEqual(digest(m[1]!), tokenDigest)) {
        return deny(res, 401, "Unauthorized", { "www-authenticate": 'Bearer realm="toolgate"' });
      }
      (req as IncomingMessage & { auth?: unknown }).auth = { token: "[redacted]", clientId: "bearer", scopes: [] };
    }
    const sid = req.headers["mcp-session-id"];
    const sessionId = Array.isArray(sid) ? sid[0] : sid;
    if (req.method === "POST") {
      // In flight from its headers on: a body that arrives slowly is not idleness either.
      const known = sessionId === undefined ? undefined : sessions.get(sessionId);
      if (known !== undefined) track(known, res, true);
      const body = await readBody(req, maxBody, budget);
      if (!body.ok) return deny(res, body.status, body.message, {}, body.code);
      if (sessionId !== undefined) {
        const s = sessions.get(sessionId);
        if (s === undefined) return deny(res, 404, "Session not found");
        return s.transport.handleRequest(req, res, body.value);
      }
      if (!isInitialize(body.value)) return deny(res, 400, "Bad request: no session; send initialize first");
      if (sessions.size >= maxSessions) return deny(res, 503, "Too many sessions");
      const server = factory();
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void sessions.set(id, { transport, server, lastSeen: Date.now(), posts: 0 }),
      });
      transport.onclose = () => {
        if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
      };
      await server.connect(transport);
      endSdkCancelledResponses(server, transport);
      return transport.handleRequest(req, res, body.value);
    }
    if (req.method === "GET" || req.method === "DELETE") {
      const s = sessionId === undefined ? undefined : sessions.get(sessionId);
      if (s === undefined) return deny(res, sessionId === undefined ? 400 : 404, sessionId === undefined ? "Bad request: no session" : "Session not found");
      track(s, res, false);
      return s.transport.handleRequest(req, res);
    }
    return deny(res, 405, "Method not allowed", { allow: "GET, POST, DELETE" });
  };

  const http = createServer((req, res) => {
    handle(req, res).catch(() => deny(res, 500, "Internal error"));
  });
  http.headersTimeout = 10_000;
  http.requestTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(port, host, () => {
      http.off("error", reject);
      resolve();
    });
  });
  const address = http.address() as AddressInfo;
  // What the system bound decides, whatever the spelling: every interface needs named hosts.
  if ((address.address === "0.0.0.0" || address.address === "::") && options.allowedHosts === undefined) {
    clearInterval(sweep);
    await new Promise<void>((resolve) => http.close(() => resolve()));
    throw new ToolgateConfigError("E_MCP_HTTP", `serveHttp: ${JSON.stringify(host)} listens on every interface; name the hosts clients connect to (allowedHosts, or --allowed-host on the CLI), or bind one address`);
  }
  const bound = address.port;
  // The loopback names and the bound host's own (any 127.x address, a name): handle.url must work.
  // Clients leave out the default port: on port 80 the Host and Origin headers carry none.
  const names = new Set(["127.0.0.1", "localhost", "[::1]", ...ownHostNames(host)]);
  const hosts = [...names].flatMap((n) => (bound === 80 ? [`${n}:80`, n] : [`${n}:${bound}`]));
  if (options.allowedHosts === undefined) {
    allowedHosts = new Set(hosts); // exact: on port 80 a bare name is the default port, not any port
  } else {
    const entries = options.allowedHosts.map((h) => h.toLowerCase());
    const hasPort = (h: string): boolean => /:\d+$/.test(h.replace(/^\[[^\]]*\]/, ""));
    allowedHosts = new Set(entries.filter(hasPort));
    allowedNames = new Set(entries.filter((h) => !hasPort(h)));
  }
  allowedOrigins = new Set((options.allowedOrigins ?? hosts.map((h) => `http://${h}`)).map((o) => o.toLowerCase()));
  const urlHost = host.includes(":") ? `[${host}]` : host;
  return {
    url: new URL(`http://${urlHost}:${bound}${path}`),
    host,
    port: bound,
    sessions: () => sessions.size,
    async close() {
      clearInterval(sweep);
      await Promise.allSettled([...sessions.values()].map((s) => s.server.close()));
      sessions.clear();
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
    },
  };
}
