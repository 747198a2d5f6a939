/**
 * The attempts of one call, for the wrapper that made it. `instrument(gate)` (the call log,
 * OpenTelemetry) puts each call's attempts on its line or span; they came only from the gate's
 * `onAttempt` hook, which is fixed when `createGate` runs, so a wrapper of a gate it did not create
 * (a module's default export, the proxy's) recorded none. Through this seam a wrapper passes, in a
 * copy of the call's options, a listener that hears the attempts of the gate calls made with those
 * options. Nothing is registered on the gate, so nothing outlives the call.
 *
 * Options travel on through whatever stands between the wrapper and the gate, and such a gate may
 * make several gate calls with them (a fallback to a second gate). So the gate tells the listener
 * which gate call each attempt belongs to — an opaque token, one per gate call — and marks the
 * envelope it answers with that token and the call's `onCall` record ({@link _markAnswer}): the
 * wrapper records the gate call whose envelope it was handed, exactly, whatever async context its
 * hooks fired in. The gate also tells which listeners heard an event or a record
 * ({@link _heardBy}), so a recorder whose hooks are spread into the same gate does not record it a
 * second time, and tells the listener when a gate call begins, so the wrapper knows its gate hears
 * it and leaves what its hooks match by async context alone to other calls (a tool calling the gate
 * itself).
 *
 * The listeners travel as an array under a symbol key of the options (enumerable, so a wrapper in
 * between that copies the options with `{ ...opts }` keeps it). A gate that does not know the key
 * ignores it. Attempt events carry no payload: the same fields `onAttempt` receives.
 * @module
 */
import type { AttemptEvent } from "./execute.js";
import type { CallOptions } from "./gate.js";
import type { CallRecord } from "./hooks.js";

/** @internal The call options' key of the attempt listeners. */
export const ATTEMPT_LISTENER: unique symbol = Symbol.for("toolgate.attemptListener");

/**
 * @internal Hears one gate call made with the options that carry it. `call` is the same object for
 * the call's start and every attempt, and is what {@link _answerOf} gives for its envelope.
 */
export interface AttemptListener {
  /** The gate call began (before any of its hooks can fire): this gate hears the listener. */
  begin(call: object): void;
  /** One attempt of that gate call, after the gate's own `onAttempt`. */
  attempt(event: AttemptEvent, call: object): void;
}

/** @internal Call options that may carry attempt listeners. */
export interface ListenedOptions extends CallOptions {
  /** Each hears the gate call's start and every attempt, after the gate's `onAttempt`; what one throws goes to `onHookError`. */
  readonly [ATTEMPT_LISTENER]?: readonly AttemptListener[];
}

/** The options a gate reads, copied when they are inherited (a class's getters) rather than own. */
const KNOWN = ["callId", "idempotencyKey", "principal", "signal", "fromModel"] as const;

/** What a wrapper passes on when the caller's options could not be read: the gate refuses them, as it would have. */
const UNREADABLE: CallOptions = Object.freeze(
  Object.defineProperty({}, "callId", {
    enumerable: true,
    get(): never {
      throw new TypeError("the call options could not be read");
    },
  }),
);

/**
 * @internal The caller's options, copied (each property read once, here: own ones as `{ ...opts }`
 * copies them, then the known options it inherits), with `listener` added after any listeners they
 * carry (a wrapper inside another). Options that are not an object pass as they are (the gate
 * refuses them; no attempt runs), and options that cannot be read become options the gate refuses
 * as unreadable.
 */
export function _withAttemptListener(opts: CallOptions | undefined, listener: AttemptListener): CallOptions | undefined {
  if (opts === undefined) return { [ATTEMPT_LISTENER]: [listener] } as ListenedOptions;
  if (typeof opts !== "object" || opts === null) return opts;
  let copy: Record<PropertyKey, unknown>;
  try {
    copy = { ...opts };
    for (const k of KNOWN) if (!Object.hasOwn(copy, k) && k in opts) copy[k] = opts[k];
  } catch {
    return UNREADABLE;
  }
  const before = copy[ATTEMPT_LISTENER];
  copy[ATTEMPT_LISTENER] = Array.isArray(before) ? [...(before as unknown[]), listener] : [listener];
  return copy as ListenedOptions;
}

/**
 * @internal The attempt listeners `opts` already carries (a wrapper further out passed them), or
 * none; a key that cannot be read is none.
 */
export function _listenersIn(opts: CallOptions | undefined): readonly unknown[] {
  if (typeof opts !== "object" || opts === null) return [];
  try {
    const l: unknown = (opts as ListenedOptions)[ATTEMPT_LISTENER];
    return Array.isArray(l) ? (l as unknown[]) : [];
  } catch {
    return [];
  }
}

/**
 * @internal Options without attempt listeners: for a wrapper that makes a call of its own with its
 * caller's options (the proxy's argument check), whose attempts are not the caller's.
 */
export function _withoutAttemptListener(opts: CallOptions): CallOptions {
  return Object.hasOwn(opts, ATTEMPT_LISTENER) ? ({ ...opts, [ATTEMPT_LISTENER]: undefined } as CallOptions) : opts;
}

/** How a gate call with listeners answered: its token, and its `onCall` record when the gate has that hook. */
export interface Answer {
  readonly call: object;
  readonly record: CallRecord | undefined;
}

/** Envelope → the gate call that answered it, for the calls that had listeners. */
const answers = new WeakMap<object, Answer>();
/** Who hears an attempt event or `onCall` record: its gate call's listeners, and that gate call. */
export interface Heard {
  readonly listeners: readonly AttemptListener[];
  readonly call: object;
}

/** Attempt event or `onCall` record → who hears it. */
const heard = new WeakMap<object, Heard>();

/** @internal Mark `result` as the envelope of gate call `call` (the gate does, for calls with listeners). */
export function _markAnswer(result: object, call: object, record: CallRecord | undefined): void {
  answers.set(result, { call, record });
}

/** @internal How `result` was answered, when its gate call had listeners. */
export function _answerOf(result: object): Answer | undefined {
  return answers.get(result);
}

/** @internal Note that the `listeners` of gate call `call` hear `item` (an attempt event or a record the gate is about to hand its hooks). */
export function _noteHeard(item: object, listeners: readonly AttemptListener[], call: object): void {
  heard.set(item, { listeners, call });
}

/** @internal Who hears `item`, when its gate call had listeners. */
export function _heardBy(item: object): Heard | undefined {
  return heard.get(item);
}
