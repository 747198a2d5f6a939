/**
 * One execution of a tool: the context it sees, its timeout and the caller's cancellation.
 * Reports exactly once (never throws, never rejects) what happened.
 * @module
 */
import type { AnyTool, Principal, ToolContext } from "./tool.js";
import type { EffectRef } from "./result.js";
import { scheduleDeadline, type DeadlineHandle, type DeadlineTarget } from "./policy/deadline.js";
import { isPromiseLike } from "./standard.js";
import { unwatch, watch } from "./policy/caller-signal.js";
import { outsideCalls } from "./policy/shared-context.js";

/** What one attempt produced. */
export type AttemptResult =
  | { readonly kind: "value"; readonly value: unknown }
  | { readonly kind: "threw"; readonly error: unknown }
  /** `stopped`: settles when the tool's own promise does (it may still be working), when it returned one. */
  | { readonly kind: "timeout"; readonly stopped?: Promise<void> }
  | { readonly kind: "cancelled" }
  /** The caller's signal had aborted before the tool was invoked: nothing ran. */
  | { readonly kind: "unstarted" };

/** Where an attempt reports what happened: exactly once, never throwing. */
export interface AttemptTarget {
  attemptEnded(r: AttemptResult): void;
}

/** The parts of the context that stay the same across attempts. */
export interface CallScope {
  readonly callId: string;
  readonly meta: Readonly<Record<string, unknown>>;
  readonly idempotencyKey: string | undefined;
  readonly principal: Principal | undefined;
  readonly signal: AbortSignal | undefined;
  /** Records a partial effect (durably, with a ledger); see `ToolContext.recordEffect`. */
  readonly recordEffect: (effect: EffectRef) => Promise<void>;
  /** An earlier claim of this call's key ended with an unknown outcome (a crash, or FAILED unknown). */
  readonly resumed: boolean;
}

/** The error an attempt's signal is aborted with on timeout. */
export class AttemptTimeoutError extends Error {
  override readonly name = "TimeoutError";
  constructor(ms: number) {
    super(`tool attempt timed out after ${ms} ms`);
  }
}

/**
 * Attempts that will listen to their caller's signal once the microtasks queued so far have run.
 * A signal is usually fresh per request (MCP, HTTP, agent frameworks), and the first listener on
 * a fresh AbortSignal costs Node about as much as the whole gate; an attempt whose tool answered
 * with a settled promise is over before the flush, and never listens. Nothing is missed: an abort
 * from I/O arrives in a later macrotask, after the flush; one made synchronously before the flush
 * is seen there (`aborted`). A microtask, not `process.nextTick`: a caller that loops over calls
 * without yielding to the event loop would starve a tick, and the queue would grow without bound.
 */
let waiting: AttemptRun[] = [];

function listenSoon(r: AttemptRun): void {
  if (waiting.length === 0) outsideCalls(() => queueMicrotask(flushListeners)); // serves every call queued: none's context
  waiting.push(r);
}

function flushListeners(): void {
  const ready = waiting;
  waiting = [];
  for (const r of ready) {
    try {
      r.listen();
    } catch {
      // listen() does not throw (the attempt's target never does); never let one stop the rest
    }
  }
}

/**
 * One execution: the context the tool sees, and the settling of the attempt (value, throw,
 * timeout, caller's abort — whichever comes first). The AbortController is created only if the
 * tool reads `signal`. It is its own deadline target (no closure per attempt); the caller's signal
 * reaches it through one shared listener per signal (src/policy/caller-signal.ts). This object is the tool's
 * `ctx`: everything but `attempt` and the context's getters is `#private`, so a tool cannot reach
 * the call's scope, the deadline queue or other calls through it.
 */
