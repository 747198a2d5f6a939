/**
 * `createLoopPolicy`: an immutable policy value; `start()` gives one run its own state.
 * @module
 */
import { resolveLoopOptions, type LoopPolicyOptions, type ResolvedLoopOptions } from "./options.js";
import { _createSession, type LoopSession } from "./session.js";

/**
 * A loop policy: the rules, without state. Start one session per agent run.
 * @example const strictPolicy = createLoopPolicy().with({ repairBudget: 0 });
 */
export interface LoopPolicy {
  /** The options with every default applied. */
  readonly options: ResolvedLoopOptions;
  /** A new run with fresh state (turns, calls, failed payloads, repair budgets). */
  start(): LoopSession;
  /** A new policy with some options changed; this one is unchanged. */
  with(overrides: LoopPolicyOptions): LoopPolicy;
}

/**
 * Create a loop policy. Checks the options and throws `ToolgateConfigError` on misuse.
 *
 * Per result: INVALID_INPUT → `repair` (budget per call, default 1), then `stop`; an identical
 * failing call resent → refused, `stop` ("no new evidence"); INVALID_OUTPUT → `stop` with
 * evidence; DENIED and FAILED with an unknown effect → `escalate`; RETRYABLE → `stop`
 * ("retry later": the executor already retried); REJECTED → `continue` (a new decision);
 * caps on turns (default 10) and calls (default 25).
 * @example
 * const policy = createLoopPolicy({ repairBudget: 1 });
 * const session = policy.start();
 * const step = await session.run({ tool: "get_order", args: text, callId }, (c) => gate.call(c.tool, c.args, { callId: c.callId, fromModel: true }));
 * if (step.decision.action === "repair") feedBack(step.decision.issues);
 */
export function createLoopPolicy(options: LoopPolicyOptions = {}): LoopPolicy {
  const resolved = resolveLoopOptions(options);
  return Object.freeze({
    options: resolved,
    start: () => _createSession(resolved),
    with: (overrides: LoopPolicyOptions) => createLoopPolicy({ ...options, ...overrides }),
  });
}
