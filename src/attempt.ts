/**
 * One execution of a tool: the context it sees, its timeout and the caller's cancellation.
 * Resolves (never rejects) to what happened.
 * @module
 */
import type { AnyTool, Principal, ToolContext } from "./tool.js";
import type { EffectRef } from "./result.js";
import { scheduleDeadline } from "./policy/deadline.js";
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

/** The context object; the AbortController is created only if the tool reads `signal`. */
class AttemptContext implements ToolContext {
  private controller: AbortController | undefined;
  private abortReason: unknown;
  private aborted = false;
  constructor(
    private readonly scope: CallScope,
    readonly attempt: number,
  ) {}
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.abortReason);
    }
    return this.controller.signal;
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
  recordEffect(effect: EffectRef): Promise<void> {
    return this.scope.recordEffect(effect);
  }
  abort(reason: unknown): void {
    this.aborted = true;
    this.abortReason = reason;
    this.controller?.abort(reason);
  }
}

/** Run `tool.execute` once with a timeout. */
export function runAttempt(
  tool: AnyTool,
  input: unknown,
  scope: CallScope,
  attempt: number,
  timeoutMs: number,
): Promise<AttemptResult> {
  return runInContext((i, ctx) => tool.execute(i, ctx), input, scope, attempt, timeoutMs);
}

/** Run one function of a tool (`execute`, `reconcile`) with a fresh context and a timeout. */
export function runInContext(
  fn: (input: unknown, ctx: ToolContext) => unknown,
  input: unknown,
  scope: CallScope,
  attempt: number,
  timeoutMs: number,
): Promise<AttemptResult> {
  return new Promise<AttemptResult>((resolve) => {
    const ctx = new AttemptContext(scope, attempt);
    let settled = false;
    const caller = scope.signal;
    const onCallerAbort = (): void => {
      if (settled) return;
      settled = true;
      deadline.cancel();
      ctx.abort(caller?.reason);
      resolve({ kind: "cancelled" });
    };
    const finish = (r: AttemptResult): void => {
      if (settled) return;
      settled = true;
      deadline.cancel();
      caller?.removeEventListener("abort", onCallerAbort);
      resolve(r);
    };
    const deadline = scheduleDeadline(timeoutMs, () => {
      if (settled) return;
      settled = true;
      caller?.removeEventListener("abort", onCallerAbort);
      ctx.abort(new AttemptTimeoutError(timeoutMs));
      resolve({ kind: "timeout" });
    });
    if (caller !== undefined) {
      if (caller.aborted) return onCallerAbort();
      caller.addEventListener("abort", onCallerAbort, { once: true });
    }
    let out: unknown;
    try {
      out = fn(input, ctx);
    } catch (error) {
      return finish({ kind: "threw", error });
    }
    if (isPromiseLike(out)) {
      out.then(
        (value) => finish({ kind: "value", value }),
        (error: unknown) => finish({ kind: "threw", error }),
      );
    } else finish({ kind: "value", value: out });
  });
}
