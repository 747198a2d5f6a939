/**
 * OpenTelemetry for a gate, on `@opentelemetry/api` only (the host brings the SDK): one
 * `execute_tool {tool}` span per call with the GenAI attributes, one event per attempt, and the
 * gate's metrics.
 * @module
 */
import { context, metrics, SpanKind, SpanStatusCode, trace, type Attributes, type MeterProvider, type Span, type TracerProvider } from "@opentelemetry/api";
import { _checkObserverOptions, createObserver, type GateObserver, type ObserverOptions } from "../log/_observe.js";
import { ATTR, ATTEMPT_EVENT, OPERATION, type Attrs } from "../log/_summary.js";
import { createGateMetrics } from "./metrics.js";
import { ToolgateConfigError } from "../errors.js";

/**
 * The instrumentation scope name of toolgate's tracer and meter.
 * @example exporter.getFinishedSpans().filter((s) => s.instrumentationScope.name === INSTRUMENTATION_SCOPE)
 */
export const INSTRUMENTATION_SCOPE = "toolgate";
const SCOPE_VERSION = "0.1.0";

/** Options of {@link createGateTelemetry}. */
export interface TelemetryOptions extends ObserverOptions {
  /** Where spans go. Default: the global provider (`trace.getTracerProvider()`). */
  readonly tracerProvider?: TracerProvider;
  /** Where metrics go. Default: the global provider (`metrics.getMeterProvider()`). */
  readonly meterProvider?: MeterProvider;
  /** Record metrics. Default `true`. */
  readonly metrics?: boolean;
}

function toOtel(a: Attrs): Attributes {
  const out: Attributes = {};
  for (const [k, v] of Object.entries(a)) out[k] = Array.isArray(v) ? [...(v as readonly string[])] : (v as string | number | boolean);
  return out;
}

/**
 * Spans and metrics for a gate. Spread `hooks` into `createGate`; wrap the gate with `instrument`
 * so the span is the active context while the tool runs (its own spans become children) and so
 * opt-in capture can see arguments and results. Without `instrument`, each span is recorded when
 * the call finishes, with its true start time.
 *
 * Span `execute_tool {tool}`, kind INTERNAL: `gen_ai.operation.name`, `gen_ai.tool.name`,
 * `gen_ai.tool.call.id`, `gen_ai.tool.type`, `error.type` (the envelope code, iff the call failed,
 * with status ERROR), `toolgate.schema.version`, `toolgate.code`, `toolgate.attempts`,
 * `toolgate.effect`, `toolgate.retryable`, `toolgate.replayed`, and one `toolgate.attempt` event per
 * execution with its outcome and backoff. Arguments and results only with `capture`, redacted.
 * @example
 * import { createGateTelemetry } from "toolgate/otel";
 * const otel = createGateTelemetry();                 // global providers, set up by your SDK
 * const gate = otel.instrument(createGate({ tools, ...otel.hooks }));
 */
export function createGateTelemetry(options: TelemetryOptions = {}): GateObserver {
  _checkObserverOptions(options, ["tracerProvider", "meterProvider", "metrics"], "createGateTelemetry");
  if (options.metrics !== undefined && typeof options.metrics !== "boolean") {
    throw new ToolgateConfigError("E_TELEMETRY_OPTIONS", "createGateTelemetry: metrics must be a boolean");
  }
  if (options.tracerProvider !== undefined && typeof (options.tracerProvider as { getTracer?: unknown } | null)?.getTracer !== "function") {
    throw new ToolgateConfigError("E_TELEMETRY_OPTIONS", "createGateTelemetry: tracerProvider must be an OpenTelemetry TracerProvider");
  }
  if (options.meterProvider !== undefined && typeof (options.meterProvider as { getMeter?: unknown } | null)?.getMeter !== "function") {
    throw new ToolgateConfigError("E_TELEMETRY_OPTIONS", "createGateTelemetry: meterProvider must be an OpenTelemetry MeterProvider");
  }
  let tracer: ReturnType<TracerProvider["getTracer"]>;
  let m: ReturnType<typeof createGateMetrics> | undefined;
  try {
    tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(INSTRUMENTATION_SCOPE, SCOPE_VERSION);
    m = options.metrics === false ? undefined : createGateMetrics((options.meterProvider ?? metrics.getMeterProvider()).getMeter(INSTRUMENTATION_SCOPE, SCOPE_VERSION));
  } catch (e) {
    throw Object.assign(new ToolgateConfigError("E_TELEMETRY_OPTIONS", `createGateTelemetry: the provider failed to give a tracer or meter: ${e instanceof Error ? e.message : String(e)}`), { cause: e });
  }
  const startedAs = new WeakMap<Span, string>();
  return createObserver<Span>(
    {
      start(tool, startTime) {
        const attributes = { [ATTR.operation]: OPERATION, [ATTR.toolName]: tool };
        const name = `${OPERATION} ${tool}`;
        const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL, startTime, attributes });
        startedAs.set(span, name);
        const ctx = trace.setSpan(context.active(), span);
        return { handle: span, run: (fn) => context.with(ctx, fn) };
      },
      finish(s, started) {
        // Metrics and span each on their own: a tracer that throws must not lose the metrics, nor the reverse.
        let failure: { error: unknown } | undefined;
        try {
          m?.call(s);
        } catch (e) {
          failure = { error: e };
        }
        const span =
          started ?? tracer.startSpan(s.name, { kind: SpanKind.INTERNAL, startTime: s.startTime, attributes: { [ATTR.operation]: OPERATION } });
        // Started under another name (the tool unknown then, a tool list that changed since).
        if (started !== undefined && startedAs.get(started) !== s.name) span.updateName(s.name);
        span.setAttributes(toOtel(s.attributes));
        for (const a of s.attempts) span.addEvent(ATTEMPT_EVENT, toOtel(a.attributes), a.time);
        if (s.failed) span.setStatus({ code: SpanStatusCode.ERROR, message: s.code });
        span.end(started === undefined ? s.startTime + s.durationMs : undefined);
        if (failure !== undefined) throw failure.error;
      },
      breaker(tool, state) {
        m?.breaker(tool, state);
      },
      attach(listings) {
        m?.known(listings.map((l) => l.name));
      },
    },
    options,
  );
}
