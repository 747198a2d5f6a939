/**
 * `toolgate/mcp`: serve a gate over MCP with the official SDK, and guard any MCP server as a proxy.
 *
 * @example
 * import { createMcpServer, serveStdio } from "toolgate/mcp";
 * await serveStdio(createMcpServer(gate, { name: "orders", version: "1.0.0" }));
 * @module
 */
export { createMcpServer } from "./server.js";
export type { McpRequestInfo, McpServerOptions } from "./server.js";
export { toMcpTool } from "./listing.js";
export type { McpTool } from "./listing.js";
export {
  CALL_META_KEY,
  IDEMPOTENCY_META_KEY,
  RESULT_META_KEY,
  TOOL_META_KEY,
  PROXIED_META_KEY,
  fromCallToolResult,
  isFailureEnvelope,
  toCallToolResult,
} from "./result.js";
export type { McpToolResult } from "./result.js";
export { serveStdio } from "./stdio.js";
export type { StdioHandle, StdioOptions } from "./stdio.js";
export { checkHttpOptions, isLoopback, serveHttp } from "./http.js";
export type { HttpHandle, HttpOptions } from "./http.js";
export { createProxy } from "./proxy/proxy.js";
export type { Proxy, ProxyOptions } from "./proxy/proxy.js";
export { loadProxyConfig, parseProxyConfig } from "./proxy/config.js";
export type { ProxyConfig, ToolPolicy } from "./proxy/config.js";
export { UpstreamError, createUpstream } from "./proxy/upstream.js";
export type { Upstream, UpstreamOptions, UpstreamSpec } from "./proxy/upstream.js";
export type { InvalidTool } from "./proxy/tool-list.js";
export type { AbortSource } from "../attempt.js";
export { canonicalJson, checkPin, hashTool, readLock, writeLock } from "./proxy/pin.js";
export type { LockFile, PinVerdict, PinnedShape } from "./proxy/pin.js";
export { ajvIssues, ajvStandardSchema, createAjvCompilers } from "./proxy/ajv.js";
export type { CodedIssue } from "./proxy/ajv.js";
export type { AjvCompilers, AjvStandardSchema } from "./proxy/ajv.js";
export { tokenBucket } from "./proxy/rate.js";
export type { Bucket, RateLimit } from "./proxy/rate.js";
