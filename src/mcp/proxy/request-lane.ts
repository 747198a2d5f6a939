/**
 * The proxy's `tools/call` requests to its upstream, sent straight on the client transport. The
 * SDK `Client` still owns the connection (initialize, tools/list, notifications, its own
 * requests); a call only needs an id, a pending entry, a deadline and the answer, so it skips the
 * SDK's per-request work (its AbortSignal wiring, progress and task bookkeeping, a zod pass over
 * the result). Ids are strings in toolgate's own namespace, so they never meet the SDK's numbers.
 *
 * Outcomes, as `UpstreamError` reasons: a JSON-RPC error answer is `protocol` (the SDK's
 * connection-closed and request-timeout codes map to `closed` and `timeout`, as the SDK's own
 * errors did), a result that is not an object is `protocol`, no answer within `timeoutMs` is
 * `timeout` (and the upstream is told `notifications/cancelled`), a connection that closes or a
 * send that fails is `closed`. An aborted signal rejects with its reason and cancels upstream.
 * An answer that is JSON but not valid JSON-RPC, which the SDK's reader drops, reaches the lane as
 * an `InvalidAnswerError` on the transport's `onerror` (./line-buffer.ts) and is `protocol` at once.
 * @module
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import type { AbortSource } from "../../attempt.js";
import { MAX_TIMER_MS, scheduleDeadline, type DeadlineHandle } from "../../policy/deadline.js";
import { isRecord } from "../../_record.js";
import { UpstreamError } from "./upstream-error.js";
import { InvalidAnswerError, LANE_ID_PREFIX } from "./line-buffer.js";

/** Sends `tools/call` requests on one connected transport. */
export interface RequestLane {
  /**
   * Resolves to the result object; rejects with an {@link UpstreamError} or the abort's reason.
   * `abort`: the caller's signal, or a function that registers one abort callback (the gate's
   * attempt hook, which costs no AbortController).
   */
  call(params: Record<string, unknown>, abort: AbortSignal | AbortSource, timeoutMs: number): Promise<Record<string, unknown>>;
}

interface Pending {
  readonly resolve: (r: Record<string, unknown>) => void;
  readonly reject: (e: unknown) => void;
  /** On the shared deadline queue (src/policy/deadline.ts): no timer object per call. */
  readonly deadline: DeadlineHandle;
  /** The caller's signal while it is listened to. */
  readonly signal: AbortSignal | undefined;
  readonly onAbort: () => void;
}

/** The id prefix of the lane's requests. */
const PREFIX = LANE_ID_PREFIX;

/**
 * Open the lane on a transport that an SDK `Client` has connected (its handler is kept for every
 * message that is not an answer to the lane). Without a connected handler, returns undefined.
 */
export function openRequestLane(transport: Transport): RequestLane | undefined {
  const sdk = transport.onmessage;
  const sdkClose = transport.onclose;
  const sdkError = transport.onerror;
  if (sdk === undefined) return undefined;
  const pending = new Map<string, Pending>();
  let next = 0;
  let closed = false;

  const finish = (id: string): Pending | undefined => {
    const p = pending.get(id);
    if (p === undefined) return undefined;
    pending.delete(id);
    p.deadline.cancel();
    p.signal?.removeEventListener("abort", p.onAbort);
    return p;
  };
  /** `transport.send`, whether it rejects or throws. */
  const send = (message: Parameters<Transport["send"]>[0]): Promise<void> => {
    try {
      return transport.send(message);
    } catch (e) {
      return Promise.reject(e);
    }
  };
  const cancelUpstream = (id: string, reason: string): void => {
    send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason } }).catch(() => undefined);
  };

  transport.onmessage = (message, extra) => {
    const m: unknown = message;
    if (isRecord(m) && typeof m.id === "string" && m.id.startsWith(PREFIX) && m.method === undefined) {
      const p = finish(m.id);
      if (p === undefined) return; // an answer after a timeout or a cancel: nobody waits for it
      if (isRecord(m.error)) return p.reject(errorAnswer(m.error.code));
      if (isRecord(m.result)) return p.resolve(m.result);
      return p.reject(new UpstreamError("protocol", "upstream answered a result that is not an object"));
    }
    sdk(message, extra);
  };
  transport.onerror = (e) => {
    if (e instanceof InvalidAnswerError) finish(e.id)?.reject(new UpstreamError("protocol", "upstream answered with a message that is not valid JSON-RPC"));
    sdkError?.(e); // still logged by the client's handler
  };
  transport.onclose = () => {
    closed = true;
    const calls = [...pending.keys()];
    for (const id of calls) finish(id)?.reject(new UpstreamError("closed", "upstream connection closed during the call"));
    sdkClose?.();
  };

  return {
    call(params, abort, timeoutMs) {
      const signal = typeof abort === "function" ? undefined : abort;
      if (signal?.aborted === true) return Promise.reject(signal.reason);
      if (closed) return Promise.reject(new UpstreamError("closed", "upstream connection closed during the call"));
      const id = `${PREFIX}${++next}`;
      return new Promise<Record<string, unknown>>((resolve, reject) => {
        let sent = false;
        const aborted = (reason: unknown): void => {
          if (finish(id) === undefined) return;
          if (sent) cancelUpstream(id, String(reason));
          reject(reason);
        };
        const onAbort = (): void => aborted(signal?.reason);
        const deadline = scheduleDeadline(Math.min(timeoutMs, MAX_TIMER_MS), {
          onDeadline: () => {
            if (finish(id) === undefined) return;
            cancelUpstream(id, "timeout");
            reject(new UpstreamError("timeout", "upstream did not answer in time"));
          },
        });
        pending.set(id, { resolve, reject, deadline, signal, onAbort });
        if (signal !== undefined) signal.addEventListener("abort", onAbort);
        else (abort as AbortSource)(aborted); // may call `aborted` at once: then nothing is sent
        if (!pending.has(id)) return;
        sent = true;
        send({ jsonrpc: "2.0", id, method: "tools/call", params }).catch(() => {
          finish(id)?.reject(new UpstreamError("closed", "upstream transport failed during the call"));
        });
      });
    },
  };
}

function errorAnswer(code: unknown): UpstreamError {
  if (code === ErrorCode.ConnectionClosed) return new UpstreamError("closed", "upstream connection closed during the call");
  if (code === ErrorCode.RequestTimeout) return new UpstreamError("timeout", "upstream did not answer in time");
  return new UpstreamError("protocol", `upstream answered a JSON-RPC error ${typeof code === "number" ? code : "without a code"}`);
}
