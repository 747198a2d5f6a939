/**
 * `toolgate/loop`: what the agent loop does with each result. Decisions are data (`continue`,
 * `repair`, `stop`, `escalate`, with a reason), so any host loop or framework can act on them.
 *
 * @example
 * import { createLoopPolicy, runAgentLoop } from "toolgate/loop";
 * const session = createLoopPolicy({ repairBudget: 1, maxTurns: 8 }).start();
 * const outcome = await runAgentLoop({ session, model, execute: (c) => gate.call(c.tool, c.args, { callId: c.callId, fromModel: true }) });
 * @module
 */
export { createLoopPolicy } from "./policy.js";
export type { LoopPolicy } from "./policy.js";
export { DEFAULT_LOOP_OPTIONS } from "./options.js";
export type { LoopPolicyOptions, ResolvedLoopOptions } from "./options.js";
export { LOOP_MESSAGES, isTerminal } from "./decision.js";
export type {
  ContinueDecision,
  DecisionBase,
  ContinueReason,
  EscalateDecision,
  EscalateReason,
  LoopAction,
  LoopDecision,
  LoopEvidence,
  LoopReason,
  RepairDecision,
  RepairReason,
  StopDecision,
  StopReason,
} from "./decision.js";
export type { Admission, AdmittedCall, LoopSession, LoopStep, ProposedCall } from "./session.js";
export { runAgentLoop } from "./run.js";
export type { AgentModel, AgentTurn, LoopOutcome, RunAgentLoopOptions } from "./run.js";
export { callKey, canonicalJson } from "./canonical.js";
