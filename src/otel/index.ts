/**
 * `toolgate/otel`: OpenTelemetry spans and metrics for a gate, on `@opentelemetry/api` only.
 * @example
 * import { createGateTelemetry } from "toolgate/otel";
 * const otel = createGateTelemetry({ capture: { arguments: true } });
 * const gate = otel.instrument(createGate({ tools, ...otel.hooks }));
 * @module
 */
export { createGateTelemetry, INSTRUMENTATION_SCOPE } from "./telemetry.js";
export type { TelemetryOptions } from "./telemetry.js";
export { BREAKER_STATE_VALUE, METRICS, UNKNOWN_TOOL_METRIC_NAME } from "./metrics.js";
export { ATTR, ATTEMPT_EVENT, OPERATION } from "../log/_summary.js";
export { SECRET_PLACEHOLDER, isSecretSchema } from "../log/_capture.js";
export type { CaptureOptions } from "../log/_capture.js";
export type { GateObserver, ObserverHooks, ObserverOptions } from "../log/_observe.js";
export { composeHooks } from "../log/compose.js";
