/**
 * `createMcpServer`: serve a gate's tools over MCP with the official SDK's low-level `Server`.
 * `tools/call` goes to `gate.call` only — the SDK neither validates nor rewords the arguments
 * first — so the client sees the gate's envelope.
 * @module
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ErrorCode, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { Protocol, type RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { z } from "zod";
import type { CallOptions, Gate } from "../gate.js";
import type { AnyTool, Principal } from "../tool.js";
import type { CallMeta, ToolFailure } from "../result.js";
import { ToolgateConfigError } from "../errors.js";
import { checkKnownKeys, optionNames } from "../known-keys.js";
import { IDEMPOTENCY_META_KEY, RESULT_META_KEY, toCallToolResult, type McpToolResult } from "./result.js";
import { toMcpTool, type McpTool } from "./listing.js";
import { LaneServer, ProtocolError, errorOf, type CallAnswer } from "./call-lane.js";
import { isRecord } from "../_record.js";
import { _recordRefusal } from "../refusal.js";

/** What {@link McpServerOptions.principal} sees about the request. */
export interface McpRequestInfo {
  /** Set by the HTTP transport when a bearer token was checked. */
  readonly authInfo: AuthInfo | undefined;
  /** The Streamable HTTP session, when there is one. */
  readonly sessionId: string | undefined;
}

/** Options of {@link createMcpServer}. */
export interface McpServerOptions {
  /** Server name reported in `initialize`. */
  readonly name: string;
  /** Server version reported in `initialize`. */
  readonly version: string;
  /** Optional `instructions` for the client. Default: none. */
  readonly instructions?: string;
  /**
   * Map the request to the gate's principal (for `authorize`). Default: no principal. If it throws,
   * the call is answered DENIED with a fixed message (nothing runs) and the error goes to the
   * server's `onerror` only, never to the client.
   */
  principal?(info: McpRequestInfo): Principal | undefined;
}

/**
 * The `tools/call` request as toolgate reads it: `params` is taken as sent and checked by
 * {@link readParams}. The SDK's own schema would parse `arguments` as a record, which silently
 * drops a `__proto__` key before the gate's hardening could refuse it, and costs a full parse.
 */
const CallRequest = z.object({ method: z.literal("tools/call"), params: z.unknown() });

type Params = { name: string; arguments: unknown; _meta: Record<string, unknown> | undefined };

/** The params of a tools/call request, or a JSON-RPC -32602 error. */
function readParams(params: unknown): Params {
  if (!isRecord(params) || typeof params.name !== "string") {
    throw new ProtocolError(ErrorCode.InvalidParams, "Invalid tools/call request: params.name must be a string", undefined);
  }
  const meta = params._meta;
  if (meta !== undefined && !isRecord(meta)) {
    throw new ProtocolError(ErrorCode.InvalidParams, "Invalid tools/call request: params._meta must be an object", undefined);
  }
  const args = params.arguments;
  if (args !== undefined && !isRecord(args)) {
    throw new ProtocolError(ErrorCode.InvalidParams, "Invalid tools/call request: params.arguments must be an object", undefined);
  }
  return { name: params.name, arguments: args, _meta: meta };
}

const RESERVED_META = "The _meta argument is reserved; send it as the request's params._meta";

/**
 * Create an MCP server (the SDK's `Server`) that lists and calls the gate's tools. Connect it to
 * a transport yourself, or use {@link serveStdio} / {@link serveHttp}.
 *
 * - `tools/list`: input side `inputSchema`, `outputSchema` when it is an object, annotations
 *   (`readOnlyHint` from the tool's effect), `_meta["toolgate/tool"]` = `{ version, effect, approval }`.
 * - `tools/call` success: `structuredContent` = data (object outputs) and the same JSON as text,
 *   `_meta["toolgate/meta"]` = the call's meta. Failure: `isError: true`, one text block
 *   (`CODE: message` and the envelope JSON), `_meta["toolgate/result"]` = the envelope, no
 *   `structuredContent`. Unknown tool: JSON-RPC error -32602 with the envelope in `error.data`.
 * - `callId` is the JSON-RPC request id (prefixed with the session id on HTTP sessions); the
 *   request's `params._meta` becomes the gate's `_meta` (`ctx.meta`), and
 *   `_meta["toolgate/idempotencyKey"]` the call's idempotency key.
 *
 * Throws {@link ToolgateConfigError} when a tool's input schema is not an object schema.
 * @example
 * const server = createMcpServer(gate, { name: "orders", version: "1.0.0" });
 * await server.connect(new StdioServerTransport());
 */
