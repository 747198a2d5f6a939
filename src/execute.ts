/**
 * Execute with policy: breaker admission, concurrency, attempts with timeout, classification,
 * retries (reads only, within the budget, full-jitter backoff) and the mapping of the final
 * failure to the envelope's code, retryability and effect.
 * @module
 */
import { _fail, type Failure } from "./result.js";
import type { AnyTool } from "./tool.js";
import { runAttempt, startAttempt, type AttemptResult, type AttemptTarget, type CallScope } from "./attempt.js";
import { answeredByService, classifyError, type Classified } from "./policy/classify.js";
import { fullJitter } from "./policy/backoff.js";
import { MAX_TIMER_MS, sleep } from "./policy/deadline.js";
import { untilSettled } from "./policy/caller-signal.js";
import type { Breaker } from "./policy/breaker.js";
import type { RetryBudget } from "./policy/budget.js";
import { _redactThenCut, type Redactor } from "./redact.js";
import type { UnknownKeyCheck } from "./unknown-keys.js";
import { reconcileWrite, writeRetryIsSafe, type ReconcileOutcome } from "./reconcile.js";

/** Resolved retry settings for one tool. */
export interface RetryPlan {
  readonly attempts: number;
  readonly baseMs: number;
  readonly capMs: number;
}

/** Per-tool mutable state owned by one gate. */
export interface ToolRuntime {
  readonly tool: AnyTool;
  readonly retry: RetryPlan;
  readonly timeoutMs: number;
  readonly concurrency: number;
  readonly breaker: Breaker | undefined;
  /** The unknown-key check against the advertised input schema; absent with `unknownKeys: "strip"`. */
  readonly unknownKeys: UnknownKeyCheck | undefined;
  /** Compiled fast paths (src/fast-path.ts): the parsed value or NO; absent outside their subset. */
  readonly fastInput: ((value: unknown) => unknown) | undefined;
  readonly fastOutput: ((value: unknown) => unknown) | undefined;
  inFlight: number;
}

/** One attempt as reported to `onAttempt`. */
export interface AttemptEvent {
  readonly tool: string;
  readonly version: string;
  readonly callId: string;
  readonly attempt: number;
  readonly outcome: "success" | "transient" | "timeout" | "permanent" | "rejected" | "denied" | "cancelled";
  readonly durationMs: number;
  /** The wait before the next attempt, when one follows. */
  readonly backoffMs?: number;
}

/** What the execute phase produced. */
export type ExecOutcome =
  | { readonly ok: true; readonly value: unknown; readonly attempts: number }
  | { readonly ok: false; readonly failure: Failure; readonly attempts: number };

/** Dependencies of the execute phase that come from the gate. */
export interface ExecEnv {
  readonly budget: RetryBudget;
  readonly redact: Redactor;
  readonly onAttempt: ((e: AttemptEvent) => void) | undefined;
  readonly random: () => number;
}

const MSG = {
  breakerOpen: "The tool is temporarily unavailable (circuit open); try again later",
  busy: "The tool is at its concurrency limit; try again later",
  busyUnknown: "The tool is at its concurrency limit and did not run; an earlier attempt under this key left its effect unknown: check state before any retry",
  inheritedUnknown: "Nothing ran in this call; an earlier attempt under this key left its effect unknown: check state before any retry",
  transient: "The tool failed transiently; try again later",
  timeout: "The tool timed out; try again later",
  writeUnknown: "The write failed and its effect is unknown; check state before any retry",
  failed: "The tool failed",
  cancelled: "The call was cancelled",
  cancelledBefore: "The call was cancelled before it ran; nothing was executed",
  denied: "The service denied the call",
  rejected: "The request was rejected",
} as const;

/** Map a final classified failure to an envelope failure. Exported for the business-check step. */
export function failureFor(
  c: Classified | { kind: "timeout" | "cancelled" },
  effect: AnyTool["effect"],
  redact: Redactor,
): Failure {
  const write = effect === "write";
  switch (c.kind) {
    case "rejected": {
      const msg = "message" in c && c.message !== undefined && c.message.length > 0 ? c.message : MSG.rejected;
      const effect = write && "effect" in c && c.effect !== undefined ? c.effect : "none";
      return _fail("REJECTED", _redactThenCut(redact, msg, 200), false, effect);
    }
    case "denied": {
      const msg = "message" in c && c.message !== undefined && c.message.length > 0 ? c.message : MSG.denied;
      return _fail("DENIED", _redactThenCut(redact, msg, 200), false, "none");
    }
    case "cancelled":
      return _fail("FAILED", MSG.cancelled, false, write ? "unknown" : "none");
    case "transient":
    case "timeout":
      if (write) return unknownEffect();
      return _fail("RETRYABLE", c.kind === "timeout" ? MSG.timeout : MSG.transient, true, "none", {
        retryAfterMs: "retryAfterMs" in c ? c.retryAfterMs : undefined,
      });
    case "permanent":
      return write ? unknownEffect() : _fail("FAILED", MSG.failed, false, "none");
  }
}

