/**
 * Loop policy options: defaults and checks (misuse throws ToolgateConfigError).
 * @module
 */
import { ToolgateConfigError } from "../errors.js";
import { checkKnownKeys } from "../known-keys.js";
import { _checkRedactOptions, createRedactor, type RedactOptions, type Redactor } from "../redact.js";
import { safeHook, warnOnceOnHookError, type HookErrorHandler } from "../hooks.js";
import type { LoopDecision } from "./decision.js";

/** Options of {@link createLoopPolicy}. Every field is optional. */
export interface LoopPolicyOptions {
  /** Repairs allowed per call after INVALID_INPUT (and per run after UNKNOWN_TOOL). Default 1; 0 stops at the first. */
  readonly repairBudget?: number;
  /** Model turns per run. Default 10. */
  readonly maxTurns?: number;
  /** Tool calls per run, refused ones included. Default 25. */
  readonly maxCalls?: number;
  /** Refuse a repair that leaves every reported field unchanged (as no new evidence). Default `true`. */
  readonly requireFieldChange?: boolean;
  /** Put the arguments (redacted canonical JSON, at most 2,000 characters) into evidence. Default `false`. */
  readonly includeArguments?: boolean;
  /** Secret patterns scrubbed from arguments put into evidence. Default: the gate's default patterns. */
  readonly redact?: RedactOptions;
  /** Clock for evidence times, epoch ms. Default `Date.now`. */
  now?(): number;
  /** Called with every decision as it is made (never throws into the loop). */
  onDecision?(decision: LoopDecision): unknown;
  /** Where a throwing `onDecision` is reported. Default: one process warning. */
  onHookError?: HookErrorHandler;
}

/** The options with every default applied. */
export interface ResolvedLoopOptions {
  readonly repairBudget: number;
  readonly maxTurns: number;
  readonly maxCalls: number;
  readonly requireFieldChange: boolean;
  readonly includeArguments: boolean;
  readonly redact: Redactor;
  readonly now: () => number;
  readonly onDecision: ((d: LoopDecision) => void) | undefined;
}

/**
 * The documented defaults: repair budget 1, 10 turns, 25 calls, repairs must change a reported
 * field, no arguments in evidence.
 * @example createLoopPolicy({ maxTurns: DEFAULT_LOOP_OPTIONS.maxTurns * 2 })
 */
export const DEFAULT_LOOP_OPTIONS = Object.freeze({
  repairBudget: 1,
  maxTurns: 10,
  maxCalls: 25,
  requireFieldChange: true,
  includeArguments: false,
});

function bad(message: string): never {
  throw new ToolgateConfigError("E_LOOP_OPTIONS", `createLoopPolicy: ${message}`);
}

function int(v: unknown, min: number, max: number, name: string): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) bad(`${name} must be an integer from ${min} to ${max}`);
  return v;
}

/** Check options and apply defaults. */
export function resolveLoopOptions(o: LoopPolicyOptions = {}): ResolvedLoopOptions {
  if (typeof o !== "object" || o === null) bad("expected an options object");
  checkKnownKeys(o, ["repairBudget", "maxTurns", "maxCalls", "requireFieldChange", "includeArguments", "redact", "now", "onDecision", "onHookError"], "", bad);
  if (o.redact !== undefined) _checkRedactOptions(o.redact, bad);
  for (const b of ["requireFieldChange", "includeArguments"] as const) {
    if (o[b] !== undefined && typeof o[b] !== "boolean") bad(`${b} must be a boolean`);
  }
  for (const f of ["now", "onDecision", "onHookError"] as const) {
    if (o[f] !== undefined && typeof o[f] !== "function") bad(`${f} must be a function`);
  }
  const now = o.now?.bind(o) ?? Date.now;
  return Object.freeze({
    repairBudget: int(o.repairBudget ?? DEFAULT_LOOP_OPTIONS.repairBudget, 0, 100, "repairBudget"),
    maxTurns: int(o.maxTurns ?? DEFAULT_LOOP_OPTIONS.maxTurns, 1, 10_000, "maxTurns"),
    maxCalls: int(o.maxCalls ?? DEFAULT_LOOP_OPTIONS.maxCalls, 1, 100_000, "maxCalls"),
    requireFieldChange: o.requireFieldChange ?? DEFAULT_LOOP_OPTIONS.requireFieldChange,
    includeArguments: o.includeArguments ?? DEFAULT_LOOP_OPTIONS.includeArguments,
    redact: createRedactor(o.redact),
    now,
    onDecision: safeHook("onDecision", o.onDecision?.bind(o), o.onHookError ?? warnOnceOnHookError),
  });
}
