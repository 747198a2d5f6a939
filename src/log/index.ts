/**
 * Structured call logs (one JSON line per call) and hook composition. Exported from the root
 * entry `toolgate`.
 * @module
 */
export { createCallLog, jsonLineSink } from "./call-log.js";
export type { BreakerLogEvent, CallLogEvent, CallLogOptions, LogEvent, LogSink } from "./call-log.js";
export { composeHooks } from "./compose.js";
export type { HookSet } from "./compose.js";
export type { GateObserver, ObserverHooks, ObserverOptions } from "./_observe.js";
export type { CaptureOptions } from "./_capture.js";
export type { AttrValue } from "./_summary.js";