function outcomeName(r: Exclude<AttemptResult, { kind: "unstarted" }>, c: Classified | undefined): AttemptEvent["outcome"] {
  if (r.kind === "value") return "success";
  if (r.kind === "timeout" || r.kind === "cancelled") return r.kind;
  return c!.kind;
}

/**
 * A call executing under policy: what {@link executeWithPolicy} runs, in which scope, and where the
 * outcome goes. The gate's own call object is one (no closure per call); its `attemptEnded` hands
 * the first attempt's result to {@link firstAttemptEnded}.
 */
export interface Execution extends AttemptTarget {
  readonly rt: ToolRuntime;
  readonly input: unknown;
  readonly scope: CallScope;
  readonly env: ExecEnv;
  /** `performance.now()` when the first attempt started (0 without an `onAttempt` hook); set by {@link executeWithPolicy}. */
  started: number;
  /** Called exactly once with the outcome. Must not throw. */
  executed(outcome: ExecOutcome): void;
}

/** Executions of a tool the call may make: a write only with a guarantee (see {@link writeRetryIsSafe}). */
function maxAttemptsOf(rt: ToolRuntime, scope: CallScope): number {
  return rt.tool.effect === "write" && !writeRetryIsSafe(rt.tool, scope) ? 1 : rt.retry.attempts;
}

/**
 * Run the tool under its policies; `x.executed` hears the outcome once (the hot path: no promise
 * of its own when the first attempt succeeds). Never throws.
 * `now`: a `performance.now()` read just before (the first attempt's deadline counts from it).
 */
export function executeWithPolicy(x: Execution, now: number | undefined): void {
  const { rt, scope, env } = x;
  const tool = rt.tool;
  if (rt.inFlight >= rt.concurrency) return atLimit(x);
  rt.inFlight++;
  env.budget.deposit();
  // A failed write may have applied its effect: it is retried only with a guarantee (a downstream
  // that honours the idempotency key, or a state check), and a resumed claim checks state first.
  if ((tool.effect === "write" && scope.resumed) || (rt.breaker !== undefined && rt.breaker.state !== "closed")) {
    loopFrom(x, undefined);
    return;
  }
  // The common case starts the first attempt directly; the loop takes over only when that
  // attempt did not succeed (see firstAttemptEnded).
  x.started = env.onAttempt === undefined ? 0 : performance.now();
  startAttempt(tool, x.input, scope, 1, rt.timeoutMs, now, x);
}

/** The tool is at its concurrency limit: nothing runs. */
function atLimit(x: Execution): void {
  // A taken-over claim inherits an unknown effect that no state check has cleared yet: it stays
  // unknown (and its key held, so the next call takes it over and checks), never "none".
  const unknown = x.rt.tool.effect === "write" && x.scope.resumed;
  x.executed({ ok: false, failure: unknown ? _fail("FAILED", MSG.busyUnknown, false, "unknown") : _fail("RETRYABLE", MSG.busy, true, "none"), attempts: 0 });
}

/** The first attempt started by {@link executeWithPolicy} ended: its value, or the attempt loop from there. */
export function firstAttemptEnded(x: Execution, r: AttemptResult): void {
  if (r.kind !== "value") return loopFrom(x, r);
  const rt = x.rt;
  let outcome: ExecOutcome;
  try {
    outcome = succeeded(rt, x.scope, x.env, 1, r.value, x.started, 0); // a closed circuit let it through
  } catch {
    outcome = broken(rt.tool.effect === "write"); // never: hooks are wrapped; but the call must not hang
  }
  x.executed(release(rt, outcome));
}

/** The attempt loop, from the first attempt's result when it already ran. */
function loopFrom(x: Execution, first: AttemptResult | undefined): void {
  const rt = x.rt;
  attemptsFrom(rt, x.input, x.scope, x.env, maxAttemptsOf(rt, x.scope), first, x.started).then(
    (o) => x.executed(o),
    () => x.executed(broken(rt.tool.effect === "write")),
  );
}

/**
 * True once every timed-out attempt of the call has stopped working (their tools' promises
 * settled after the abort), waiting at most `waitMs`: a state check is only trusted then.
 */
async function allStopped(running: readonly Promise<void>[], scope: CallScope, waitMs: number): Promise<boolean> {
  if (running.length === 0) return true;
  const v = await untilSettled(Promise.all(running).then(() => undefined), scope.signal, waitMs);
  return v === undefined;
}

