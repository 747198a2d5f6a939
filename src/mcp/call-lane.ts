/**
 * The `tools/call` lane: an MCP server whose `tools/call` requests are answered straight from the
 * transport, next to the SDK rather than through its per-request machinery.
 *
 * The SDK's `Protocol` gives every request an `AbortController` (about 4.6 µs on Node 20, more than
 * the whole gate), a context object of closures and a chain of four promises, then hands it to the
 * handler. For `tools/call` the gate already does everything that buys (it is the handler, the
 * timeout and the cancellation), so {@link LaneServer} takes those requests from the transport
 * itself: one promise, and an `AbortController` reused across calls once a call left it untouched.
 * Everything else (initialize, ping, tools/list, notifications, the client's answers) still goes
 * to the SDK unchanged, and so does a `tools/call` the lane did not see (a message delivered
 * while the transport was starting): the same `answer` serves both paths, so their answers are
 * the same. Two things only the lane adds: an answer the transport fails to send is followed by a
 * -32603 error for its request (the SDK reports the failure and sends nothing); and over
 * Streamable HTTP a cancelled call's POST response ends once the POST's other requests are
 * answered (./cancelled-response.ts; the SDK's transport waits for an answer that never comes).
 *
 * What the lane keeps of the SDK's behaviour, each tested in test/mcp/call-lane.test.ts:
 * `notifications/cancelled` aborts the call and no answer is sent for it (the notification still
 * reaches the SDK too); a closed connection aborts every call in flight and sends nothing; an
 * `answer` that throws a {@link ProtocolError} (or the SDK's `McpError`) is sent as
 * `{ code, message, data }`; any other throw is sent as -32603 "Internal error" — its message
 * may hold anything, a secret included, so it goes to `onerror` only; a failed send — rejected
 * or thrown — reaches `onerror` (and, for an answer, is followed by that -32603); a task-augmented call (`params.task`) and a message that is not
 * JSON-RPC 2.0 go to the SDK untouched.
 * @module
 */
import { getEventListeners } from "node:events";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, McpError, type JSONRPCMessage, type MessageExtraInfo, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { isRecord } from "../_record.js";
import { endCancelledResponse } from "./cancelled-response.js";

/** What a call's answer knows of its request, besides `params`. */
export interface CallRequestInfo {
  readonly id: RequestId;
  readonly sessionId: string | undefined;
  readonly authInfo: AuthInfo | undefined;
  /**
   * Aborted when the client cancels the request or the connection closes. Do not keep it, or a
   * signal derived from it (`AbortSignal.any`), past the answer: its controller serves a later
   * call once this one ended without an abort and with no listener left on it.
   */
  readonly signal: AbortSignal;
}

/**
 * A JSON-RPC error to send as is (`code`, `message`, `data`). The SDK's own `McpError` would
 * prefix the message with "MCP error -32602:" a second time on the client. Anything else an
 * answer throws is sent as -32603 "Internal error".
 */
export class ProtocolError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data: unknown,
  ) {
    super(message);
  }
}

/** Answers one `tools/call`: resolves to its result, rejects with a {@link ProtocolError}. */
export type CallAnswer = (params: unknown, info: CallRequestInfo) => Promise<Record<string, unknown>>;

/** Idle controllers kept per connection: enough for the calls one client usually has in flight. */
const POOL_SIZE = 32;

/** An SDK `Server` whose `tools/call` requests take the lane (see the module comment). */
export class LaneServer extends Server {
  readonly #answer: CallAnswer;

  constructor(info: ConstructorParameters<typeof Server>[0], options: ConstructorParameters<typeof Server>[1], answer: CallAnswer) {
    super(info, options);
    this.#answer = answer;
  }

  #laneCalls: () => number = () => 0;

  override async connect(transport: Transport): Promise<void> {
    await super.connect(transport);
    this.#laneCalls = openLane(transport, this.#answer, (e) => this.onerror?.(e));
  }

  /** @internal Requests still to be answered: the lane's calls and the SDK's own handlers. */
  _inFlight(): number {
    return this.#laneCalls() + sdkInFlight(this);
  }
}

/**
 * Requests the SDK's `Protocol` is still handling (its per-request abort controllers; a private
 * field of SDK 1.x, read defensively: 0 when it is not there).
 */
export function sdkInFlight(server: Server): number {
  return sdkControllers(server)?.size ?? 0;
}

/**
 * The abort controller of a request the SDK's `Protocol` is handling (the same private field as
 * {@link sdkInFlight}): `undefined` when there is none, or the field is not there.
 */
export function sdkRequestController(server: Server, id: RequestId): AbortController | undefined {
  const controller: unknown = sdkControllers(server)?.get(id);
  return controller instanceof AbortController ? controller : undefined;
}

