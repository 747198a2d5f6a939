/**
 * One execution of a tool: the context it sees, its timeout and the caller's cancellation.
 * Reports exactly once (never throws, never rejects) what happened.
 * @module
 */
import type { AnyTool, Principal, ToolContext } from "./tool.js";
import type { EffectRef } from "./result.js";
import { scheduleDeadline, type DeadlineHandle, type DeadlineTarget } from "./policy/deadline.js";
import { isPromiseLike } from "./standard.js";

/** What one attempt produced. */
export type AttemptResult =
  | { readonly kind: "value"; readonly value: unknown }
  | { readonly kind: "threw"; readonly error: unknown }
  | { readonly kind: "timeout" }
  | { readonly kind: "cancelled" };

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
 * One execution: the context the tool sees, and the settling of the attempt (value, throw,
 * timeout, caller's abort — whichever comes first). The AbortController is created only if the
 * tool reads `signal`. It is its own deadline target and abort listener: no closure per attempt.
 */
class AttemptRun implements ToolContext, DeadlineTarget {
  #controller: AbortController | undefined;
  #abortReason: unknown;
  #aborted = false;
  #settled = false;
  #deadline: DeadlineHandle | undefined;
  constructor(
    private readonly scope: CallScope,
    readonly attempt: number,
    private readonly timeoutMs: number,
    private readonly done: (r: AttemptResult) => void,
  ) {}
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#abortReason);
    }
    return this.#controller.signal;
  }
  get callId(): string {
    return this.scope.callId;
  }
  get meta(): Readonly<Record<string, unknown>> {
    return this.scope.meta;
  }
  get idempotencyKey(): string | undefined {
    return this.scope.idempotencyKey;
  }
  get principal(): Principal | undefined {
    return this.scope.principal;
  }
  /** A function of its own, so `const { recordEffect } = ctx` works; made only when read. */
  get recordEffect(): (effect: EffectRef) => Promise<void> {
    return (effect) => this.scope.recordEffect(effect);
  }

  /** Arm the deadline and listen to the caller; false when the caller has already aborted. */
  start(now: number | undefined): boolean {
    const caller = this.scope.signal;
    if (caller !== undefined) {
      if (caller.aborted) {
        this.handleEvent();
        return false;
      }
      caller.addEventListener("abort", this, { once: true });
    }
    this.#deadline = scheduleDeadline(this.timeoutMs, this, now);
    return true;
  }
  /** The tool finished (value or throw). */
  settle(r: AttemptResult): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#deadline?.cancel();
    this.scope.signal?.removeEventListener("abort", this);
    this.done(r);
  }
  /** The deadline passed. */
  onDeadline(): void {
    if (this.#settled) return;
    this.#settled = true;
    this.scope.signal?.removeEventListener("abort", this);
    this.#abort(new AttemptTimeoutError(this.timeoutMs));
    this.done({ kind: "timeout" });
  }
  /** The caller's signal aborted (EventTarget listener object). */
  handleEvent(): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#deadline?.cancel();
    this.#abort(this.scope.signal?.reason);
    this.done({ kind: "cancelled" });
  }
  #abort(reason: unknown): void {
    this.#aborted = true;
    this.#abortReason = reason;
    this.#controller?.abort(reason);
  }
}

/**
 * Start `tool.execute` once with a timeout; `done` is called exactly once with what happened
 * (synchronously when the tool answers synchronously). `now`: a `performance.now()` the caller
 * has just read, if any. The hot path: no promise of its own.
 */
export function startAttempt(
  tool: AnyTool,
  input: unknown,
  scope: CallScope,
  attempt: number,
  timeoutMs: number,
  now: number | undefined,
  done: (r: AttemptResult) => void,
): void {
  start(tool, tool.execute, input, scope, attempt, timeoutMs, now, done);
}

/** {@link startAttempt} as a promise. */
export function runAttempt(tool: AnyTool, input: unknown, scope: CallScope, attempt: number, timeoutMs: number): Promise<AttemptResult> {
  return new Promise<AttemptResult>((resolve) => start(tool, tool.execute, input, scope, attempt, timeoutMs, undefined, resolve));
}

/** Run one function of a tool (`execute`, `reconcile`) with a fresh context and a timeout. */
export function runInContext(
  fn: (input: unknown, ctx: ToolContext) => unknown,
  input: unknown,
  scope: CallScope,
  attempt: number,
  timeoutMs: number,
): Promise<AttemptResult> {
  return new Promise<AttemptResult>((resolve) => start(undefined, fn, input, scope, attempt, timeoutMs, undefined, resolve));
}

function start(
  self: unknown,
  fn: (input: never, ctx: ToolContext) => unknown,
  input: unknown,
  scope: CallScope,
  attempt: number,
  timeoutMs: number,
  now: number | undefined,
  done: (r: AttemptResult) => void,
): void {
  const r = new AttemptRun(scope, attempt, timeoutMs, done);
  if (!r.start(now)) return;
  try {
    const out: unknown = fn.call(self, input as never, r);
    if (isPromiseLike(out)) {
      out.then(
        (value) => r.settle({ kind: "value", value }),
        (error: unknown) => r.settle({ kind: "threw", error }),
      );
    } else r.settle({ kind: "value", value: out });
  } catch (error) {
    r.settle({ kind: "threw", error }); // the tool threw, or its thenable's `then` did
  }
}