export function createMcpServer(gate: Gate, options: McpServerOptions): Server {
  return _createMcpServer(gate, options, {});
}

/** @internal Seams for the proxy: its own listing, a check before the gate, its own success shape. */
export interface _ServerHooks {
  /** The listing to advertise (called per tools/list). Default: the gate's tools. */
  readonly tools?: () => McpTool[];
  /** The listing can change: the server advertises `listChanged` (the proxy sends the notification). */
  readonly listChanged?: boolean;
  /** A failure to answer instead of calling the gate (refused tool, rate limit, upstream down). */
  readonly before?: (name: string, callId: string) => ToolFailure | undefined;
  /** Build the success result from the gate's data. Default: structuredContent + text. */
  readonly success?: (data: unknown, meta: CallMeta) => McpToolResult;
}

const SERVER_KEYS = optionNames<McpServerOptions>()(["name", "version", "instructions", "principal"]);

/** @internal createMcpServer with the proxy's seams. */
export function _createMcpServer(gate: Gate, options: McpServerOptions, hooks: _ServerHooks): Server {
  if (typeof options !== "object" || options === null || typeof options.name !== "string" || typeof options.version !== "string") {
    throw new ToolgateConfigError("E_MCP_OPTIONS", "createMcpServer: options must be { name: string, version: string }");
  }
  checkKnownKeys(options, SERVER_KEYS, "", (m) => {
    throw new ToolgateConfigError("E_MCP_OPTIONS", `createMcpServer: ${m}`);
  });
  if (options.principal !== undefined && typeof options.principal !== "function") {
    throw new ToolgateConfigError("E_MCP_OPTIONS", "createMcpServer: principal must be a function");
  }
  if (options.instructions !== undefined && typeof options.instructions !== "string") {
    throw new ToolgateConfigError("E_MCP_OPTIONS", "createMcpServer: instructions must be a string");
  }
  const tools: McpTool[] = gate.list().map(toMcpTool);
  const structured = new Set(tools.filter((t) => t.outputSchema !== undefined).map((t) => t.name));
  const listResult = { tools };
  const listTools = hooks.tools;
  const { before, success } = hooks;
  const principalOf = options.principal?.bind(options);

  // A refusal made here is recorded as the gate records a call (src/refusal.ts), then answered.
  const answerRefusal = async (failure: ToolFailure): Promise<McpToolResult> => toCallToolResult(await _recordRefusal(gate, failure), false);
  // Not `async`: an answer is one promise, the gate's (a throw here reaches the lane, which rejects with it).
  const answer: CallAnswer = (params, info) => {
    const { name, arguments: rawArgs, _meta: requestMeta } = readParams(params);
    const callId = info.sessionId === undefined ? String(info.id) : `${info.sessionId}:${String(info.id)}`;
    const opts: { -readonly [K in keyof CallOptions]: CallOptions[K] } = { callId, signal: info.signal };
    let args: unknown = rawArgs ?? {};
    if (before !== undefined) {
      const refused = before(name, callId);
      if (refused !== undefined) return answerRefusal(refused);
    }
    // An unknown name goes to the gate as it is: it answers (and records) UNKNOWN_TOOL first.
    const tool = gate.tool(name);
    if (tool !== undefined && isRecord(args) && Object.hasOwn(args, "_meta")) return answerRefusal(refusedBefore(tool, name, callId, "reserved_meta"));
    if (requestMeta !== undefined) {
      const key = requestMeta[IDEMPOTENCY_META_KEY];
      if (typeof key === "string") opts.idempotencyKey = key;
      if (isRecord(args)) args = { ...args, _meta: requestMeta };
    }
    if (principalOf !== undefined && tool !== undefined) {
      let p: Principal | undefined;
      try {
        p = principalOf({ authInfo: info.authInfo, sessionId: info.sessionId });
      } catch (e) {
        // Fail closed, and never show the hook's message (a lookup error can carry a connection string).
        report(new Error(`principal hook threw for ${JSON.stringify(name)}: ${e instanceof Error ? e.message : String(e)}`));
        return answerRefusal(refusedBefore(tool, name, callId, "principal"));
      }
      if (p !== undefined) opts.principal = p;
    }
    return gate.call(name, args, opts).then((r) => {
      if (!r.ok && r.code === "UNKNOWN_TOOL") {
        throw new ProtocolError(ErrorCode.InvalidParams, r.message, { [RESULT_META_KEY]: r });
      }
      if (r.ok && success !== undefined) return success(r.data, r.meta);
      return toCallToolResult(r, structured.has(name), tool?.effect);
    });
  };
  // tools/call takes the lane (./call-lane.ts): answered from the transport, without the SDK's
  // per-request AbortController and promise chain. The handler registered below is the same
  // answer, for a call the lane did not see.
  const server = new LaneServer(
    { name: options.name, version: options.version },
    { capabilities: { tools: { listChanged: hooks.listChanged === true } }, ...(options.instructions !== undefined ? { instructions: options.instructions } : {}) },
    answer,
  );
  server.setRequestHandler(ListToolsRequestSchema, () => (listTools === undefined ? listResult : { tools: listTools() }));
  const report = (e: Error): void => server.onerror?.(e);
  // The SDK would send any thrown error's own message; map it as the lane does (fixed -32603 unless a protocol error).
  const onCall = async (request: z.infer<typeof CallRequest>, extra: RequestHandlerExtra<never, never>): Promise<McpToolResult> => {
    try {
      return (await answer(request.params, { id: extra.requestId, sessionId: extra.sessionId, authInfo: extra.authInfo, signal: extra.signal })) as McpToolResult;
    } catch (e) {
      const error = errorOf(e, report);
      throw new ProtocolError(error.code, error.message, error.data);
    }
  };
  // Registered on the SDK's Protocol base class rather than through Server#setRequestHandler,
  // whose tools/call wrapper re-parses every request with the SDK's schema and re-validates our
  // result (built by toCallToolResult, so well-formed by construction) with CallToolResultSchema.
  // The gate has already decided; two more zod passes per call buy nothing.
  const register = Protocol.prototype.setRequestHandler as unknown;
  if (typeof register === "function" && server instanceof Protocol) {
    (register as (this: Server, schema: typeof CallRequest, h: typeof onCall) => void).call(server, CallRequest, onCall);
  } else {
    server.setRequestHandler(CallRequest, onCall);
  }
  return server;
}

const PRINCIPAL_FAILED = "The caller could not be identified; the call was refused";
const INVALID_INPUT = "Arguments do not match the tool's input schema; fix the listed fields";

/**
 * A call refused before the gate (nothing ran): the `principal` hook threw (DENIED, fixed message),
 * or the arguments carry the reserved `_meta` key (INVALID_INPUT; the gate would take it for the envelope).
 */
function refusedBefore(tool: AnyTool, name: string, callId: string, why: "principal" | "reserved_meta"): ToolFailure {
  const meta = { tool: name, version: tool.version, callId, attempts: 0, durationMs: 0 };
  if (why === "principal") return { ok: false, code: "DENIED", message: PRINCIPAL_FAILED, retryable: false, effect: "none", meta };
  const issues = [{ path: "_meta", code: "reserved_key", message: RESERVED_META }];
  return { ok: false, code: "INVALID_INPUT", message: INVALID_INPUT, issues, retryable: false, effect: "none", meta };
}
