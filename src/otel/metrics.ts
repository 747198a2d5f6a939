/**
 * The gate's metrics: calls by tool and code, a duration histogram, retries and breaker state.
 * Tool names of calls to unknown tools are folded into one value, so a caller cannot blow up
 * metric cardinality by inventing names.
 * @module
 */
import type { Attributes, Meter } from "@opentelemetry/api";
import type { BreakerState } from "../policy/breaker.js";
import { ATTR, type CallSummary } from "../log/_summary.js";

/**
 * Metric names, for dashboards and tests.
 * @example metrics.find((m) => m.descriptor.name === METRICS.calls)
 */
export const METRICS = Object.freeze({
  calls: "toolgate.calls",
  duration: "toolgate.call.duration",
  retries: "toolgate.retries",
  breakerState: "toolgate.breaker.state",
  breakerTransitions: "toolgate.breaker.transitions",
} as const);

/**
 * `toolgate.breaker.state` values.
 * @example alert when toolgate.breaker.state == BREAKER_STATE_VALUE.open (2)
 */
export const BREAKER_STATE_VALUE: Readonly<Record<BreakerState, number>> = Object.freeze({ closed: 0, "half-open": 1, open: 2 });

/**
 * What `gen_ai.tool.name` says in metrics for a tool the gate does not have.
 * @example toolgate_calls{gen_ai_tool_name="_unknown"} counts calls to invented tool names
 */
export const UNKNOWN_TOOL_METRIC_NAME = "_unknown";

const DURATION_BUCKETS_S = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The instruments of one telemetry instance. */
export interface GateMetrics {
  call(s: CallSummary): void;
  breaker(tool: string, state: BreakerState): void;
  known(tools: readonly string[]): void;
}

/** Create the instruments on a meter. */
export function createGateMetrics(meter: Meter): GateMetrics {
  const calls = meter.createCounter(METRICS.calls, { description: "Tool calls by tool and outcome code", unit: "{call}" });
  const duration = meter.createHistogram(METRICS.duration, {
    description: "Wall time of a tool call, validation to envelope",
    unit: "s",
    advice: { explicitBucketBoundaries: DURATION_BUCKETS_S },
  });
  const retries = meter.createCounter(METRICS.retries, { description: "Retries scheduled after a failed attempt", unit: "{retry}" });
  const transitions = meter.createCounter(METRICS.breakerTransitions, { description: "Circuit breaker state changes", unit: "{change}" });
  const gauge = meter.createObservableGauge(METRICS.breakerState, {
    description: "Circuit breaker state per tool: 0 closed, 1 half-open, 2 open",
    unit: "1",
  });
  const states = new Map<string, BreakerState>();
  gauge.addCallback((obs) => {
    for (const [tool, state] of states) obs.observe(BREAKER_STATE_VALUE[state], { [ATTR.toolName]: tool });
  });
  return {
    call(s) {
      const attrs: Attributes = { [ATTR.toolName]: s.knownTool ? s.tool : UNKNOWN_TOOL_METRIC_NAME, [ATTR.code]: s.code };
      if (s.failed) attrs[ATTR.errorType] = s.code;
      calls.add(1, attrs);
      duration.record(s.durationMs / 1000, attrs);
      let n = 0;
      for (const a of s.attempts) if (a.attributes[ATTR.attemptBackoffMs] !== undefined) n++;
      if (n > 0) retries.add(n, { [ATTR.toolName]: attrs[ATTR.toolName] });
    },
    breaker(tool, state) {
      states.set(tool, state);
      transitions.add(1, { [ATTR.toolName]: tool, [ATTR.breakerState]: state });
    },
    known(tools) {
      for (const t of tools) if (!states.has(t)) states.set(t, "closed");
    },
  };
}
