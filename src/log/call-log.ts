/**
 * Structured call logs for hosts without OpenTelemetry: one JSON line per call, with the same
 * fields as the `execute_tool` span, through a pluggable sink (stdout by default).
 * @module
 */
import type { BreakerState } from "../policy/breaker.js";
import { ToolgateConfigError } from "../errors.js";
import { _checkObserverOptions, _reporter, createObserver, type GateObserver, type ObserverOptions } from "./_observe.js";
import { ATTR, type AttrValue, type CallSummary } from "./_summary.js";

/** One call, as logged. Keys are the span's attribute names, plus when, what and how long. */
export interface CallLogEvent {
  /** ISO 8601 time the call started. */
  readonly time: string;
  readonly event: "toolgate.call";
  /** The span name: `execute_tool {tool}`. */
  readonly name: string;
  /** Wall time of the call, ms. */
  readonly duration_ms: number;
  /** One entry per attempt: its number, outcome, duration and backoff, and when it ended. */
  readonly attempts: readonly Readonly<Record<string, AttrValue>>[];
  readonly [attribute: string]: unknown;
}

/** A breaker state change, as logged. */
export interface BreakerLogEvent {
  readonly time: string;
  readonly event: "toolgate.breaker";
  readonly "gen_ai.tool.name": string;
  readonly "toolgate.breaker.state": BreakerState;
}

/** Any line the call log writes. */
export type LogEvent = CallLogEvent | BreakerLogEvent;

/** Receives each line (JSON text, no trailing newline) and the event it encodes. */
export type LogSink = (line: string, event: LogEvent) => unknown;

/** Options of {@link createCallLog}. */
export interface CallLogOptions extends ObserverOptions {
  /** Where lines go. Default: {@link jsonLineSink} over `process.stdout`. */
  readonly sink?: LogSink;
}

/**
 * A sink that writes each line plus `\n` to a stream (a file stream, `process.stderr`).
 * @example
 * const log = createCallLog({ sink: jsonLineSink(fs.createWriteStream("calls.jsonl", { flags: "a" })) });
 */
export function jsonLineSink(stream: { write(chunk: string): unknown }): LogSink {
  return (line) => stream.write(line + "\n");
}

/** Build the call log event of a summary. */
export function _logEvent(s: CallSummary): CallLogEvent {
  return {
    time: new Date(s.startTime).toISOString(),
    event: "toolgate.call",
    name: s.name,
    duration_ms: s.durationMs,
    ...s.attributes,
    attempts: s.attempts.map((a) => ({ time: new Date(a.time).toISOString(), ...a.attributes })),
  };
}

/**
 * One JSON line per call: tool, schema version, call id, code (`error.type` iff failed), attempts
 * with outcome and backoff, effect, retryability, replay, duration. Never the payload, unless
 * `capture` opts in, and then redacted (secret schema fields and secret patterns).
 * @example
 * const log = createCallLog();                         // lines to stdout
 * const gate = log.instrument(createGate({ tools, ...log.hooks }));
 * await gate.call("get_order", '{"customerId":"c_1"}');
 * // {"time":"…","event":"toolgate.call","name":"execute_tool get_order","duration_ms":0.4,
 * //  "gen_ai.operation.name":"execute_tool","gen_ai.tool.name":"get_order",…,"toolgate.code":"OK",…}
 */
export function createCallLog(options: CallLogOptions = {}): GateObserver {
  _checkObserverOptions(options, ["sink"], "createCallLog");
  // `null` is no sink (not "the default"): stdout would corrupt an MCP stdio stream without a word.
  if (options.sink !== undefined && typeof options.sink !== "function") throw new ToolgateConfigError("E_TELEMETRY_OPTIONS", "createCallLog: sink must be a function");
  const sink = options.sink ?? jsonLineSink(process.stdout);
  const report = _reporter(options.onError);
  const write = (event: LogEvent): void => {
    const r = sink(JSON.stringify(event), event);
    if (typeof r === "object" && r !== null && typeof (r as { then?: unknown }).then === "function") {
      (r as Promise<unknown>).then(undefined, report);
    }
  };
  return createObserver<undefined>(
    {
      finish: (summary) => write(_logEvent(summary)),
      breaker: (tool, state, time) =>
        write({ time: new Date(time).toISOString(), event: "toolgate.breaker", [ATTR.toolName]: tool, [ATTR.breakerState]: state }),
    },
    options,
  );
}
