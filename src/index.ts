/**
 * toolgate: an executable contract between an AI agent and the code its tools run.
 *
 * @example
 * import { z } from "zod";
 * import { defineTool, createGate } from "toolgate";
 * const gate = createGate({ tools: [defineTool({ ... })] });
 * const result = await gate.call("get_order", modelArgumentsText);
 * @module
 */
export { defineTool, isTool } from "./tool.js";
export type {
  AnyTool,
  ArgsOf,
  CheckVerdict,
  Classification,
  InputOf,
  OutputOf,
  Principal,
  RetryOverrides,
  Tool,
  ToolContext,
  ToolDefinition,
  ToolEffect,
} from "./tool.js";
export type { ApprovalPredicate, ReconcileVerdict } from "./tool.js";
export { createGate } from "./gate.js";
export type { CallOptions, DataOf, Gate } from "./gate.js";
export type { AuthorizeDecision, CallRequest, CallRequestOf, GateOptions, GateRetryOptions } from "./gate-options.js";
export { TOOL_ERROR_CODES, isFailure } from "./result.js";
export type { CallMeta, Effect, EffectRef, Issue, ToolErrorCode, ToolFailure, ToolResult, ToolSuccess } from "./result.js";
export { HookTimeoutError, ToolError, ToolgateConfigError, denied, isToolError, isToolgateConfigError, reject, transient } from "./errors.js";
export type { FailureKind, RejectOptions, TransientOptions } from "./errors.js";
export { DEFAULT_LIMITS } from "./harden.js";
export type { Limits } from "./harden.js";
export { DEFAULT_SECRET_PATTERNS, createRedactor } from "./redact.js";
export type { RedactOptions, Redactor } from "./redact.js";
export type { CallRecord, HookErrorHandler } from "./hooks.js";
export type { AttemptEvent } from "./execute.js";
export type { ToolListing } from "./json-schema.js";
export type { BreakerOptions, BreakerState } from "./policy/breaker.js";
export type { RetryBudgetOptions } from "./policy/budget.js";
export type { JsonSchema, JsonSchemaTarget, Schema } from "./standard.js";
export { composeHooks, createCallLog, jsonLineSink } from "./log/index.js";
export type {
  AttrValue,
  BreakerLogEvent,
  CallLogEvent,
  CallLogOptions,
  CaptureOptions,
  GateObserver,
  HookSet,
  LogEvent,
  LogSink,
  ObserverHooks,
  ObserverOptions,
} from "./log/index.js";
