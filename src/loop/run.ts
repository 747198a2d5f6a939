/**
 * `runAgentLoop`: a small host loop around a session, for hosts without a framework (and for the
 * demo and tests). Each turn the model proposes calls; each is admitted, executed and decided.
 * @module
 */
import type { ToolResult } from "../result.js";
import type { EscalateDecision, LoopEvidence, StopDecision } from "./decision.js";
import type { AdmittedCall, LoopSession, LoopStep, ProposedCall } from "./session.js";

/** What the model sees at the start of a turn. */
export interface AgentTurn {
  /** 1 for the first turn. */
  readonly turn: number;
  /** Every step so far. */
  readonly steps: readonly LoopStep[];
  /** The steps of the previous turn (empty on the first). */
  readonly last: readonly LoopStep[];
}

/** Anything that proposes calls turn after turn: a real model behind an SDK, or a script. */
export interface AgentModel {
  /** The calls of this turn; an empty list means the model answered and the run is done. */
  next(turn: AgentTurn): readonly ProposedCall[] | Promise<readonly ProposedCall[]>;
}

/** Options of {@link runAgentLoop}. */
export interface RunAgentLoopOptions {
  /** The run's state, from `policy.start()`. */
  readonly session: LoopSession;
  readonly model: AgentModel;
  /** Execute one admitted call, e.g. `(c) => gate.call(c.tool, c.args, { callId: c.callId, fromModel: true })`. */
  execute(call: AdmittedCall): Promise<ToolResult> | ToolResult;
  /** Called after every step (admitted or refused). */
  onStep?(step: LoopStep): void;
}

/** How a run ended. */
export interface LoopOutcome {
  /** `done`: the model stopped proposing calls; `stopped`/`escalated`: the policy ended the run. */
  readonly status: "done" | "stopped" | "escalated";
  /** The decision that ended the run, when the policy ended it. */
  readonly decision?: StopDecision | EscalateDecision;
  readonly steps: readonly LoopStep[];
  readonly evidence: readonly LoopEvidence[];
  readonly turns: number;
  readonly calls: number;
}

function outcomeOf(session: LoopSession, status: LoopOutcome["status"]): LoopOutcome {
  const d = session.outcome;
  return {
    status: d === undefined ? status : d.action === "escalate" ? "escalated" : "stopped",
    ...(d !== undefined ? { decision: d } : {}),
    steps: session.steps.slice(),
    evidence: session.evidence.slice(),
    turns: session.turns,
    calls: session.calls,
  };
}

/**
 * Drive a model through the loop policy until it answers, or the policy stops or escalates.
 * Bounded by the policy's turn and call caps. A throwing model rejects the returned promise.
 * @example
 * const outcome = await runAgentLoop({
 *   session: createLoopPolicy().start(),
 *   model: { next: ({ last }) => (last.length === 0 ? [{ tool: "get_order", args: { customerId: "c_1" } }] : []) },
 *   execute: (c) => gate.call(c.tool, c.args, { callId: c.callId, fromModel: true }),
 * });
 * console.log(outcome.status, outcome.evidence);
 */
export async function runAgentLoop(options: RunAgentLoopOptions): Promise<LoopOutcome> {
  const { session, model } = options;
  let last: readonly LoopStep[] = [];
  for (;;) {
    if (session.beginTurn() !== undefined) return outcomeOf(session, "stopped");
    const calls = await model.next({ turn: session.turns, steps: session.steps.slice(), last });
    if (calls.length === 0) return outcomeOf(session, "done");
    const before = session.steps.length;
    for (const call of calls) {
      const step = await session.run(call, (c) => options.execute(c));
      options.onStep?.(step);
      if (session.outcome !== undefined) return outcomeOf(session, "stopped");
    }
    last = session.steps.slice(before);
  }
}
