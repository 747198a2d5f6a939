/**
 * The machinery shared by the span recorder and the call log: gate hooks that correlate attempt
 * events with their call, and a gate wrapper that opens the call's scope before it starts (so a
 * span is the active context while the tool runs) and sees the arguments and the result (for
 * opt-in capture). A driver turns each finished call into a span or a line.
 * @module
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { CallRecord } from "../hooks.js";
import type { AttemptEvent } from "../execute.js";
import type { BreakerState } from "../policy/breaker.js";
import type { CallOptions, Gate } from "../gate.js";
import type { ToolFailure, ToolResult } from "../result.js";
import { RECORD_REFUSAL, _recordRefusal, type RefusalRecorder } from "../refusal.js";
import { _answerOf, _heardBy, _listenersIn, _withAttemptListener, type AttemptListener } from "../attempt-seam.js";
import { recordPaths } from "../issue-paths.js";
import type { ToolListing } from "../json-schema.js";
import { _checkRedactOptions, createRedactor, type RedactOptions, type Redactor } from "../redact.js";
import { checkKnownKeys } from "../known-keys.js";
import { ToolgateConfigError } from "../errors.js";
import { attemptSummary, memoRedactor, safeToolName, shownToolName, summarize, type AttemptSummary, type CallSummary, type SummaryContext, type SummaryExtras } from "./_summary.js";
import { captureArguments, captureResult, type CaptureOptions } from "./_capture.js";

/** Options shared by the OpenTelemetry recorder and the call log. */
export interface ObserverOptions {
  /** Opt-in capture of arguments and results (redacted); needs `instrument(gate)`. Default: nothing captured. */
  readonly capture?: CaptureOptions;
  /** Secret patterns, as for `createGate` (pass the same). Default: {@link DEFAULT_SECRET_PATTERNS}. */
  readonly redact?: RedactOptions;
  /** `gen_ai.tool.type` of every call. Default `"function"`. */
  readonly toolType?: string;
  /** Where a failure of the recorder itself goes (a sink or exporter that throws). Default: one process warning. */
  readonly onError?: (error: unknown) => void;
}

/** The hooks to spread into `createGate` options. */
export interface ObserverHooks {
  onCall(record: CallRecord): void;
  onAttempt(event: AttemptEvent): void;
  onBreakerChange(event: { readonly tool: string; readonly state: BreakerState }): void;
}

/** Hooks for `createGate`, and a wrapper for the gate they were given to. */
export interface GateObserver {
  /** Spread into `createGate({ ...observer.hooks })`. Alone they record every call after it finished. */
  readonly hooks: ObserverHooks;
  /**
   * Wrap the gate: each call's scope opens before it starts (spans become the active context for
   * the tool's own spans) and opt-in capture sees the arguments and the result. The attempts of
   * the calls made through it are recorded even when `hooks` were not spread into the gate (each
   * call passes a gate from `createGate` a listener for them). Returns a gate with the same methods.
   */
  instrument<G extends Gate>(gate: G): G;
}

/** The scope a driver opened for one call. */
export interface CallStart<H> {
  readonly handle: H;
  run<R>(fn: () => R): R;
}

/** What turns finished calls into output. */
export interface ObserverDriver<H> {
  /** Open a call's scope (wrapper only); `tool` is the sanitized tool name. */
  start?(tool: string, startTime: number): CallStart<H>;
  /** One finished call; `handle` is what `start` returned, when it ran. */
  finish(summary: CallSummary, handle: H | undefined): void;
  /** A breaker changed state. */
  breaker?(tool: string, state: BreakerState, time: number): void;
  /** The tools of an instrumented gate. */
  attach?(listings: readonly ToolListing[]): void;
}

