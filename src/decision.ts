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
import { CANCELLED, TIMED_OUT, untilSettled, unwatch, watch, type SignalWatcher } from "./policy/caller-signal.js";
import { _redactThenCut } from "./redact.js";

const MSG = {
  denied: "The caller is not authorized for this call",
  authorizeFailed: "Authorization could not be decided; the call was refused",
  notApproved: "not approved",
} as const;

/** Not stopped yet (any other value of the state is the reason the gate stopped waiting, or {@link DECIDED}). */
const WAITING: unique symbol = Symbol("toolgate.decision.waiting");
/** Decided in time: nothing more to hear from the caller's signal. */
const DECIDED: unique symbol = Symbol("toolgate.decision.decided");

/**
 * One call's wait for `authorize` and `approve`. The hooks see only {@link request}, a plain object
 * (its `signal` an own, enumerable getter, so a spread or a copy keeps it); the state behind it stays
 * here. The signal is made only when a hook reads it (an AbortController costs more than a whole
 * call): it aborts when the caller's does, with its reason, or when the gate stops waiting for the
 * decision, with a {@link HookTimeoutError}. Read after a decision made in time, it never aborts.
 */
export class DecisionWait implements SignalWatcher {
  readonly request: CallRequest;
  readonly caller: AbortSignal | undefined;
  #controller: AbortController | undefined = undefined;
  #state: unknown = WAITING;
  #watching = false;
  constructor(
    tool: string,
    version: string,
    effect: ToolEffect,
    callId: string,
    principal: Principal | undefined,
    input: unknown,
    meta: Readonly<Record<string, unknown>>,
    caller: AbortSignal | undefined,
  ) {
    this.caller = caller;
    const signal = (): AbortSignal => this.#signal();
    this.request = {
      tool,
      version,
      effect,
      callId,
      principal,
      input,
      meta,
      get signal(): AbortSignal {
        return signal();
      },
    };
  }
  #signal(): AbortSignal {
    if (this.#controller === undefined) {
      const c = new AbortController();
      this.#controller = c;
      const caller = this.caller;
      if (this.#state === DECIDED) {
        // the wait is over: a signal that hears no one
      } else if (this.#state !== WAITING) c.abort(this.#state);
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
    this.stop(this.caller?.reason);
  }
  /** The gate stopped waiting for a decision: abort the signal, if a hook read it. */
  stop(reason: unknown): void {
    if (this.#state !== WAITING) return;
    this.#state = reason;
    this.#unwatch();
    this.#controller?.abort(reason);
  }
  /** The decision is made (or the wait stopped): let go of the caller's signal. */
  done(): void {
    if (this.#state === WAITING) this.#state = DECIDED;
    this.#unwatch();
  }
  #unwatch(): void {
    if (!this.#watching) return;
    this.#watching = false;
    unwatch(this.caller!, this);
  }
}

/**
 * Ask `authorize`, then `approve` when the tool requires approval. Undefined: go ahead; a failure:
 * refuse with it. Never rejects: a hook's throw, rejection or silence is a refusal, reported to
 * `onHookError` (fail closed).
 */
export async function authorizeAndApprove(g: ResolvedGate, tool: AnyTool, wait: DecisionWait): Promise<Failure | undefined> {
  try {
    return await decide(g, tool, wait);
  } finally {
    wait.done();
  }
}

async function decide(g: ResolvedGate, tool: AnyTool, wait: DecisionWait): Promise<Failure | undefined> {
  const request = wait.request;
  if (g.authorize !== undefined) {
    let decision: unknown;
    try {
      decision = await within(g.authorize(request), "authorize", g.authorizeTimeoutMs, wait);
    } catch (e) {
      g.onHookError("authorize", e);
      return _fail("DENIED", MSG.authorizeFailed, false, "none");
    }
    // Cancelled while authorize decided: the call is answered already (cancelled); open no prompt.
    if (decision === CANCELLED) return cancelled(wait);
    if (decision !== true) {
      let allow: unknown, reason: unknown;
      try {
        // An answer whose fields cannot be read (a getter that throws, a Proxy) is a hook that failed.
        if (typeof decision === "object" && decision !== null) ({ allow, reason } = decision as { allow?: unknown; reason?: unknown });
      } catch (e) {
        g.onHookError("authorize", e);
        return _fail("DENIED", MSG.authorizeFailed, false, "none");
      }
      if (allow !== true) {
        const msg = typeof reason === "string" && reason.length > 0 ? _redactThenCut(g.redact, reason, 200) : MSG.denied;
        return _fail("DENIED", msg, false, "none");
      }
    }
  }
  if (wait.caller?.aborted === true) return cancelled(wait);
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
        ok = await within(g.approve(request), "approve", g.approvalTimeoutMs, wait);
      } catch (e) {
        g.onHookError("approve", e);
        ok = false;
      }
      if (ok === CANCELLED) return cancelled(wait);
      if (ok !== true) return _fail("DENIED", MSG.notApproved, false, "none");
    }
  }
  return undefined;
}

/**
 * The caller cancelled while a hook decided: the wait stops with the caller's reason, so a hook
 * that reads `request.signal` only now (after an await of its own) still finds it aborted.
 */
function cancelled(wait: DecisionWait): Failure {
  wait.stop(wait.caller?.reason);
  return cancelledBefore();
}

/**
 * A hook's answer, waited for at most `ms`, or {@link CANCELLED} as soon as the caller aborts (its
 * timer cleared then: a cancelled call holds no timer, and its hook is not reported as timed out).
 * Past `ms` the wait stops and this throws a {@link HookTimeoutError}.
 */
async function within(answer: unknown, hook: "authorize" | "approve", ms: number, wait: DecisionWait): Promise<unknown> {
  if (!isPromiseLike(answer)) return answer;
  const r: unknown = await untilSettled(Promise.resolve(answer), wait.caller, ms);
  if (r !== TIMED_OUT) return r;
  const error = new HookTimeoutError(hook, ms);
  wait.stop(error);
  throw error;
}