/**
 * The situation table's "write failed and the effect is not known": FAILED, effect `unknown`, not
 * retryable. Also what a failure that claims `none` becomes while a write may have taken effect
 * (see `maybeApplied`): whatever the later answer was (DENIED, a full concurrency limit), the next
 * step is a state check, and a retry is only safe under the same idempotency key.
 */
function unknownEffect(): Failure {
  return _fail("FAILED", MSG.writeUnknown, false, "unknown");
}

/** A call in which nothing ran, holding a claim whose earlier attempt left its effect unknown. */
export function inheritedUnknown(): Failure {
  return _fail("FAILED", MSG.inheritedUnknown, false, "unknown");
}

/** The call was cancelled before the tool ran (in any step of the gate): nothing was executed. */
export function cancelledBefore(): Failure {
  return _fail("FAILED", MSG.cancelledBefore, false, "none");
}

/** Cancelled between attempts (or before the first): the effect is what the attempts so far left. */
function cancelledAfter(last: Failure | undefined): Failure {
  return last === undefined ? cancelledBefore() : _fail("FAILED", MSG.cancelled, false, last.effect);
}

/** The outcome if the attempt loop itself failed (it does not: it never rejects). */
function broken(write: boolean): ExecOutcome {
  return { ok: false, failure: _fail("FAILED", MSG.failed, false, write ? "unknown" : "none"), attempts: 1 };
}

function release(rt: ToolRuntime, outcome: ExecOutcome): ExecOutcome {
  rt.inFlight--;
  return outcome;
}

/** `probe`: the attempt's breaker admission (0: let through a closed circuit). */
function succeeded(rt: ToolRuntime, scope: CallScope, env: ExecEnv, attempt: number, value: unknown, started: number, probe: number): ExecOutcome {
  const tool = rt.tool;
  rt.breaker?.success(probe);
  if (env.onAttempt !== undefined) {
    env.onAttempt({ tool: tool.name, version: tool.version, callId: scope.callId, attempt, outcome: "success", durationMs: performance.now() - started });
  }
  return { ok: true, value, attempts: attempt };
}

/**
 * The attempt loop: breaker admission, attempts, classification, state checks, backoff.
 * `first` is the first attempt's result when it already ran. Releases the concurrency slot.
 */