interface Pending {
  readonly name: unknown;
  /** The gate has a tool by this name. Otherwise the record shows a sanitized name, and nothing ran inside this call. */
  readonly known: boolean;
  callId: string | undefined;
  /** Attempts heard through the hooks, matched by the call's async context (a gate that does not hear the listener). */
  readonly attempts: AttemptSummary[];
  /**
   * Attempts heard through the listener passed with the call (src/attempt-seam.ts), per gate call:
   * the options may reach more than one (a fallback gate), and the one whose envelope comes back is
   * the call's line; the others go with their records (`heardRecords`) on lines of their own.
   */
  heard: Map<object, AttemptSummary[]> | undefined;
  /**
   * A gate call began that hears this call's listener: the gate marks its envelope and notes what
   * the listener hears, so the hooks leave this call to the listener, and an event or record they
   * match by context alone is another call's (a tool calling the gate itself).
   */
  heardByGate: boolean;
  /**
   * The hooks' records of gate calls that heard this call's listener, by gate call: the one that
   * answered is the line; the others (a gate in between that retried, or answered on its own after
   * a gate call) are lines of their own, written when the call ends.
   */
  heardRecords: Map<object, CallRecord> | undefined;
  /** The wrapped call has answered: nothing is matched to it any more. */
  ended: boolean;
  record: CallRecord | undefined;
  /** Its keys in the observer's `inflight` map (the call id the caller gave, the one the gate used). */
  keys: string[] | undefined;
}

const MAX_PENDING = 10_000;
let warned = false;

/** Default `onError`: one process warning per process. */
export function _warnOnce(error: unknown): void {
  if (warned) return;
  warned = true;
  const why = error instanceof Error ? error.name : typeof error;
  process.emitWarning(`toolgate: a telemetry recorder failed (${why}); the call's result is unaffected`, { code: "TOOLGATE_TELEMETRY" });
}

/**
 * @internal How a recorder tells `onError` (default {@link _warnOnce}): an `onError` that throws
 * is not the call's failure (a recorder never breaks a call).
 */
export function _reporter(onError: ((error: unknown) => void) | undefined): (error: unknown) => void {
  const tell = onError ?? _warnOnce;
  return (e) => {
    try {
      tell(e);
    } catch {
      // nothing more to tell
    }
  };
}

function now(): number {
  return performance.timeOrigin + performance.now();
}

/** The options every recorder takes (see {@link ObserverOptions}). */
const OBSERVER_KEYS = ["capture", "redact", "toolType", "onError"] as const;

/**
 * @internal Check a recorder's options before anything is built: an object, only known keys
 * (`own`: the recorder's besides {@link OBSERVER_KEYS}; a misspelt one is named, with the key it
 * likely meant), `capture` and `redact` as documented. Throws `E_TELEMETRY_OPTIONS`.
 */
export function _checkObserverOptions(o: unknown, own: readonly string[], who: string): void {
  const fail = (m: string): never => {
    throw new ToolgateConfigError("E_TELEMETRY_OPTIONS", `${who}: ${m}`);
  };
  if (typeof o !== "object" || o === null || Array.isArray(o)) fail("options must be an object");
  const opts = o as Record<string, unknown>;
  checkKnownKeys(opts, [...OBSERVER_KEYS, ...own], "", fail);
  const capture = opts.capture;
  if (capture !== undefined) {
    if (typeof capture !== "object" || capture === null || Array.isArray(capture)) fail("capture must be an object");
    checkKnownKeys(capture as object, ["arguments", "result", "maxLength"], "capture.", fail);
    for (const k of ["arguments", "result"] as const) {
      const v = (capture as Record<string, unknown>)[k];
      if (v !== undefined && typeof v !== "boolean") fail(`capture.${k} must be a boolean`);
    }
    const maxLength = (capture as Record<string, unknown>).maxLength;
    if (maxLength !== undefined && (!Number.isInteger(maxLength) || (maxLength as number) < 16)) fail("capture.maxLength must be an integer ≥ 16 (characters)");
  }
  if (opts.redact !== undefined) _checkRedactOptions(opts.redact, fail);
  if (opts.toolType !== undefined && (typeof opts.toolType !== "string" || opts.toolType.length === 0)) fail("toolType must be a non-empty string");
  if (opts.onError !== undefined && typeof opts.onError !== "function") fail("onError must be a function");
}

