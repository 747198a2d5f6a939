/**
 * Step 4 of a call: `authorize`, then the approval a tool may require — both before any effect,
 * each bounded by its own time (a policy service that hangs, a person who never answers), and
 * both told through `request.signal` when the gate stops waiting for them.
 * @module
 */
import { _fail, type Failure } from "./result.js";
import type { AnyTool, Principal, ToolEffect } from "./tool.js";
import type { CallRequest, ResolvedGate } from "./gate-options.js";
import { HookTimeoutError } from "./errors.js";
import { isPromiseLike } from "./standard.js";
import { cancelledBefore } from "./execute.js";
import { TIMED_OUT, untilSettled, unwatch, watch, type SignalWatcher } from "./policy/caller-signal.js";
import { truncate } from "./redact.js";

const MSG = {
  denied: "The caller is not authorized for this call",
  authorizeFailed: "Authorization could not be decided; the call was refused",
  notApproved: "not approved",
} as const;

/** Not stopped yet (any other value is the reason the gate stopped waiting). */
const WAITING: unique symbol = Symbol("toolgate.decision.waiting");

/**
 * What `authorize` and `approve` are asked with. Its `signal` is made only when a hook reads it (an
 * AbortController costs more than a whole call): it aborts when the caller's does, with its reason,
 * or when the gate stops waiting for the decision, with a {@link HookTimeoutError}.
 */
export class DecisionRequest implements CallRequest, SignalWatcher {
  #controller: AbortController | undefined = undefined;
  #stopped: unknown = WAITING;
  #watching = false;
  readonly #caller: AbortSignal | undefined;
  constructor(
    readonly tool: string,
    readonly version: string,
    readonly effect: ToolEffect,
    readonly callId: string,
    readonly principal: Principal | undefined,
    readonly input: unknown,
    readonly meta: Readonly<Record<string, unknown>>,
    caller: AbortSignal | undefined,
  ) {
    this.#caller = caller;
  }
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      const c = new AbortController();
      this.#controller = c;
      const caller = this.#caller;
      if (this.#stopped !== WAITING) c.abort(this.#stopped);
      else if (caller?.aborted === true) c.abort(caller.reason);
      else if (caller !== undefined) {
        watch(caller, this);
        this.#watching = true;
      }
    }
    return this.#controller.signal;
  }
  /** The caller aborted (a {@link SignalWatcher}): the shared listener has let go of this watcher. */
  cancel(): void {
    this.#watching = false;
    this.stop(this.#caller?.reason);
  }
  /** The gate stopped waiting for a decision: abort the signal, if a hook read it. */
  stop(reason: unknown): void {
    if (this.#stopped !== WAITING) return;
    this.#stopped = reason;
    this.done();
    this.#controller?.abort(reason);
  }
  /** The caller's signal has aborted (read without making {@link signal}). */
  callerAborted(): boolean {
    return this.#caller?.aborted === true;
  }
  /** The decision is made: let go of the caller's signal. */
  done(): void {
    if (!this.#watching) return;
    this.#watching = false;
    unwatch(this.#caller!, this);
  }
}

/**
 * Ask `authorize`, then `approve` when the tool requires approval. Undefined: go ahead; a failure:
 * refuse with it. Never rejects: a hook's throw, rejection or silence is a refusal, reported to
 * `onHookError` (fail closed).
 */
export async function authorizeAndApprove(g: ResolvedGate, tool: AnyTool, request: DecisionRequest): Promise<Failure | undefined> {
  try {
    return await decide(g, tool, request);
  } finally {
    request.done();
  }
}

async function decide(g: ResolvedGate, tool: AnyTool, request: DecisionRequest): Promise<Failure | undefined> {
  if (g.authorize !== undefined) {
    let decision: unknown;
    try {
      decision = await within(g.authorize(request), "authorize", g.authorizeTimeoutMs, request);
    } catch (e) {
      g.onHookError("authorize", e);
      return _fail("DENIED", MSG.authorizeFailed, false, "none");
    }
    if (decision !== true) {
      if (typeof decision === "object" && decision !== null && (decision as { allow?: unknown }).allow === true) {
        // allowed
      } else {
        const reason = typeof decision === "object" && decision !== null ? (decision as { reason?: unknown }).reason : undefined;
        const msg = typeof reason === "string" && reason.length > 0 ? truncate(g.redact(reason), 200) : MSG.denied;
        return _fail("DENIED", msg, false, "none");
      }
    }
  }
  // Cancelled while authorize decided: the call is answered already (cancelled); open no prompt.
  if (request.callerAborted()) return cancelledBefore();
  if (tool.approval !== undefined && tool.approval !== false) {
    let needed = true;
    if (typeof tool.approval === "function") {
      try {
        needed = tool.approval(request.input) !== false;
      } catch (e) {
        g.onHookError("approval", e); // fail closed: ask
      }
    }
    if (needed) {
      if (g.approve === undefined) return _fail("DENIED", MSG.notApproved, false, "none");
      let ok: unknown;
      try {
        ok = await within(g.approve(request), "approve", g.approvalTimeoutMs, request);
      } catch (e) {
        g.onHookError("approve", e);
        ok = false;
      }
      if (ok !== true) return _fail("DENIED", MSG.notApproved, false, "none");
    }
  }
  return undefined;
}

/** A hook's answer, waited for at most `ms`; past that the request stops and this throws a {@link HookTimeoutError}. */
async function within(answer: unknown, hook: "authorize" | "approve", ms: number, request: DecisionRequest): Promise<unknown> {
  if (!isPromiseLike(answer)) return answer;
  const r: unknown = await untilSettled(Promise.resolve(answer), undefined, ms);
  if (r !== TIMED_OUT) return r;
  const error = new HookTimeoutError(hook, ms);
  request.stop(error);
  throw error;
}