async function attemptsFrom(
  rt: ToolRuntime,
  input: unknown,
  scope: CallScope,
  env: ExecEnv,
  maxAttempts: number,
  first: AttemptResult | undefined,
  firstStarted: number,
): Promise<ExecOutcome> {
  const tool = rt.tool;
  const write = tool.effect === "write";
  /**
   * Whether a write may have taken effect in this call or the one it took over, and no state check
   * has said "none" since: then a failure that claims "none" (a later attempt DENIED, a cancel)
   * is reported as unknown instead, and its key stays held.
   */
  let maybeApplied = write && scope.resumed;
  /** Timed-out attempts whose tools may still be working: each settles when its tool stops. */
  const running: Promise<void>[] = [];
  const loop = async (): Promise<ExecOutcome> => {
    if (first === undefined && write && scope.resumed) {
      const rec = await reconcileWrite(tool, input, scope, 0, rt.timeoutMs);
      if (rec?.status === "applied") return { ok: true, value: rec.output, attempts: 0 };
      if (rec?.status === "unknown") return { ok: false, failure: inheritedUnknown(), attempts: 0 };
      if (rec?.status === "none") maybeApplied = false;
    }
    let last: Failure | undefined;
    let pending = first;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      let r: AttemptResult;
      let started = firstStarted;
      /** The id of the probe this attempt is (let through a half-open breaker; 0: not a probe): only its verdict reopens or frees the circuit. */
      let probe = 0;
      if (pending !== undefined) {
        r = pending;
        pending = undefined;
      } else {
        if (rt.breaker !== undefined && rt.breaker.state !== "closed") {
          const adm = rt.breaker.admit(performance.now());
          if (adm.ok) probe = adm.probe;
          else {
            if (attempt > 1) env.budget.refund(); // the retry this attempt was to be did not run
            // The last failure stands (a write's unknown effect is not retryable: no wait to advise).
            const f = last ?? _fail("RETRYABLE", MSG.breakerOpen, true, "none");
            return { ok: false, failure: f.retryable ? { ...f, retryAfterMs: Math.ceil(Math.min(adm.retryAfterMs, MAX_TIMER_MS)) } : f, attempts: attempt - 1 };
          }
        }
        started = env.onAttempt === undefined ? 0 : performance.now();
        r = await runAttempt(tool, input, scope, attempt, rt.timeoutMs);
      }
      if (r.kind === "unstarted") {
        // The caller had cancelled before this attempt could start: it is not an execution.
        rt.breaker?.release(probe);
        if (attempt > 1) env.budget.refund();
        return { ok: false, failure: cancelledAfter(last), attempts: attempt - 1 };
      }
      const durationMs = env.onAttempt === undefined ? 0 : performance.now() - started;
      if (r.kind === "value") return succeeded(rt, scope, env, attempt, r.value, started, probe);
      const c: Classified | undefined = r.kind === "threw" ? classifyError(r.error, tool.classify?.bind(tool)) : undefined;
      const kind = c?.kind ?? r.kind;
      // Down: a transient failure, a timeout, an unclassified error. A 4xx answer, a reject or a denial: up.
      if (kind === "transient" || kind === "timeout" || (kind === "permanent" && !(r.kind === "threw" && answeredByService(r.error)))) rt.breaker?.failure(performance.now(), probe);
      else if (kind === "cancelled") rt.breaker?.release(probe); // no verdict on the service: the next call may probe
      else rt.breaker?.success(probe); // the service answered: it is up
      last = failureFor(c ?? { kind: r.kind as "timeout" | "cancelled" }, tool.effect, env.redact);
      if (last.effect === "unknown") maybeApplied = true;
      let safe = !write || (tool.idempotentDownstream === true && scope.idempotencyKey !== undefined);
      let reconciled: ReconcileOutcome | undefined;
      // A state check is only trusted once the attempt it checks has stopped: a timed-out tool may
      // still be writing. It gets the tool's timeout to stop after its abort; if it does not, the
      // effect stays unknown and nothing is retried.
      if (r.kind === "timeout" && r.stopped !== undefined) running.push(r.stopped);
      if (write && last.effect === "unknown" && kind !== "cancelled" && tool.reconcile !== undefined && (await allStopped(running, scope, rt.timeoutMs))) {
        reconciled = await reconcileWrite(tool, input, scope, attempt, rt.timeoutMs);
        if (reconciled?.status === "none") {
          last = failureFor(c ?? { kind: r.kind as "timeout" }, "read", env.redact); // certainly no effect
          maybeApplied = false; // every attempt so far has stopped: the state check speaks for all of them
          safe = true;
        }
      }
      const retryAfterMs = c?.retryAfterMs;
      const canRetry =
        safe &&
        reconciled?.status !== "applied" &&
        (kind === "transient" || kind === "timeout") &&
        attempt < maxAttempts &&
        (retryAfterMs === undefined || retryAfterMs <= rt.retry.capMs) &&
        env.budget.tryWithdraw();
      let backoffMs = canRetry ? Math.max(retryAfterMs ?? 0, fullJitter(attempt, rt.retry, env.random)) : undefined;
      // A retry the breaker would refuse after the wait (this failure may just have opened it) is
      // not made: no wait, no backoff announced, and its token goes back to the budget.
      if (backoffMs !== undefined && rt.breaker !== undefined) {
        const wait = rt.breaker.waitMs(performance.now());
        if (wait > backoffMs) {
          env.budget.refund();
          backoffMs = undefined;
          // The caller is told when the breaker lets a call through, as a refused retry would have said.
          if (last.retryable) last = { ...last, retryAfterMs: Math.max(last.retryAfterMs ?? 0, Math.ceil(Math.min(wait, MAX_TIMER_MS))) };
        }
      }
      env.onAttempt?.({
        tool: tool.name,
        version: tool.version,
        callId: scope.callId,
        attempt,
        outcome: outcomeName(r, c),
        durationMs,
        ...(backoffMs !== undefined ? { backoffMs } : {}),
      });
      if (reconciled?.status === "applied") return { ok: true, value: reconciled.output, attempts: attempt };
      if (backoffMs === undefined) return { ok: false, failure: last, attempts: attempt };
      if (!(await sleep(backoffMs, scope.signal))) {
        env.budget.refund(); // cancelled in the wait: the retry never ran
        return { ok: false, failure: cancelledAfter(last), attempts: attempt };
      }
    }
    return { ok: false, failure: last ?? _fail("FAILED", MSG.failed, false, "none"), attempts: maxAttempts };
  };
  try {
    const outcome = await loop();
    if (outcome.ok || !maybeApplied || outcome.failure.effect !== "none") return outcome;
    // Nothing ran in this call (a resumed claim refused at an open breaker, or cancelled first): the unknown effect is the earlier call's.
    const failure = outcome.attempts === 0 ? inheritedUnknown() : unknownEffect();
    return { ok: false, failure, attempts: outcome.attempts };
  } finally {
    rt.inFlight--;
  }
}
