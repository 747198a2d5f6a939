/**
 * Serve an MCP server over stdio: JSON-RPC on stdout only (logs belong on stderr), closed when
 * stdin ends.
 * @module
 */
import type { Readable, Writable } from "node:stream";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { LaneServer, sdkInFlight } from "./call-lane.js";
import { ToolgateConfigError } from "../errors.js";
import { checkKnownKeys, optionNames } from "../known-keys.js";
import { isZodError, scrubLine } from "./proxy/error-text.js";
import { installServerLineBuffer, TooDeepError } from "./proxy/line-buffer.js";

/** A diagnostic line for a transport error that never repeats what the peer sent, secrets scrubbed. */
export function describeError(e: Error): string {
  const msg = e.message;
  if (/ReadBuffer exceeded/.test(msg)) return "a message larger than the limit (maxMessageBytes) arrived; the session is closed";
  if (e instanceof TooDeepError) return msg;
  // A ZodError (the SDK's JSON-RPC schema refused the line) is named, never quoted: its message is a
  // JSON dump of issues whose first line is "[", and they can name the keys the peer sent.
  if (e instanceof SyntaxError || isZodError(e) || /JSON|Unexpected token|invalid_union|invalid_type|Invalid input/i.test(msg)) return "a line that is not JSON-RPC was ignored";
  // A thrown message (a principal hook's, a wrapped gate's) can name a connection string or a key.
  return scrubLine((msg.split("\n", 1)[0] ?? "").slice(0, 800)).slice(0, 200);
}

/** Options of {@link serveStdio}. */
export interface StdioOptions {
  /** Input stream. Default `process.stdin`. */
  readonly stdin?: Readable;
  /** Output stream. Default `process.stdout`. */
  readonly stdout?: Writable;
  /** Largest buffered incoming message, bytes; a larger one is dropped with an error. Default 16 MiB. */
  readonly maxMessageBytes?: number;
  /**
   * When stdin ends, how long the calls still in flight may take to answer before the server
   * closes and aborts the rest, ms. Default 60,000.
   */
  readonly drainMs?: number;
}

const STDIO_KEYS = optionNames<StdioOptions>()(["stdin", "stdout", "maxMessageBytes", "drainMs"]);

/** A running stdio server. */
export interface StdioHandle {
  /** Resolves when the transport closed (stdin ended and the calls in flight answered, or {@link StdioHandle.close} was called). */
  readonly closed: Promise<void>;
  /** Close now: calls still in flight are aborted and get no answer. */
  close(): Promise<void>;
}

/**
 * Connect `server` to stdio and keep serving until stdin ends. Calls in flight when it ends still
 * answer (for up to `drainMs`), as the SDK's own stdio server does; then the server closes.
 * @example
 * const handle = await serveStdio(createMcpServer(gate, { name: "orders", version: "1.0.0" }));
 * await handle.closed;
 */
export async function serveStdio(server: Server, options: StdioOptions = {}): Promise<StdioHandle> {
  if (typeof options !== "object" || options === null) throw new ToolgateConfigError("E_MCP_OPTIONS", "serveStdio: options must be an object");
  checkKnownKeys(options, STDIO_KEYS, "", (m) => {
    throw new ToolgateConfigError("E_MCP_OPTIONS", `serveStdio: ${m}`);
  });
  const drainMs = options.drainMs ?? 60_000;
  if (!Number.isInteger(drainMs) || drainMs < 0) throw new ToolgateConfigError("E_MCP_OPTIONS", "serveStdio: drainMs must be a non-negative integer (ms)");
  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  const transport = new StdioServerTransport(stdin, stdout, { maxBufferSize: options.maxMessageBytes ?? 16 * 1024 * 1024 });
  // A reader in linear time, that refuses a line nested too deep before parsing it (./proxy/line-buffer.ts).
  installServerLineBuffer(transport, options.maxMessageBytes ?? 16 * 1024 * 1024);
  let resolveClosed!: () => void;
  const closed = new Promise<void>((r) => (resolveClosed = r));
  const prior = server.onclose;
  server.onclose = () => {
    prior?.();
    resolveClosed();
  };
  // A message that is not JSON-RPC is reported (without its content), never fatal.
  server.onerror = (e) => process.stderr.write(`toolgate mcp: ${describeError(e)}\n`);
  await server.connect(transport);
  const close = async (): Promise<void> => {
    await server.close();
  };
  let ending = false;
  // The client will send nothing more; what it asked for is still answered (bounded), then close.
  const end = async (): Promise<void> => {
    if (ending) return;
    ending = true;
    const inFlight = (): number => (server instanceof LaneServer ? server._inFlight() : sdkInFlight(server));
    const until = Date.now() + drainMs;
    while (inFlight() > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
    await close();
  };
  stdin.once("end", () => void end());
  stdin.once("close", () => void end());
  return { closed, close };
}
