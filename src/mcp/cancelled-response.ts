/**
 * End the HTTP response of a cancelled request's POST.
 *
 * The SDK's Streamable HTTP transport ends a POST's response (its SSE stream, or its pending JSON
 * response) once every request the POST carried has been answered. A cancelled request is never
 * answered (MCP says not to), so that response stayed open until the client dropped the
 * connection, which the SDK's own client does not do: one open response (with its keep-alive
 * timer and the transport's entries for its requests) per cancelled call, for the whole session.
 * The transport has no public way to say "this request will not be answered": its
 * `closeSSEStream(requestId)` ends the stream at once, costing the other requests of a batch their
 * answers, does not settle a pending JSON response, and keeps the request's entries.
 * @module
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";
import { isRecord } from "../_record.js";

/** What the function below reads of a stream's entry in the transport. */
interface StreamEntry {
  readonly cleanup?: unknown;
  readonly resolveJson?: unknown;
}

/**
 * Forget `id`, a request that will get no answer, in a Streamable HTTP transport, and end its
 * POST's response if it was waiting only for it: in SSE mode the stream ends (the other requests'
 * answers were written as they came); in JSON mode the response is sent with the other requests'
 * answers (one as an object, several as an array, as the SDK does), or as 202 with no body when
 * there are none. When the POST still has a request to answer, the transport's own send of that
 * answer ends it, `id` no longer counted. Call it only when no answer will be sent for `id`.
 *
 * Relies on private fields of `@modelcontextprotocol/sdk` 1.32.x's
 * `WebStandardStreamableHTTPServerTransport` (reached through `StreamableHTTPServerTransport`'s
 * `_webStandardTransport`): `_requestToStreamMapping` (request id → stream id),
 * `_requestResponseMap` (answers held until the POST's last one), `_streamMapping` (stream id →
 * `{ cleanup, resolveJson? }`) and `_eventStore`. When one of the three maps is missing or not a
 * `Map`, it does nothing (the response stays open, as without it). Nothing either when the transport keeps an
 * event store: a client holding a resumption cursor reconnects when a stream ends early, and the
 * stream it resumes would have nothing left to end it.
 *
 * Returns what went wrong as a value (an answer held for a JSON response that cannot be written as
 * JSON, say), for the caller's `onerror`; `undefined` otherwise.
 */
export function endCancelledResponse(transport: Transport, id: RequestId): Error | undefined {
  try {
    end(transport, id);
    return undefined;
  } catch (e) {
    return e instanceof Error ? e : new Error(String(e));
  }
}

function end(transport: Transport, id: RequestId): void {
  const outer: unknown = transport;
  const t: unknown = isRecord(outer) && isRecord(outer._webStandardTransport) ? outer._webStandardTransport : outer;
  if (!isRecord(t) || t._eventStore !== undefined) return;
  const toStream = t._requestToStreamMapping;
  const answers = t._requestResponseMap;
  const streams = t._streamMapping;
  if (!(toStream instanceof Map) || !(answers instanceof Map) || !(streams instanceof Map)) return;
  const streamId: unknown = toStream.get(id);
  if (streamId === undefined || answers.has(id)) return; // not waiting, or already answered
  toStream.delete(id);
  const others = [...toStream].filter(([, s]) => s === streamId).map(([other]) => other as unknown);
  if (!others.every((o) => answers.has(o))) return; // the last answer ends the response, as usual
  const held = others.map((o) => answers.get(o) as unknown);
  for (const o of others) {
    answers.delete(o);
    toStream.delete(o);
  }
  const stream: unknown = streams.get(streamId);
  if (!isRecord(stream)) return; // the client went away: nothing left to end
  const { cleanup, resolveJson } = stream as StreamEntry;
  if (typeof resolveJson === "function") {
    const session = typeof t.sessionId === "string" ? { "mcp-session-id": t.sessionId } : {};
    const response =
      held.length === 0
        ? new Response(null, { status: 202, headers: session })
        : new Response(JSON.stringify(held.length === 1 ? held[0] : held), { status: 200, headers: { "content-type": "application/json", ...session } });
    (resolveJson as (r: Response) => void)(response);
  }
  // SSE: closes the stream, which ends the HTTP response. JSON: drops the settled entry.
  if (typeof cleanup === "function") (cleanup as () => void)();
}