function sdkControllers(server: Server): Map<unknown, unknown> | undefined {
  const map = (server as unknown as { _requestHandlerAbortControllers?: unknown })._requestHandlerAbortControllers;
  return map instanceof Map ? map : undefined;
}

function isRequestId(v: unknown): v is RequestId {
  return typeof v === "string" || typeof v === "number";
}

/**
 * Put the lane in front of the handler `Protocol.connect` installed on `transport`. A transport
 * without one (not connected as the SDK does it) is left alone: the SDK path serves every call.
 */
function openLane(transport: Transport, answer: CallAnswer, onerror: (e: Error) => void): () => number {
  const sdk = transport.onmessage;
  const sdkClose = transport.onclose;
  if (sdk === undefined) return () => 0;
  const inFlight = new Map<RequestId, AbortController>();
  const idle: AbortController[] = [];
  let closed = false;

  const serve = (m: Record<string, unknown>, id: RequestId, extra: MessageExtraInfo | undefined): void => {
    const controller = idle.pop() ?? new AbortController();
    inFlight.set(id, controller);
    const info: CallRequestInfo = { id, sessionId: transport.sessionId, authInfo: extra?.authInfo, signal: controller.signal };
    let answered: Promise<Record<string, unknown>>;
    try {
      answered = answer(m.params, info);
    } catch (e) {
      answered = Promise.reject(e);
    }
    answered.then(
      (result) => respond(id, controller, { result, jsonrpc: "2.0", id }), // the SDK's key order: the same bytes on the wire
      (e: unknown) => respond(id, controller, { jsonrpc: "2.0", id, error: errorOf(e, onerror) }),
    );
  };

  const respond = (id: RequestId, controller: AbortController, message: JSONRPCMessage): void => {
    if (inFlight.get(id) === controller) inFlight.delete(id);
    // Cancelled or disconnected: the spec says not to answer, and the SDK does not.
    if (controller.signal.aborted || closed) return;
    // Reused only when nothing still listens to it: a listener left behind would hear the next call's abort.
    if (idle.length < POOL_SIZE && getEventListeners(controller.signal, "abort").length === 0) idle.push(controller);
    send(message).catch((e: unknown) => {
      onerror(new Error(`Failed to send a tools/call answer: ${e instanceof Error ? e.message : String(e)}`));
      // An answer the transport could not write (a value that fails when it is serialized) still
      // answers its request, as an internal error: a client must never wait out its own timeout.
      if ("result" in message && !closed) send({ jsonrpc: "2.0", id, error: { code: ErrorCode.InternalError, message: "Internal error" } }).catch(() => {});
    });
  };
  const send = (message: JSONRPCMessage): Promise<void> => {
    try {
      return transport.send(message);
    } catch (e) {
      return Promise.reject(e); // a transport whose send throws instead of rejecting
    }
  };

  transport.onmessage = (message, extra) => {
    const m: unknown = message;
    if (isRecord(m) && m.jsonrpc === "2.0") {
      // A task-augmented call (params.task) is the SDK's to refuse or run, as without the lane.
      if (m.method === "tools/call" && isRequestId(m.id) && !(isRecord(m.params) && m.params.task !== undefined)) return serve(m, m.id, extra);
      if (m.method === "notifications/cancelled" && isRecord(m.params) && isRequestId(m.params.requestId)) {
        const controller = inFlight.get(m.params.requestId);
        if (controller !== undefined) {
          inFlight.delete(m.params.requestId);
          controller.abort(m.params.reason);
          // No answer will come, so the transport would hold the POST that carried it open (./cancelled-response.ts).
          const failed = endCancelledResponse(transport, m.params.requestId);
          if (failed !== undefined) onerror(new Error(`Failed to end a cancelled call's response: ${failed.message}`));
        }
        // and on to the SDK: its own requests, and a cancelled-notification handler set on the server, still hear it
      }
    }
    sdk(message, extra);
  };
  transport.onclose = () => {
    closed = true;
    const calls = [...inFlight.values()];
    inFlight.clear();
    for (const c of calls) c.abort(new Error("Connection closed"));
    sdkClose?.();
  };
  return () => inFlight.size;
}

/**
 * The JSON-RPC error object for what `answer` threw: a protocol error as the SDK builds it;
 * anything else as a fixed -32603 "Internal error", its detail to `onerror` only.
 */
export function errorOf(e: unknown, onerror: (e: Error) => void): { code: number; message: string; data?: unknown } {
  if ((e instanceof ProtocolError || e instanceof McpError) && Number.isSafeInteger(e.code)) {
    return e.data !== undefined ? { code: e.code, message: e.message, data: e.data } : { code: e.code, message: e.message };
  }
  onerror(new Error(`tools/call failed: ${e instanceof Error ? e.message : String(e)}`));
  return { code: ErrorCode.InternalError, message: "Internal error" };
}