/** Build the hooks and the wrapper around one driver, from options {@link _checkObserverOptions} has checked. */
export function createObserver<H>(driver: ObserverDriver<H>, options: ObserverOptions = {}): GateObserver {
  const redact: Redactor = createRedactor(options.redact);
  const ctx: SummaryContext = { redact, stable: memoRedactor(redact), toolType: options.toolType ?? "function" };
  const report = _reporter(options.onError);
  const capture = options.capture ?? {};
  const maxLength = capture.maxLength ?? 4_096;
  const store = new AsyncLocalStorage<Pending>();
  const waiting = new Map<string, AttemptSummary[]>();

  const emit = (summary: CallSummary, handle: H | undefined): void => {
    try {
      driver.finish(summary, handle);
    } catch (e) {
      report(e);
    }
  };
  const mine = (e: Pending | undefined, tool: string, callId: string): e is Pending =>
    e !== undefined && !e.ended && e.record === undefined && (e.name === tool || !e.known) && (e.callId === undefined || e.callId === callId);
  /** The listeners this recorder's wrappers passed with their calls (src/attempt-seam.ts), and their calls. */
  const ownListeners = new WeakMap<AttemptListener, Pending>();
  /** True while one of this recorder's wrappers hands a refusal to the wrappers inside it. */
  let refusing = false;
  /**
   * The wrapped call whose listener hears an event or record, and the gate call it belongs to: that
   * wrapper records it (exactly, from what its listener heard), so the hooks must not record it
   * again, whatever async context they fire in (an abort event, the shared deadline timer).
   */
  const heardHere = (item: object): { entry: Pending; call: object } | undefined => {
    const h = _heardBy(item);
    if (h === undefined) return undefined;
    for (const l of h.listeners) {
      const entry = ownListeners.get(l);
      if (entry !== undefined) return { entry, call: h.call };
    }
    return undefined;
  };

  /** The records of gate calls the call's listener heard, except the answer's: lines of their own. */
  const writeHeard = (e: Pending, answered: object | undefined): void => {
    for (const [call, r] of e.heardRecords ?? []) if (call !== answered) emit(summarize(r, e.heard?.get(call) ?? [], ctx), undefined);
  };

  /**
   * Observed calls by tool and call id, while they run: what the hooks hear outside any call's
   * context (a timeout, a cancel: the gate goes on from work it shares between calls) is matched
   * here to its call, when one call alone has that id.
   */
  const inflight = new Map<string, Pending | null>();
  const keyOf = (tool: unknown, callId: string): string => `${String(tool)}\u0000${callId}`;
  const register = (e: Pending, callId: string | undefined): void => {
    if (callId === undefined || e.ended) return;
    const k = keyOf(e.name, callId);
    const other = inflight.get(k);
    if (other === e) return;
    if (other !== undefined) inflight.set(k, null); // two calls with one id: neither is matched this way
    else if (inflight.size < MAX_PENDING) inflight.set(k, e);
    (e.keys ??= []).push(k);
  };
  const unregister = (e: Pending): void => {
    for (const k of e.keys ?? []) {
      const other = inflight.get(k);
      if (other === e || other === null) inflight.delete(k);
    }
  };
  /** The observed call this event or record belongs to, found by its tool and call id (see {@link inflight}). */
  const owner = (tool: string, callId: string): Pending | undefined => {
    const e = inflight.get(keyOf(tool, callId));
    return e !== undefined && e !== null && !e.ended && !e.heardByGate && e.record === undefined ? e : undefined;
  };

  /** The attempts the hooks heard for `r`'s call outside any observed call, taken off the waiting list. */
  const waitingFor = (r: CallRecord): AttemptSummary[] => {
    const key = `${r.tool}\u0000${r.callId}`;
    const attempts = waiting.get(key) ?? [];
    waiting.delete(key);
    return attempts;
  };

  const hooks: ObserverHooks = {
    onAttempt(ev) {
      if (heardHere(ev)) return;
      const a = attemptSummary(ev, now());
      const e = store.getStore();
      if (mine(e, ev.tool, ev.callId) && !e.heardByGate) {
        e.callId = ev.callId;
        register(e, ev.callId);
        e.attempts.push(a);
        return;
      }
      const o = owner(ev.tool, ev.callId);
      if (o !== undefined) {
        o.attempts.push(a);
        return;
      }
      const key = `${ev.tool}\u0000${ev.callId}`;
      const list = waiting.get(key);
      if (list !== undefined) {
        if (list.length < 16) list.push(a);
        return;
      }
      if (waiting.size >= MAX_PENDING) waiting.delete(waiting.keys().next().value as string);
      waiting.set(key, [a]);
    },
    onCall(r) {
      const h = heardHere(r);
      if (h !== undefined) {
        // Kept for the wrapper; a gate call that ends after the wrapped call did is written now.
        if (!h.entry.ended) (h.entry.heardRecords ??= new Map()).set(h.call, r);
        else emit(summarize(r, h.entry.heard?.get(h.call) ?? [], ctx), undefined);
        return;
      }
      const e = store.getStore();
      if (mine(e, r.tool, r.callId) && !e.heardByGate) {
        e.record = r;
        return;
      }
      const o = owner(r.tool, r.callId);
      if (o !== undefined) {
        o.record = r;
        return;
      }
      emit(summarize(r, waitingFor(r), ctx), undefined);
    },
    onBreakerChange(ev) {
      try {
        driver.breaker?.(safeToolName(ev.tool, ctx.stable), ev.state, now());
      } catch (e) {
        report(e);
      }
    },
  };

  const instrument = <G extends Gate>(gate: G): G => {
    let listings = new Map(gate.list().map((l) => [l.name, l]));
    driver.attach?.([...listings.values()]);
    // A gate's tools can change (a proxy whose upstream changed): look again on a miss.
    const listingOf = (tool: string): ToolListing | undefined => {
      if (!listings.has(tool)) listings = new Map(gate.list().map((l) => [l.name, l]));
      return listings.get(tool);
    };
    /** One observed call: `run` is the gate's call, or the recording of a refusal made in front of it. */
    const observe = async (name: string, args: unknown, run: (entry: Pending) => Promise<ToolResult>, givenCallId?: string): Promise<ToolResult> => {
      const startTime = now();
      const entry: Pending = { name, known: typeof name === "string" && gate.tool(name) !== undefined, callId: undefined, attempts: [], heard: undefined, heardByGate: false, heardRecords: undefined, ended: false, record: undefined, keys: undefined };
      register(entry, givenCallId);
      let started: CallStart<H> | undefined;
      try {
        started = driver.start?.(shownToolName(name, entry.known, ctx.stable), startTime);
      } catch (e) {
        report(e);
      }
      const scoped = (): Promise<ToolResult> => store.run(entry, run, entry);
      let result: ToolResult;
      try {
        result = await (started === undefined ? scoped() : started.run(scoped));
      } catch (error) {
        // gate.call never throws; if a foreign gate does, the span still ends.
        entry.ended = true;
        unregister(entry);
        writeHeard(entry, undefined);
        const listing = typeof name === "string" ? listingOf(name) : undefined;
        emit(summarize(thrownRecord(name, listing?.version ?? "", entry.callId ?? givenCallId ?? "", startTime, now()), entry.attempts, ctx), started?.handle);
        throw error;
      }
      try {
        // A gate call with this wrapper's listener marked its envelope: its own record and attempts,
        // exactly. Otherwise what the hooks matched by context, or what the envelope says.
        entry.ended = true;
        unregister(entry);
        const answer = _answerOf(result);
        writeHeard(entry, answer?.call);
        // With a marked answer, a record the hooks matched by context is another gate call's (made
        // before this one's began, e.g. a check by a gate in between): a line of its own.
        if (answer !== undefined && entry.record !== undefined) emit(summarize(entry.record, entry.attempts, ctx), undefined);
        const record = (answer !== undefined ? answer.record : entry.record) ?? recordFromResult(gate, name, result, startTime, listingOf);
        const attempts = answer !== undefined ? (entry.heard?.get(answer.call) ?? []) : entry.attempts;
        const extras: { -readonly [K in keyof SummaryExtras]: SummaryExtras[K] } = {};
        if (!result.ok && result.retryAfterMs !== undefined) extras.retryAfterMs = result.retryAfterMs;
        // Both conditions imply a tool the gate has, so a lookup never runs for invented names.
        if (capture.arguments === true && args !== NO_ARGS && inputAccepted(record)) extras.arguments = captureArguments(args, listingOf(record.tool), redact, maxLength);
        if (capture.result === true && result.ok) extras.result = captureResult(result.data, listingOf(record.tool), redact, maxLength);
        emit(summarize(record, attempts, ctx, extras), started?.handle);
      } catch (e) {
        report(e);
      }
      return result;
    };
    // The call's attempts are heard with its options (src/attempt-seam.ts), so they are recorded even
    // when this observer's hooks were not spread into the gate (a module's ready gate; the proxy's).
    const call = (name: string, args: unknown, opts?: CallOptions): Promise<ToolResult> => {
      // This recorder again, inside one of its own wrappers (directly or through others): the
      // outer wrapper records the call, so this one passes it on unrecorded (one line, one span).
      if (_listenersIn(opts).some((l) => ownListeners.has(l as AttemptListener))) return gate.call(name, args, opts);
      // The caller's options are read once, into the copy that carries the listener; the call id the
      // hooks may need to match it by (`inflight`) is read from that copy.
      let observed: Pending | undefined;
      const listener: AttemptListener = {
        begin: () => void (observed!.heardByGate = true),
        attempt: (ev, gateCall) => hear(observed!, ev, gateCall),
      };
      const forwarded = _withAttemptListener(opts, listener);
      return observe(
        name,
        args,
        (entry) => {
          observed = entry;
          ownListeners.set(listener, entry);
          return gate.call(name, args, forwarded);
        },
        givenCallId(forwarded),
      );
    };
    // A refusal made in front of the gate (src/refusal.ts) is a call too: one line or span, arguments
    // never captured. Passed on synchronously through the wrappers inside: one of this recorder's
    // own there passes it on unrecorded, as `call` does.
    const refuse: RefusalRecorder = (failure) => {
      if (refusing) return _recordRefusal(gate, failure);
      refusing = true;
      try {
        return observe(failure.meta.tool, NO_ARGS, () => _recordRefusal(gate, failure)) as Promise<ToolFailure>;
      } finally {
        refusing = false;
      }
    };
    return { ...gate, call, [RECORD_REFUSAL]: refuse } as G;
  };

  return { hooks, instrument };
}

