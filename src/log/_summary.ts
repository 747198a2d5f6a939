/**
 * The one description of a finished call that both the OpenTelemetry span and the JSON log line
 * are built from, so the two always carry the same fields. Built only from the call record, the
 * attempt events and (when opted in) redacted captures: never from the payload itself.
 * @module
 */
import type { CallRecord } from "../hooks.js";
import type { AttemptEvent } from "../execute.js";
import { _redactThenCut, type Redactor } from "../redact.js";

/**
 * Attribute names shared by spans and log lines (OpenTelemetry GenAI conventions plus `toolgate.*`).
 * @example span.attributes[ATTR.errorType] // "INVALID_INPUT" on a failed call, absent on success
 */
export const ATTR = Object.freeze({
  operation: "gen_ai.operation.name",
  toolName: "gen_ai.tool.name",
  callId: "gen_ai.tool.call.id",
  toolType: "gen_ai.tool.type",
  arguments: "gen_ai.tool.call.arguments",
  result: "gen_ai.tool.call.result",
  errorType: "error.type",
  version: "toolgate.schema.version",
  code: "toolgate.code",
  attempts: "toolgate.attempts",
  effect: "toolgate.effect",
  retryable: "toolgate.retryable",
  replayed: "toolgate.replayed",
  retryAfterMs: "toolgate.retry_after_ms",
  issuePaths: "toolgate.issue.paths",
  attemptNumber: "toolgate.attempt.number",
  attemptOutcome: "toolgate.attempt.outcome",
  attemptDurationMs: "toolgate.attempt.duration_ms",
  attemptBackoffMs: "toolgate.attempt.backoff_ms",
  breakerState: "toolgate.breaker.state",
} as const);

/**
 * The `gen_ai.operation.name` of a tool call.
 * @example spans.filter((s) => s.attributes[ATTR.operation] === OPERATION)
 */
export const OPERATION = "execute_tool";

/**
 * The name of the per-attempt event.
 * @example span.events.filter((e) => e.name === ATTEMPT_EVENT).length === span.attributes[ATTR.attempts]
 */
export const ATTEMPT_EVENT = "toolgate.attempt";

/** Stand-in for a tool name that is not a valid tool name (it may be anything the caller sent). */
export const INVALID_TOOL_NAME = "_invalid";
/** What stands for a name the gate has no tool for (the model's invention: possibly personal data, and unbounded). */
export const UNKNOWN_TOOL_NAME = "_unknown";

/** A value an attribute may hold (the OpenTelemetry subset we use). */
export type AttrValue = string | number | boolean | readonly string[];

/** Attributes of a span or fields of a log line. */
export type Attrs = Record<string, AttrValue>;

/** One attempt, as recorded: the event plus when it was seen (epoch ms). */
export interface AttemptSummary {
  readonly time: number;
  readonly attributes: Attrs;
}

/** Everything a span or a log line says about one call. */
export interface CallSummary {
  /** `execute_tool {tool}`. */
  readonly name: string;
  /** Epoch ms when the call started. */
  readonly startTime: number;
  readonly durationMs: number;
  readonly failed: boolean;
  /** `"OK"` or the envelope code. */
  readonly code: string;
  /** The tool name as recorded (sanitized), for metrics and naming. */
  readonly tool: string;
  /** True when the tool exists in the gate (its name is safe as a metric attribute). */
  readonly knownTool: boolean;
  readonly attributes: Attrs;
  readonly attempts: readonly AttemptSummary[];
}

/** Extras only the gate wrapper knows (from the envelope). */
export interface SummaryExtras {
  readonly retryAfterMs?: number | undefined;
  readonly arguments?: string | undefined;
  readonly result?: string | undefined;
}

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_PATHS = 20;

/**
 * The tool name as it may appear in telemetry: a name as called can be anything (10 MB, a
 * secret), so only names shaped like tool names pass, and those are redacted too.
 */
