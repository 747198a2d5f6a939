/**
 * The stdio upstream's line reader, in place of the SDK's `ReadBuffer` on a
 * `StdioClientTransport`. It reads and checks lines exactly as the SDK does (JSON, then the SDK's
 * `JSONRPCMessageSchema`, whose pass is skipped only for a plain result answer it is known to accept
 * ({@link isPlainResultAnswer}); same size limit and the same error text for an oversized message), with
 * two additions: a line nested deeper than MAX_MESSAGE_DEPTH is refused before it is parsed, and a line that is JSON but not valid JSON-RPC and carries an id of the proxy's own
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
import { isRecord } from "../../_record.js";
import { zodSummary } from "./error-text.js";
import { MAX_MESSAGE_DEPTH, nestsWithin } from "../json-depth.js";

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

/** A line nested deeper than {@link MAX_MESSAGE_DEPTH}: refused before it is parsed. */
export class TooDeepError extends SyntaxError {
  override readonly name = "TooDeepError";
  constructor() {
    super(`a message nested deeper than ${MAX_MESSAGE_DEPTH} levels was ignored`);
  }
}

/**
 * Lines from a stream, each byte searched for the newline once and each line joined once: the SDK's
 * reader joins the whole buffer again on every chunk and searches it from the start (a 16 MiB line
 * in 64 KiB chunks took 2.7 s, against 131 ms in one).
 */
class LineBuffer implements Reader {
  #parts: Buffer[] = [];
  #size = 0;
  /** Leading parts already searched (no newline in them), and their bytes: a search goes on from there. */
  #searchedParts = 0;
  #searchedBytes = 0;
  readonly #max: number;
  readonly #lane: boolean;

  constructor(maxBytes: number, lane: boolean) {
    this.#max = maxBytes;
    this.#lane = lane;
  }

  append(chunk: Buffer): void {
    if (this.#size + chunk.length > this.#max) {
      this.clear();
      throw new Error(`ReadBuffer exceeded maximum size of ${this.#max} bytes`);
    }
    this.#parts.push(chunk);
    this.#size += chunk.length;
  }

  /** The next line's bytes (without its newline), or undefined while none is complete. */
  #nextLine(): Buffer | undefined {
    const parts = this.#parts;
    let start = this.#searchedBytes; // offset of parts[p] in the held bytes
    for (let p = this.#searchedParts; p < parts.length; p++) {
      const part = parts[p]!;
      const at = part.indexOf(10);
      if (at !== -1) {
        const head = p === 0 ? part.subarray(0, at) : Buffer.concat([...parts.slice(0, p), part.subarray(0, at)]);
        const rest = part.subarray(at + 1);
        this.#parts = rest.length > 0 ? [rest, ...parts.slice(p + 1)] : parts.slice(p + 1);
        this.#size -= start + at + 1;
        this.#searchedParts = 0;
        this.#searchedBytes = 0;
        return head;
      }
      start += part.length;
    }
    this.#searchedParts = parts.length;
    this.#searchedBytes = start;
    return undefined;
  }

  readMessage(): JSONRPCMessage | null {
    const bytes = this.#nextLine();
    if (bytes === undefined) return null;
    const text = bytes.toString("utf8");
    const line = text.charCodeAt(text.length - 1) === 13 ? text.slice(0, -1) : text; // a CRLF line's CR
    if (!nestsWithin(line, MAX_MESSAGE_DEPTH)) throw new TooDeepError();
    const value: unknown = JSON.parse(line); // a SyntaxError, as the SDK's reader throws
    if (isPlainResultAnswer(value)) return value;
    const r = JSONRPCMessageSchema.safeParse(value);
    if (r.success) return r.data;
    if (this.#lane && isRecord(value) && typeof value.id === "string" && value.id.startsWith(LANE_ID_PREFIX) && !("method" in value)) {
      throw new InvalidAnswerError(value.id, zodSummary(r.error.issues));
    }
    throw r.error;
  }

  clear(): void {
    this.#parts = [];
    this.#size = 0;
    this.#searchedParts = 0;
    this.#searchedBytes = 0;
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
  return install(transport, maxBytes, true);
}

/**
 * The same reader for a stdio server transport (`StdioServerTransport`, which has the same private
 * field), without the lane's answers: what a client sends is read in linear time, and a line nested
 * deeper than {@link MAX_MESSAGE_DEPTH} is refused before it is parsed. Returns whether it did.
 */
export function installServerLineBuffer(transport: object, maxBytes: number): boolean {
  return install(transport, maxBytes, false);
}

/** Replace the SDK's reader on a transport's private `_readBuffer` field, when it has that reader. */
function install(transport: object, maxBytes: number, lane: boolean): boolean {
  const t = transport as { _readBuffer?: unknown };
  if (!(t._readBuffer instanceof ReadBuffer)) return false;
  t._readBuffer = new LineBuffer(maxBytes, lane);
  return true;
}