/** The arguments of a refusal recorded in front of the gate: never captured. */
const NO_ARGS: unique symbol = Symbol("no arguments");

/** The input passed hardening and validation (only then are arguments safe to walk and worth keeping). */
function inputAccepted(r: CallRecord): boolean {
  if (r.version === "" || r.code === "UNKNOWN_TOOL" || r.code === "INVALID_INPUT") return false;
  return !(r.code === "FAILED" && r.attempts === 0);
}

/** When the gate's hooks were not wired, the envelope says nearly as much as the record. */
function recordFromResult(gate: Gate, name: string, r: ToolResult, startedAt: number, listingOf: (tool: string) => ToolListing | undefined): CallRecord {
  const m = r.meta;
  const write = gate.tool(name)?.effect === "write";
  return {
    tool: m.tool,
    version: m.version,
    callId: m.callId,
    ok: r.ok,
    code: r.ok ? "OK" : r.code,
    attempts: m.attempts,
    durationMs: m.durationMs,
    effect: r.ok ? (write ? "applied" : "none") : r.effect,
    retryable: r.ok ? false : r.retryable,
    replayed: m.replayed === true,
    startedAt,
    ...(!r.ok && r.issues !== undefined ? { issuePaths: recordPaths(listingOf(m.tool), r) } : {}),
  };
}

