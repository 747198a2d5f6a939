/**
 * The attempts of one call, for the wrapper that made it. `instrument(gate)` (the call log,
 * OpenTelemetry) puts each call's attempts on its line or span; they came only from the gate's
 * `onAttempt` hook, which is fixed when `createGate` runs, so a wrapper of a gate it did not create
 * (a module's default export, the proxy's) recorded none. Through this seam a wrapper passes, with
 * the call's options, a listener that hears the attempts of the gate calls made with those options.
 * Nothing is registered on the gate, so nothing outlives the call.
 *
 * Options travel on through whatever stands between the wrapper and the gate, and such a gate may
 * make several gate calls with them (a fallback to a second gate, the proxy's argument check). So
 * the gate tells the listener which gate call each attempt belongs to — an opaque token, one per
 * gate call — and marks the envelope it answers with that token ({@link _markAnswer}): the wrapper
 * keeps the attempts of the gate call whose envelope it was handed, and no other's.
 *
 * The listeners travel as an array under a symbol key of the options (enumerable, so a wrapper in
 * between that copies the options with `{ ...opts }` keeps it). A gate that does not know the key
 * ignores it. Attempt events carry no payload: the same fields `onAttempt` receives.
 * @module
 */
import type { AttemptEvent } from "./execute.js";
import type { CallOptions } from "./gate.js";

/** @internal The call options' key of the attempt listeners. */
export const ATTEMPT_LISTENER: unique symbol = Symbol.for("toolgate.attemptListener");

/**
 * @internal Hears one attempt. `call` is the same object for every attempt of one gate call, and
 * is what {@link _answerOf} gives for that call's envelope.
 */
export type AttemptListener = (event: AttemptEvent, call: object) => void;

/** @internal Call options that may carry attempt listeners. */
export interface ListenedOptions extends CallOptions {
  /** Each hears every attempt of the gate call, after the gate's `onAttempt`; what one throws goes to `onHookError`. */
  readonly [ATTEMPT_LISTENER]?: readonly AttemptListener[];
}

/** The options a gate reads, copied when they are inherited (a class's getters) rather than own. */
const KNOWN = ["callId", "idempotencyKey", "principal", "signal"] as const;

/** What a wrapper passes on when the caller's options could not be read: the gate refuses them, as it would have. */
const UNREADABLE: CallOptions = Object.freeze(
  Object.defineProperty({}, "callId", {
    enumerable: true,
    get(): never {
      throw new TypeError("the call options could not be read");
    },
  }),
);

/** What a wrapper passes to the gate: the options, and the call's id when the options give it one. */
export interface Listened {
  readonly options: CallOptions | undefined;
  /** The call id the gate will use: the caller's, or one made here when it gave none. Absent when the gate will refuse the options. */
  readonly callId: string | undefined;
}

/**
 * @internal The caller's options, copied (each property read once, here: own ones as `{ ...opts }`
 * copies them, then the known options it inherits), with `listener` added after any listeners they
 * carry (a wrapper inside another), and a call id from `newId` when they have none, so the wrapper
 * knows the call's id before the gate answers. Options that are not an object pass as they are
 * (the gate refuses them; no attempt runs), and options that cannot be read become options the
 * gate refuses as unreadable.
 */
export function _withAttemptListener(opts: CallOptions | undefined, listener: AttemptListener, newId: () => string): Listened {
  if (opts === undefined) {
    const callId = newId();
    return { options: { callId, [ATTEMPT_LISTENER]: [listener] } as ListenedOptions, callId };
  }
  if (typeof opts !== "object" || opts === null) return { options: opts, callId: undefined };
  let copy: Record<PropertyKey, unknown>;
  try {
    copy = { ...opts };
    for (const k of KNOWN) if (!Object.hasOwn(copy, k) && k in opts) copy[k] = opts[k];
  } catch {
    return { options: UNREADABLE, callId: undefined };
  }
  const before = copy[ATTEMPT_LISTENER];
  copy[ATTEMPT_LISTENER] = Array.isArray(before) ? [...(before as unknown[]), listener] : [listener];
  if (copy.callId === undefined) copy.callId = newId();
  return { options: copy as ListenedOptions, callId: typeof copy.callId === "string" ? copy.callId : undefined };
}

/**
 * @internal Options without attempt listeners: for a wrapper that makes a call of its own with its
 * caller's options (the proxy's argument check), whose attempts are not the caller's.
 */
export function _withoutAttemptListener(opts: CallOptions): CallOptions {
  return Object.hasOwn(opts, ATTEMPT_LISTENER) ? ({ ...opts, [ATTEMPT_LISTENER]: undefined } as CallOptions) : opts;
}

/** Envelope → the gate call that answered it, for the calls that had listeners. */
const answered = new WeakMap<object, object>();

/** @internal Mark `result` as the envelope of gate call `call` (the gate does, for calls with listeners). */
export function _markAnswer(result: object, call: object): void {
  answered.set(result, call);
}

/** @internal The gate call that answered `result`, when it had listeners: the `call` its attempts were heard with. */
export function _answerOf(result: object): object | undefined {
  return answered.get(result);
}