class AttemptRun implements ToolContext, DeadlineTarget {
  #controller: AbortController | undefined;
  #onAbort: ((reason: unknown) => void) | undefined;
  #abortReason: unknown;
  #aborted = false;
  #settled = false;
  #listening = false;
  #deadline: DeadlineHandle | undefined;
  /** The tool returned a promise (or thenable) that the attempt is waiting for. */
  #pending = false;
  /** Resolves the `stopped` promise of a timed-out attempt when the tool's promise settles. */
  #onStopped: (() => void) | undefined;
  readonly #scope: CallScope;
  readonly #timeoutMs: number;
  readonly #target: AttemptTarget;
  constructor(
    scope: CallScope,
    readonly attempt: number,
    timeoutMs: number,
    target: AttemptTarget,
  ) {
    this.#scope = scope;
    this.#timeoutMs = timeoutMs;
    this.#target = target;
  }
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#abortReason);
    }
    return this.#controller.signal;
  }
  get callId(): string {
    return this.#scope.callId;
  }
  get meta(): Readonly<Record<string, unknown>> {
    return this.#scope.meta;
  }
  get idempotencyKey(): string | undefined {
    return this.#scope.idempotencyKey;
  }
  get principal(): Principal | undefined {
    return this.#scope.principal;
  }
  /** A function of its own, so `const { recordEffect } = ctx` works; made only when read. */
  get recordEffect(): (effect: EffectRef) => Promise<void> {
    return (effect) => this.#scope.recordEffect(effect);
  }

  /** Arm the deadline; false (and reported "unstarted") when the caller has already aborted. */
  start(now: number | undefined): boolean {
    const caller = this.#scope.signal;
    if (caller !== undefined && caller.aborted) {
      this.#settled = true;
      this.#target.attemptEnded({ kind: "unstarted" });
      return false;
    }
    this.#deadline = scheduleDeadline(this.#timeoutMs, this, now);
    return true;
  }
  /** The tool returned a promise: after a timeout, the attempt can tell when it stops. */
  track(): void {
    if (!this.#settled) this.#pending = true;
  }
  /** After the tool was invoked: listen to the caller (soon) if the attempt is still running. */
  invoked(): void {
    if (!this.#settled && this.#scope.signal !== undefined) listenSoon(this);
  }
  /** Listen to the caller's signal, unless the attempt already ended (see {@link listenSoon}). */
  listen(): void {
    if (this.#settled) return;
    const caller = this.#scope.signal!;
    if (caller.aborted) return this.cancel();
    watch(caller, this);
    this.#listening = true;
  }
  /** The tool finished (value or throw). */
  settle(r: AttemptResult): void {
    if (this.#settled) {
      // the tool's promise settled after a timeout or cancel: the tool has stopped
      const stopped = this.#onStopped;
      this.#onStopped = undefined;
      stopped?.();
      return;
    }
    this.#settled = true;
    this.#pending = false;
    this.#deadline?.cancel();
    this.#unlisten();
    this.#target.attemptEnded(r);
  }
  #unlisten(): void {
    if (this.#listening) unwatch(this.#scope.signal!, this);
  }
  /** The deadline passed. */
  onDeadline(): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#unlisten();
    this.#abort(new AttemptTimeoutError(this.#timeoutMs));
    if (!this.#pending) return this.#target.attemptEnded({ kind: "timeout" });
    // No second `then` on the tool's object (a query builder runs its query on every `then`):
    // the callbacks already attached to it report here when it settles.
    const stopped = new Promise<void>((resolve) => (this.#onStopped = resolve));
    this.#target.attemptEnded({ kind: "timeout", stopped });
  }
  /** The caller's signal aborted. */
  cancel(): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#deadline?.cancel();
    this.#abort(this.#scope.signal?.reason);
    this.#target.attemptEnded({ kind: "cancelled" });
  }
  #abort(reason: unknown): void {
    this.#aborted = true;
    this.#abortReason = reason;
    this.#controller?.abort(reason);
    const hook = this.#onAbort;
    this.#onAbort = undefined;
    if (hook !== undefined) callAbortHook(hook, reason);
  }
  /** See {@link onAttemptAbort}. */
  setAbortHook(hook: (reason: unknown) => void): void {
    if (this.#aborted) callAbortHook(hook, this.#abortReason);
    else this.#onAbort = hook;
  }
}

function callAbortHook(hook: (reason: unknown) => void, reason: unknown): void {
  try {
    hook(reason);
  } catch {
    // a hook's failure changes nothing: the attempt has already ended
  }
}

/**
 * Registers one callback, called once when the work it guards is aborted: the cheap alternative
 * to an AbortSignal that `createUpstream().call` (toolgate/mcp) also takes.
 * @example
 * let abort: ((reason: unknown) => void) | undefined;
 * const source: AbortSource = (onAbort) => void (abort = onAbort);
 * const answer = upstream.call("echo", { text: "hi" }, undefined, source, 5_000);
 * abort?.("the user stopped"); // answer rejects with "the user stopped"; the upstream is told to cancel
 */
export type AbortSource = (onAbort: (reason: unknown) => void) => void;

/**
 * @internal How toolgate's own tools (the proxy's) hear that an attempt was aborted without
 * reading `ctx.signal`, whose AbortController costs about 4.6 µs on Node 20 — the cost of several
 * gate calls. One hook per attempt; a context that is not the gate's gets its `signal` instead.
 */
export function onAttemptAbort(ctx: ToolContext): AbortSource | AbortSignal {
  return ctx instanceof AttemptRun ? (hook) => ctx.setAbortHook(hook) : ctx.signal;
}

/**
 * Start `tool.execute` once with a timeout; `target` hears exactly once what happened
 * (synchronously when the tool answers synchronously). `now`: a `performance.now()` the caller
 * has just read, if any. The hot path: no promise and no closure of its own.
 */
export function startAttempt(
  tool: AnyTool,
  input: unknown,
  scope: CallScope,
  attempt: number,
  timeoutMs: number,
  now: number | undefined,
  target: AttemptTarget,
): void {
  start(tool, tool.execute, input, scope, attempt, timeoutMs, now, target);
}

/** {@link startAttempt} as a promise. */
export function runAttempt(tool: AnyTool, input: unknown, scope: CallScope, attempt: number, timeoutMs: number): Promise<AttemptResult> {
  return new Promise<AttemptResult>((resolve) => start(tool, tool.execute, input, scope, attempt, timeoutMs, undefined, { attemptEnded: resolve }));
}

/** Run one function of a tool (`execute`, `reconcile`) with a fresh context and a timeout. */
export function runInContext(
  fn: (input: unknown, ctx: ToolContext) => unknown,
  input: unknown,
  scope: CallScope,
  attempt: number,
  timeoutMs: number,
): Promise<AttemptResult> {
  return new Promise<AttemptResult>((resolve) => start(undefined, fn, input, scope, attempt, timeoutMs, undefined, { attemptEnded: resolve }));
}

function start(
  self: unknown,
  fn: (input: never, ctx: ToolContext) => unknown,
  input: unknown,
  scope: CallScope,
  attempt: number,
  timeoutMs: number,
  now: number | undefined,
  target: AttemptTarget,
): void {
  const r = new AttemptRun(scope, attempt, timeoutMs, target);
  if (!r.start(now)) return;
  try {
    const out: unknown = fn.call(self, input as never, r);
    if (isPromiseLike(out)) {
      r.track();
      // A native promise runs these reactions in the call's async context. Any other thenable runs
      // them wherever it calls them (a client answering every pending request in one flush: another
      // call's context), so it is adopted by a native promise first; its `then` is still called once.
      (Object.getPrototypeOf(out) === Promise.prototype ? out : Promise.resolve(out)).then(
        (value) => r.settle({ kind: "value", value }),
        (error: unknown) => r.settle({ kind: "threw", error }),
      );
    } else r.settle({ kind: "value", value: out });
  } catch (error) {
    r.settle({ kind: "threw", error }); // the tool threw, or its thenable's `then` did
  }
  r.invoked(); // queued after the tool's own reaction: a tool that already answered never listens
}