/** An attempt heard through the listener passed with the call, filed under its gate call. */
function hear(e: Pending, ev: AttemptEvent, gateCall: object): void {
  e.heard ??= new Map();
  let list = e.heard.get(gateCall);
  if (list === undefined) {
    if (e.heard.size >= MAX_GATE_CALLS) return;
    e.heard.set(gateCall, (list = []));
  }
  if (list.length < MAX_HEARD) list.push(attemptSummary(ev, now()));
}

/** At most this many attempts are kept per gate call (the gate makes at most 5). */
const MAX_HEARD = 16;
/** Gate calls heard per observed call (a wrapper in between may make several with the options). */
const MAX_GATE_CALLS = 64;

/** The record of a call whose (foreign) gate threw: the version the gate lists and the call id known, if any. */
function thrownRecord(name: unknown, version: string, callId: string, startedAt: number, end: number): CallRecord {
  return {
    tool: typeof name === "string" ? name : "",
    version,
    callId,
    ok: false,
    code: "FAILED",
    attempts: 0,
    durationMs: end - startedAt,
    effect: "unknown",
    retryable: false,
    replayed: false,
    startedAt,
  };
}

/** The call id the caller gave, read once and safely (options may be anything). */
function givenCallId(opts: unknown): string | undefined {
  try {
    const id = (opts as { callId?: unknown } | undefined)?.callId;
    return typeof id === "string" ? id : undefined;
  } catch {
    return undefined;
  }
}
