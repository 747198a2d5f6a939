/**
 * What the loop decides after each result, as data any host loop can act on.
 * @module
 */
import type { Effect, Issue, ToolErrorCode } from "../result.js";

/** The four things a loop can do next. */
export type LoopAction = "continue" | "repair" | "stop" | "escalate";

/** Why the loop continues: the call succeeded, or a business rule / key conflict asks for a new decision. */
export type ContinueReason = "ok" | "rejected" | "conflict";
/** Why the loop asks the model to repair: invalid arguments, or a tool that does not exist. */
export type RepairReason = "invalid_input" | "unknown_tool";
/** Why the loop stops. */
export type StopReason =
  /** A repair budget ran out: the model failed to fix the reported fields. */
  | "repair_budget_exhausted"
  /** The model resent a call that already failed (same tool, same canonical arguments), or a repair left every reported field unchanged. */
  | "no_new_evidence"
  /** The service answered with a shape that breaks the output contract: an operator must look. */
  | "invalid_output"
  /** The executor already retried locally; try later, not now (RETRYABLE, or CONFLICT still running). */
  | "retry_later"
  /** The call failed with no effect and nothing the model can change. */
  | "failed"
  /** The turn cap was reached. */
  | "turn_limit"
  /** The call cap was reached. */
  | "call_limit"
  /** The session had already stopped or escalated; no further call is executed. */
  | "stopped"
  /** The executor threw, or its result was not a toolgate envelope. */
  | "not_an_envelope";
/** Why the loop hands over to a person: the caller is not allowed, or a write's effect is unknown. */
export type EscalateReason = "denied" | "unknown_effect";

/** Every reason, whatever the action. */
export type LoopReason = ContinueReason | RepairReason | StopReason | EscalateReason;

/**
 * What a reviewer needs about a call that stopped or escalated the loop. Never the payload,
 * unless the policy opted in with `includeArguments` (then redacted canonical JSON).
 */
export interface LoopEvidence {
  readonly tool: string;
  /** The tool's schema version; `""` when no tool was resolved. */
  readonly version: string;
  /** The envelope code that led here (for a refused repeat: the code of the earlier failure). */
  readonly code: ToolErrorCode;
  /** Paths of the reported issues (never values). */
  readonly issuePaths: readonly string[];
  /** The loop's id for the call (the provider's tool-call id). */
  readonly callId: string;
  /** The id the gate recorded for the call, when it differs (e.g. the JSON-RPC id over MCP). */
  readonly gateCallId?: string;
  /** ISO 8601 time the decision was made. */
  readonly at: string;
  readonly effect: Effect;
  /** Executions of the tool for this call (0 when refused or never run). */
  readonly attempts: number;
  readonly action: Extract<LoopAction, "stop" | "escalate">;
  readonly reason: StopReason | EscalateReason;
  /** For a refused repeat: the call id of the earlier, identical failing call. */
  readonly repeatOf?: string;
  /** The arguments as redacted canonical JSON, only when the policy opted in. */
  readonly arguments?: string;
}

/** What every loop decision carries. */
export interface DecisionBase {
  /** A short, fixed sentence for logs and transcripts. */
  readonly message: string;
  /** The tool of the call this decision is about (absent for a turn-cap stop). */
  readonly tool?: string;
  /** The call id this decision is about (absent for a turn-cap stop). */
  readonly callId?: string;
  /** The envelope code of the result, when the decision follows one. */
  readonly code?: ToolErrorCode;
}

/** Go on: feed the result to the model and let it take its next turn. */
export interface ContinueDecision extends DecisionBase {
  readonly action: "continue";
  readonly reason: ContinueReason;
}

/** Feed the issues back; the model should fix only the reported fields. */
export interface RepairDecision extends DecisionBase {
  readonly action: "repair";
  readonly reason: RepairReason;
  readonly issues: readonly Issue[];
  /** Repairs left for this call after this one. */
  readonly repairsLeft: number;
}

/** End the run. */
export interface StopDecision extends DecisionBase {
  readonly action: "stop";
  readonly reason: StopReason;
  /** For `retry_later`: when, if the executor knows. */
  readonly retryAfterMs?: number;
  readonly evidence?: LoopEvidence;
}

/** End the run and hand the evidence to a person. */
export interface EscalateDecision extends DecisionBase {
  readonly action: "escalate";
  readonly reason: EscalateReason;
  readonly evidence: LoopEvidence;
}

/**
 * One decision. Discriminate on `action`.
 * @example
 * const d = session.observe(call, result);
 * if (d.action === "repair") sendToModel(d.issues);
 * else if (d.action === "stop" || d.action === "escalate") report(d);
 */
export type LoopDecision = ContinueDecision | RepairDecision | StopDecision | EscalateDecision;

/**
 * True when the decision ends the run (`stop` or `escalate`).
 * @example if (isTerminal(step.decision)) return report(step.decision);
 */
export function isTerminal(d: LoopDecision): d is StopDecision | EscalateDecision {
  return d.action === "stop" || d.action === "escalate";
}

/**
 * The fixed sentence for each reason (what `decision.message` says).
 * @example LOOP_MESSAGES.no_new_evidence // "Refused: this call already failed and nothing changed (no new evidence)"
 */
export const LOOP_MESSAGES: Readonly<Record<LoopReason, string>> = Object.freeze({
  ok: "The call succeeded",
  rejected: "A business rule refused the call; make a new decision",
  conflict: "The idempotency key was used with other arguments; make a new decision",
  invalid_input: "Fix only the reported fields and call again",
  unknown_tool: "Pick one of the listed tools",
  repair_budget_exhausted: "The arguments are still invalid after the allowed repairs",
  no_new_evidence: "Refused: this call already failed and nothing changed (no new evidence)",
  invalid_output: "The service broke its output contract; stopped for an operator",
  retry_later: "The executor already retried; try again later, not now",
  failed: "The call failed; stopped",
  turn_limit: "The turn limit was reached",
  call_limit: "The call limit was reached",
  stopped: "The run already ended; the call was not executed",
  not_an_envelope: "The executor threw or returned something that is not a toolgate result",
  denied: "The caller is not allowed to make this call; escalated",
  unknown_effect: "A write failed and its effect is unknown; escalated for a state check",
});