export function safeToolName(name: unknown, redact: Redactor): string {
  if (typeof name !== "string" || !TOOL_NAME.test(name)) return INVALID_TOOL_NAME;
  // A name that needs scrubbing is no tool's name: the placeholder, never a redacted echo.
  return redact(name) === name ? name : INVALID_TOOL_NAME;
}

/**
 * The name a record or span shows: a tool's own, `_invalid` for what cannot be a tool name, and
 * `_unknown` for a well-formed name the gate has no tool for (the model's invention).
 */
export function shownToolName(name: unknown, known: boolean, redact: Redactor): string {
  const safe = safeToolName(name, redact);
  return known || safe === INVALID_TOOL_NAME ? safe : UNKNOWN_TOOL_NAME;
}

/** Scrub and bound a free-text field of the record. */
export function safeText(text: unknown, redact: Redactor, max = 256): string {
  return typeof text === "string" ? _redactThenCut(redact, text, max) : "";
}

/** The attributes of one attempt event. */
export function attemptSummary(ev: AttemptEvent, time: number): AttemptSummary {
  const attributes: Attrs = {
    [ATTR.attemptNumber]: ev.attempt,
    [ATTR.attemptOutcome]: ev.outcome,
    [ATTR.attemptDurationMs]: round(ev.durationMs),
  };
  if (ev.backoffMs !== undefined) attributes[ATTR.attemptBackoffMs] = round(ev.backoffMs);
  return { time, attributes };
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

/** How a summary scrubs text: `redact` for anything, `stable` (memoized) for the few tool names and versions. */
export interface SummaryContext {
  readonly redact: Redactor;
  readonly stable: Redactor;
  readonly toolType: string;
}

/** Memoize a redactor for a small set of recurring strings (tool names, versions); bounded. */
export function memoRedactor(redact: Redactor, max = 512): Redactor {
  const cache = new Map<string, string>();
  return (text) => {
    let out = cache.get(text);
    if (out === undefined) {
      out = redact(text);
      if (cache.size < max) cache.set(text, out);
    }
    return out;
  };
}

/** Build the summary of one call from its record. */
export function summarize(record: CallRecord, attempts: readonly AttemptSummary[], ctx: SummaryContext, extras: SummaryExtras = {}): CallSummary {
  const { redact, stable, toolType } = ctx;
  const tool = shownToolName(record.tool, record.code !== "UNKNOWN_TOOL", stable);
  const failed = record.ok !== true;
  const code = failed ? String(record.code) : "OK";
  const knownTool = tool !== INVALID_TOOL_NAME && record.code !== "UNKNOWN_TOOL" && record.version !== "";
  const attributes: Attrs = {
    [ATTR.operation]: OPERATION,
    [ATTR.toolName]: tool,
    [ATTR.callId]: safeText(record.callId, redact),
    [ATTR.toolType]: toolType,
    [ATTR.version]: safeText(record.version, stable, 64),
    [ATTR.code]: code,
    [ATTR.attempts]: record.attempts,
    [ATTR.effect]: record.effect,
    [ATTR.retryable]: record.retryable,
    [ATTR.replayed]: record.replayed === true,
  };
  if (failed) attributes[ATTR.errorType] = code;
  if (extras.retryAfterMs !== undefined) attributes[ATTR.retryAfterMs] = extras.retryAfterMs;
  if (record.issuePaths !== undefined && record.issuePaths.length > 0) {
    attributes[ATTR.issuePaths] = record.issuePaths.slice(0, MAX_PATHS).map((p) => safeText(p, redact, 200));
  }
  if (extras.arguments !== undefined) attributes[ATTR.arguments] = extras.arguments;
  if (extras.result !== undefined) attributes[ATTR.result] = extras.result;
  return {
    name: `${OPERATION} ${tool}`,
    startTime: record.startedAt,
    durationMs: record.durationMs,
    failed,
    code,
    tool,
    knownTool,
    attributes,
    attempts,
  };
}
