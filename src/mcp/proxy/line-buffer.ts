/**
 * The stdio upstream's line reader, in place of the SDK's `ReadBuffer` on a
 * `StdioClientTransport`. It reads and checks lines exactly as the SDK does (JSON, then the SDK's
 * `JSONRPCMessageSchema`, whose pass is skipped only for a plain result answer it is known to accept
 * ({@link isPlainResultAnswer}); same size limit and the same error text for an oversized message), with
 * one addition: a line that is JSON but not valid JSON-RPC and carries an id of the proxy's own
 * request lane (`"toolgate:<n>"`, see ./request-lane.ts) is reported as an
 * {@link InvalidAnswerError} naming that id, so the lane rejects that call at once instead of
 * waiting for its timeout (the SDK's reader throws a ZodError that has lost the id).
 *
 * Installed on the transport's private `_readBuffer` field: when a future SDK has no such field
 * (or a different reader), {@link installLineBuffer} does nothing and the SDK's reader stays.
 * @module
 */
import { ReadBuffer } from "@modelcontextprotocol/sdk/shared/stdio.js";
import { JSONRPCMessageSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { isRecord } from "../_record.js";
import { zodSummary } from "./error-text.js";

/** The id prefix of the request lane's calls. */
export const LANE_ID_PREFIX = "toolgate:";

/** A line answering a lane request that is not a valid JSON-RPC response. */
export class InvalidAnswerError extends Error {
  override readonly name = "InvalidAnswerError";
  constructor(
    /** The lane request id the line answers. */
    readonly id: string,
    /** What is wrong with it (zod issue paths and messages, never the values). */
    readonly problem: string,
  ) {
    super(`upstream answered ${id} with a message that is not valid JSON-RPC: ${problem}`);
  }
}

/** The SDK ReadBuffer's interface, as StdioClientTransport uses it. */
interface Reader {
  append(chunk: Buffer): void;
  readMessage(): JSONRPCMessage | null;
  clear(): void;
}

class LineBuffer implements Reader {
  #buffer: Buffer | undefined;
  readonly #max: number;

  constructor(maxBytes: number) {
    this.#max = maxBytes;
  }

  append(chunk: Buffer): void {
    const size = (this.#buffer?.length ?? 0) + chunk.length;
    if (size > this.#max) {
      this.clear();
      throw new Error(`ReadBuffer exceeded maximum size of ${this.#max} bytes`);
    }
    this.#buffer = this.#buffer === undefined ? chunk : Buffer.concat([this.#buffer, chunk]);
  }

  readMessage(): JSONRPCMessage | null {
    const b = this.#buffer;
    if (b === undefined) return null;
    const index = b.indexOf(10);
    if (index === -1) return null;
    const line = b.toString("utf8", 0, index).replace(/\r$/, "");
    // Nothing left after the line (the usual case: one message per chunk): no empty view to copy
    // into the next chunk.
    this.#buffer = index + 1 === b.length ? undefined : b.subarray(index + 1);
    const value: unknown = JSON.parse(line); // a SyntaxError, as the SDK's reader throws
    if (isPlainResultAnswer(value)) return value;
    const r = JSONRPCMessageSchema.safeParse(value);
    if (r.success) return r.data;
    if (isRecord(value) && typeof value.id === "string" && value.id.startsWith(LANE_ID_PREFIX) && !("method" in value)) {
      throw new InvalidAnswerError(value.id, zodSummary(r.error.issues));
    }
    throw r.error;
  }

  clear(): void {
    this.#buffer = undefined;
  }
}

/**
 * True for the answer a call usually gets: exactly `jsonrpc: "2.0"`, a string `id` and a `result`
 * object without `_meta` or `__proto__` keys. The SDK's `JSONRPCMessageSchema` accepts every such value as it is (a
 * strict result response whose loose result has only its optional `_meta` to check), so the zod
 * pass is skipped for it; anything else, `_meta` included, still takes that pass.
 */
export function isPlainResultAnswer(v: unknown): v is JSONRPCMessage {
  if (!isRecord(v) || v.jsonrpc !== "2.0" || typeof v.id !== "string") return false;
  const r = v.result;
  // `__proto__`: an own key of parsed JSON, which zod's copy of the result drops; so must this.
  if (!isRecord(r) || Object.hasOwn(r, "_meta") || Object.hasOwn(r, "__proto__")) return false;
  let keys = 0;
  for (const k in v) {
    if (!Object.hasOwn(v, k)) continue;
    if (k !== "jsonrpc" && k !== "id" && k !== "result") return false;
    keys++;
  }
  return keys === 3;
}

/**
 * Replace the SDK reader of a (not yet started) stdio client transport. Returns whether it did.
 * @example installLineBuffer(new StdioClientTransport({ command: "node", args: ["server.js"] }), 16 * 1024 * 1024);
 */
export function installLineBuffer(transport: object, maxBytes: number): boolean {
  const t = transport as { _readBuffer?: unknown };
  if (!(t._readBuffer instanceof ReadBuffer)) return false;
  t._readBuffer = new LineBuffer(maxBytes);
  return true;
}
