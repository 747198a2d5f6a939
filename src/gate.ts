/**
 * The gate: one tool call, top to bottom. Each step lives in its own module; this file only
 * composes them, in the order the README's pipeline describes.
 * @module
 */
import { AsyncResource } from "node:async_hooks";
import type { StandardSchemaV1 } from "@standard-schema/spec";
import { newCallId } from "./call-id.js";
import { _fail, type CallMeta, type Failure, type ToolFailure, type ToolResult } from "./result.js";
import type { AnyTool, OutputOf, Principal } from "./tool.js";
import { resolveGate, type GateOptions, type ResolvedGate } from "./gate-options.js";
import { authorizeAndApprove, DecisionWait } from "./decision.js";
import { hardenParsed, hardenValue, parseText, type Hardened } from "./harden.js";
import { splitMeta, type SplitMeta } from "./meta.js";
import { NO } from "./fast-path.js";
import { notJsonData } from "./json-data.js";
import { toSafeIssues, issue, MAX_ISSUE_PATH } from "./issues.js";
import { cancelledBefore, executeWithPolicy, failureFor, firstAttemptEnded, type AttemptEvent, type ExecEnv, type ExecOutcome, type Execution, type ToolRuntime } from "./execute.js";
import type { AttemptResult, CallScope } from "./attempt.js";
import { claimCall, PRINCIPAL_ID, settleCall, type ClaimedCall, type GoAhead, type StepDone } from "./idempotency.js";
import { classifyError } from "./policy/classify.js";
import { isPromiseLike } from "./standard.js";
import { isToolError } from "./errors.js";
import { CANCELLED, TIMED_OUT, untilSettled } from "./policy/caller-signal.js";
import { wallClockAt } from "./wall-clock.js";
import { _rememberPaths, recordPaths } from "./issue-paths.js";
import { _redactThenCut, type Redactor } from "./redact.js";
import { RECORD_REFUSAL, type RefusalRecorder } from "./refusal.js";
import { ATTEMPT_LISTENER, _listenersIn, _markAnswer, _noteHeard, type AttemptListener, type ListenedOptions } from "./attempt-seam.js";
import { safeHook, type CallRecord } from "./hooks.js";
import type { ToolListing } from "./json-schema.js";

/** Per-call options. */
export interface CallOptions {
  /** Correlates the call (e.g. the provider's tool-call id or the JSON-RPC id). Default: a generated unique id. */
  readonly callId?: string | undefined;
  /** Makes a write safe to repeat (with a ledger). */
  readonly idempotencyKey?: string | undefined;
  /** The authenticated caller, for `authorize` and scoping. */
  readonly principal?: Principal | undefined;
  /** Cancels the call; the tool's `ctx.signal` aborts with it. */
  readonly signal?: AbortSignal | undefined;
  /**
   * The arguments are the model's own (a host loop passing a proposed call): a top-level `_meta` in
   * them is refused (INVALID_INPUT, issue `reserved_key`) instead of becoming `ctx.meta`, so the
   * model cannot write the metadata `authorize` and the tool read as the host's. The adapters set
   * it. Default `false`: `_meta` is split off and handed to the tool.
   */
  readonly fromModel?: boolean | undefined;
}

/** The data type of a successful call to tool `N` of `T`. */
export type DataOf<T extends readonly AnyTool[], N extends string> = [Extract<T[number], { name: N }>] extends [never]
  ? unknown
  : OutputOf<Extract<T[number], { name: N }>>;

/** A gate: call tools by name with untrusted arguments, list them with their contracts. */
export interface Gate<T extends readonly AnyTool[] = readonly AnyTool[]> {
  /**
   * Run one call. `args` is the model's JSON text (a string is always parsed as JSON) or a value.
   * Never throws: every outcome is a {@link ToolResult}.
   */
  call<N extends string>(name: N, args: unknown, opts?: CallOptions): Promise<ToolResult<DataOf<T, N>>>;
  /** Each tool's name, version, description, effect and JSON Schemas (input side for arguments); frozen, schemas included. */
  list(): readonly ToolListing[];
  /** Look up a tool by name. */
  tool(name: string): AnyTool | undefined;
}

/** @internal The UNKNOWN_TOOL message, for a refusal made in front of the gate (the proxy's) to say the same. */
export const _UNKNOWN_TOOL_MESSAGE = "Unknown tool; pick one of the listed tools";

const MSG = {
  unknownTool: _UNKNOWN_TOOL_MESSAGE,
  invalidJson: "Arguments are not valid JSON",
  limits: "Arguments break the gate's payload rules; fix the listed fields",
  invalidInput: "Arguments do not match the tool's input schema; fix the listed fields",
  validatorThrew: "Arguments could not be validated",
  invalidOutput: "The tool returned a result that breaks its output contract",
  checkFailed: "The tool's business check failed",
  callOptions: "Invalid call options",
  cancelledAfter: "The call was cancelled while its result was being checked; the tool had already run",
  checkTimeout: "The tool's result could not be checked in time; the tool had already run",
  replayWithheld: "This idempotency key's call succeeded, but its stored result cannot be replayed in full (secret fields were withheld)",
  replayUnstorable: "This idempotency key's call succeeded, but its result could not be stored, so it cannot be replayed",
  replayOtherVersion: "This idempotency key's call succeeded under another tool version, and its stored result does not match the current output contract",
  internal: "The call failed inside the gate",
} as const;

type Done = StepDone;

/**
 * Create a gate. Checks the configuration and throws {@link ToolgateConfigError} on misuse;
 * after that, nothing it does throws.
 * @example
 * const gate = createGate({ tools: [getOrder, createRefund] });
 * const r = await gate.call("get_order", '{"customerId":"c_1"}');
 */
export function createGate<const T extends readonly AnyTool[]>(options: GateOptions<T>): Gate<T> {
  const g = resolveGate(options);
  const gate: Gate<T> & { [RECORD_REFUSAL]: RefusalRecorder } = {
    call: (name, args, opts) => callTool(g, name, args, opts) as Promise<ToolResult<never>>,
    list: () => g.listings,
    tool: (name) => g.runtimes.get(name)?.tool,
    [RECORD_REFUSAL]: (failure) => Promise.resolve(recordRefusal(g, failure)),
  };
  return gate;
}

/**
 * A refusal decided in front of the gate (src/refusal.ts): answered and recorded as a call that
 * ended before anything ran. The tool's name and version are the refuser's (a proxy refuses tools
 * the gate does not serve); the duration is the gate's part, about zero.
 */
function recordRefusal(g: ResolvedGate, f: ToolFailure): ToolFailure {
  try {
    const { ok: _ok, meta, ...failure } = f;
    const c = new Call(g, g.runtimes.get(meta.tool)?.tool, meta.tool, meta.callId, performance.now(), meta.version);
    return finish(c, { ok: false, failure }, 0) as ToolFailure; // a failure in, a failure out
  } catch {
    return f;
  }
}

/**
 * A call in progress: what the envelope needs, whichever step ends the call; once it goes ahead,
 * also the execution the policy runs and reports to (src/execute.ts), so the steps after the
 * tool answered continue from this one object instead of a closure per step.
 */
class Call implements Execution {
  rt: ToolRuntime = undefined as never;
  input: unknown = undefined;
  /** The claim the call goes ahead under: the scope its attempts share. */
  claim: GoAhead = undefined as never;
  started = 0;
  resolve: (r: ToolResult | PromiseLike<ToolResult>) => void = ignore;
  constructor(
    readonly g: ResolvedGate,
    readonly tool: AnyTool | undefined,
    /** The name as shown in the envelope and the record (never an unbounded echo of the caller's). */
    readonly name: string,
    readonly callId: string,
    /** `performance.now()` when the call began. */
    readonly t0: number,
    /** The version to report when it is not the tool's own (a refusal recorded for a proxy, a replay). */
    readonly version?: string,
  ) {}
  get scope(): CallScope {
    return this.claim;
  }
  get env(): ExecEnv {
    return this.listened ?? this.g;
  }
  /** The gate's execution dependencies with the caller's attempt listeners (src/attempt-seam.ts), when it gave some. */
  listened: ListenedEnv | undefined = undefined;
  attemptEnded(r: AttemptResult): void {
    const rt = this.rt;
    // The common case with the steps below collapsed, in their order: the first attempt answered
    // (firstAttemptEnded), no onAttempt hook and no business check, the compiled output check
    // accepts the value (verify), and no ledger claim to settle (settled). Anything else, or a
    // value the compiled check leaves to the schema, takes those steps.
    if (r.kind !== "value" || this.g.onAttempt !== undefined || this.listened !== undefined || rt.fastOutput === undefined || rt.tool.check !== undefined || this.claim.ticket !== undefined) {
      // A timeout or a cancel arrives from work shared between calls (the deadline timer, a
      // signal's listener): a listened call goes on (its retry, its hooks) in its own context.
      const context = this.listened?.context;
      if (context !== undefined && (r.kind === "timeout" || r.kind === "cancelled")) return context.runInAsyncScope(firstAttemptEnded, undefined, this, r);
      return firstAttemptEnded(this, r);
    }
    try {
      rt.breaker?.success(0); // the fast path runs only while the circuit is closed
      rt.inFlight--;
      const data = rt.fastOutput(r.value);
      this.resolve(data !== NO ? finish(this, { ok: true, data }, 1) : checked(this, rt, this.input, this.claim, { ok: true, value: r.value, attempts: 1 }, true));
    } catch {
      this.resolve(internalError(this)()); // never: each step guards its own hooks
    }
  }
  executed(exec: ExecOutcome): void {
    this.resolve(checked(this, this.rt, this.input, this.claim, exec));
  }
}

const ignore = (): void => {};

/** Captures a new promise's resolve without a closure per call (see {@link executed}). */
let captured: (r: ToolResult | PromiseLike<ToolResult>) => void = ignore;
function capture(resolve: (r: ToolResult | PromiseLike<ToolResult>) => void): void {
  captured = resolve;
}

const TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const NO_META: Readonly<Record<string, unknown>> = Object.freeze({});

/** A call's execution dependencies when its caller listens to its attempts, and the call's token. */
interface ListenedEnv extends ExecEnv {
  /** This gate call, as its listeners hear it and as its envelope is marked (src/attempt-seam.ts). */
  readonly token: object;
  /** The caller's listeners: each event and the record are noted as heard by them. */
  readonly listeners: readonly AttemptListener[];
  /**
   * The async context the call began in, which the wrapper made its own (an OpenTelemetry span):
   * where the call goes on after a timeout or a cancel (./policy/shared-context.ts), so a retry's
   * spans are children of the call's span, not of whichever call armed the deadline timer.
   */
  readonly context: AsyncResource;
}

/**
 * The caller's attempt listeners (src/attempt-seam.ts), when its options carry some: each hears
 * every attempt after `onAttempt`, guarded as a hook is (one that throws stops none of the others).
 */
function listenTo(c: Call, opts: ListenedOptions): void {
  const listeners = opts[ATTEMPT_LISTENER];
  if (listeners === undefined) return;
  const g = c.g;
  const token = {};
  const own = g.onAttempt;
  for (const l of listeners) {
    try {
      l.begin(token);
    } catch (e) {
      g.onHookError("onAttempt", e);
    }
  }
  const heard = listeners.map((l) => safeHook("onAttempt", (e: AttemptEvent) => l.attempt(e, token), g.onHookError)!);
  const onAttempt = (e: AttemptEvent): void => {
    _noteHeard(e, listeners, token);
    own?.(e);
    for (const h of heard) h(e);
  };
  const context = new AsyncResource("toolgate.call", { requireManualDestroy: true });
  c.listened = { budget: g.budget, redact: g.redact, random: g.random, onAttempt, token, listeners, context };
}

/** Resolve the tool and the call's identity; everything after this is the async pipeline. */
function callTool(g: ResolvedGate, name: string, args: unknown, given: CallOptions | undefined): Promise<ToolResult> {
  const t0 = performance.now();
  try {
    const rt = typeof name === "string" ? g.runtimes.get(name) : undefined;
    const shown = rt !== undefined ? rt.tool.name : typeof name === "string" && TOOL_NAME.test(name) ? g.redact(name) : "<invalid>";
    const opts = given === undefined ? undefined : readOptions(given);
    if (opts instanceof BadOption) return refusedAtOnce(new Call(g, rt?.tool, shown, newCallId(), t0), "FAILED", MSG.callOptions, opts.issue);
    const c = new Call(g, rt?.tool, shown, opts?.callId ?? newCallId(), t0);
    if (rt === undefined) return refusedAtOnce(c, "UNKNOWN_TOOL", MSG.unknownTool, undefined);
    if (opts !== undefined) listenTo(c, opts);
    return pipeline(c, rt, args, opts);
  } catch {
    // never: every read of the caller's values is guarded; but gate.call must not throw
    return refusedAtOnce(new Call(g, undefined, "<invalid>", newCallId(), t0), "FAILED", MSG.internal, undefined);
  }
}

/** A call refused before its pipeline began (kept out of `callTool`, whose common case stays small). */
function refusedAtOnce(c: Call, code: "FAILED" | "UNKNOWN_TOOL", message: string, bad: ReturnType<typeof issue> | undefined): Promise<ToolResult> {
  return Promise.resolve(refuse(c, _fail(code, message, false, "none", bad === undefined ? undefined : { issues: [bad] })));
}

/*
 * The steps of one call, top to bottom. Each step runs synchronously when it can and hands the
 * call to the next; a step that has to wait (an async validator or check, authorization, the
 * ledger, the tool itself) continues from its promise. No step throws: a bug inside one ends the
 * call as FAILED instead of rejecting the caller's promise.
 */
function pipeline(call: Call, rt: ToolRuntime, args: unknown, opts: ReadOptions | undefined): Promise<ToolResult> {
  const g = call.g;
  try {
    // 0. JSON text is scanned (duplicate keys, depth) and parsed first. Then the compiled fast path
    //    (src/fast-path.ts): for a value it certainly accepts, it does steps 1–3 in one pass and
    //    returns what they would; for anything else it says NO and they run.
    let value = args;
    if (typeof args === "string") {
      const parsed = parseText(args, g.limits);
      if (!parsed.ok) return Promise.resolve(refuse(call, hardeningFailure(parsed, g.redact)));
      value = parsed.value;
    }
    const fast = rt.fastInput === undefined ? NO : rt.fastInput(value);
    if (fast !== NO) return asPromise(admitted(call, rt, fast, NO_META, opts, call.t0));
    return validatedInput(call, rt, args, value, opts);
  } catch {
    return Promise.resolve(internalError(call)());
  }
}

/** 1–3 for a payload the fast path left to them. `value`: the payload (JSON text already parsed). */
function validatedInput(call: Call, rt: ToolRuntime, args: unknown, value: unknown, opts: ReadOptions | undefined): Promise<ToolResult> {
  const g = call.g;
  try {
    // 1. Harden the payload (size, depth, keys, plain data); a caller's value is copied.
    const hardened = typeof args === "string" ? hardenParsed(value, g.limits) : hardenValue(value, g.limits);
    if (!hardened.ok) return Promise.resolve(refuse(call, hardeningFailure(hardened, g.redact)));

    // 2. Split the reserved `_meta` envelope.
    const split = splitMeta(hardened.value, opts?.fromModel === true);
    if (!split.ok) return Promise.resolve(refuse(call, _fail("INVALID_INPUT", MSG.invalidInput, false, "none", { issues: [split.issue] })));

    // 3. Validate input (continued in `validated`).
    const v = validate(rt.tool.input, split.input);
    if (isPromiseLike(v)) {
      return untilSettled(v, opts?.signal).then((r) => (r === CANCELLED ? refuse(call, cancelledBefore()) : validated(call, rt, split, r, opts, undefined)), internalError(call));
    }
    return asPromise(validated(call, rt, split, v, opts, call.t0));
  } catch {
    return Promise.resolve(internalError(call)());
  }
}

/**
 * 3b. Refuse invalid input and keys the advertised schema does not allow. `now` is the call's
 * clock reading while no step has waited: the first attempt's deadline counts from it.
 */
function validated(
  call: Call,
  rt: ToolRuntime,
  split: SplitMeta & { ok: true },
  v: StandardSchemaV1.Result<unknown> | "threw",
  opts: CallOptions | undefined,
  now: number | undefined,
): ToolResult | Promise<ToolResult> {
  const g = call.g;
  try {
    if (v === "threw") {
      return refuse(call, _fail("INVALID_INPUT", MSG.validatorThrew, false, "none", { issues: [issue("", "validator_error", MSG.validatorThrew)] }));
    }
    if (v.issues !== undefined) {
      return refuse(call, _fail("INVALID_INPUT", MSG.invalidInput, false, "none", { issues: toSafeIssues(v.issues, split.input, g.redact) }));
    }
    const input = v.value;
    if (rt.unknownKeys !== undefined) {
      const unknown = rt.unknownKeys(split.input, g.redact, input); // the validated value: which keys a union kept
      if (unknown.length > 0) return refuse(call, _fail("INVALID_INPUT", MSG.invalidInput, false, "none", { issues: unknown }));
    }
    return admitted(call, rt, input, split.meta, opts, now);
  } catch {
    return internalError(call)();
  }
}

/** 4. Authorize, then ask for approval when the tool requires it: both before any effect. */
function admitted(
  call: Call,
  rt: ToolRuntime,
  input: unknown,
  meta: Readonly<Record<string, unknown>>,
  opts: CallOptions | undefined,
  now: number | undefined,
): ToolResult | Promise<ToolResult> {
  const tool = rt.tool;
  if (call.g.authorize !== undefined || (tool.approval !== undefined && tool.approval !== false)) return decided(call, rt, input, meta, opts);
  return claimed(call, rt, input, meta, opts, now);
}

/** 4b. Wait for `authorize` and the approval, then go on to the claim. */
function decided(call: Call, rt: ToolRuntime, input: unknown, meta: Readonly<Record<string, unknown>>, opts: CallOptions | undefined): ToolResult | Promise<ToolResult> {
  const tool = rt.tool;
  try {
    const signal = opts?.signal;
    const wait = new DecisionWait(tool.name, tool.version, tool.effect, call.callId, opts?.principal, input, meta, signal);
    if (signal?.aborted === true) return refuse(call, cancelledBefore()); // ask no one for a cancelled call
    // A caller's cancel ends the wait for a decision there (a person may never answer an approval):
    // each hook's answer is raced against the caller's signal (src/decision.ts `within`).
    return authorizeAndApprove(call.g, tool, wait).then(
      (refused) => (refused !== undefined ? refuse(call, refused) : claimed(call, rt, input, meta, opts, undefined)),
      internalError(call),
    );
  } catch {
    return internalError(call)();
  }
}

/** 5. Claim the idempotency key (writes, with a ledger): replay, CONFLICT, or go ahead. */
function claimed(
  call: Call,
  rt: ToolRuntime,
  input: unknown,
  meta: Readonly<Record<string, unknown>>,
  opts: CallOptions | undefined,
  now: number | undefined,
): ToolResult | Promise<ToolResult> {
  try {
    // A call cancelled before it could run claims nothing and runs nothing.
    if (opts?.signal?.aborted === true) return refuse(call, cancelledBefore());
    const claim = claimCall(call.g, rt, input, call.callId, meta, opts);
    if (isPending(claim)) return claim.then((c) => executed(call, rt, input, c, undefined, opts?.signal), internalError(call));
    return executed(call, rt, input, claim, now, opts?.signal);
  } catch {
    return internalError(call)();
  }
}

/** 6. Execute under policy: timeout, classification, retry, breaker, concurrency. */
function executed(call: Call, rt: ToolRuntime, input: unknown, claim: ClaimedCall, now: number | undefined, signal: AbortSignal | undefined): ToolResult | Promise<ToolResult> {
  if (claim.kind === "answer") return answered(call, rt, claim.done, signal);
  const answer = new Promise<ToolResult>(capture);
  call.resolve = captured;
  captured = ignore; // not kept past this call: it would hold the last answer alive
  call.rt = rt;
  call.input = input;
  call.claim = claim;
  try {
    executeWithPolicy(call, now);
  } catch {
    call.resolve(internalError(call)());
  }
  return answer;
}

/**
 * 5b. The ledger answered instead of the tool (a replay, a conflict). A success whose stored copy
 * was redacted where the contract may constrain it (decided when it was stored; docs/ledger.md) is
 * not handed out as that data: the call says it succeeded but cannot be replayed in full. A replay
 * names the tool version whose call stored it; a success stored by another version is handed out
 * as today's output schema gives it, and only when that schema accepts it (see
 * {@link underTodaysContract}): otherwise FAILED/applied, never data that breaks the contract.
 */
function answered(call: Call, rt: ToolRuntime, done: Done, signal: AbortSignal | undefined): ToolResult | Promise<ToolResult> {
  try {
    return replayedAs(call, rt, done, signal);
  } catch {
    return internalError(call)(); // a stored answer is not the gate's own data: never a rejection
  }
}

function replayedAs(call: Call, rt: ToolRuntime, done: Done, signal: AbortSignal | undefined): ToolResult | Promise<ToolResult> {
  const stored = done.replayed === true ? done.storedVersion : undefined;
  const c = stored !== undefined && stored !== rt.tool.version ? new Call(call.g, call.tool, call.name, call.callId, call.t0, stored) : call;
  c.listened = call.listened; // the same gate call, as its listeners heard it begin
  if (done.ok && done.withheld === true) {
    return finish(c, { ok: false, failure: _fail("FAILED", done.unstorable === true ? MSG.replayUnstorable : MSG.replayWithheld, false, "applied"), replayed: true }, 0);
  }
  if (!done.ok || c === call) return finish(c, done, 0);
  return underTodaysContract(rt.tool.output, done.data, signal, rt.timeoutMs).then((data) => {
    if (data === CANCELLED || data === TIMED_OUT) return finish(c, { ...unfinishedCheck(rt.tool, data), replayed: true }, 0);
    return finish(c, data === NO ? { ok: false, failure: _fail("FAILED", MSG.replayOtherVersion, false, "applied"), replayed: true } : { ...done, data }, 0);
  }, internalError(c));
}

/**
 * Another version's stored output as today's schema gives it (its defaults filled in, keys it
 * strips dropped), or NO when it refuses it, when what it gives has no JSON form, or when parsing
 * it once more changes it: a transform that is not idempotent (`n => n * 2`) would run a second
 * time on data it already made. Each parse is bounded as a fresh call's output check is: the
 * tool's timeout, and the caller's cancel.
 */
async function underTodaysContract(schema: StandardSchemaV1, stored: unknown, signal: AbortSignal | undefined, timeoutMs: number): Promise<unknown> {
  const parse = (v: unknown) => {
    const r = validate(schema, v);
    return isPromiseLike(r) ? untilSettled(r, signal, timeoutMs) : r;
  };
  const once = await parse(stored);
  if (once === CANCELLED || once === TIMED_OUT) return once;
  if (once === "threw" || once.issues !== undefined) return NO;
  const twice = await parse(once.value);
  if (twice === CANCELLED || twice === TIMED_OUT) return twice;
  if (twice === "threw" || twice.issues !== undefined) return NO;
  if (notJsonData(once.value) !== undefined) return NO; // what a fresh call would refuse (src/json-data.ts)
  try {
    return JSON.stringify(twice.value) === JSON.stringify(once.value) ? once.value : NO;
  } catch {
    return NO;
  }
}

/** 7–8. Validate output (a transport success proves no business rule), then the business check. */
function checked(call: Call, rt: ToolRuntime, input: unknown, claim: GoAhead, exec: ExecOutcome, fastRefused = false): ToolResult | Promise<ToolResult> {
  try {
    const done = exec.ok ? verify(call.g, rt, input, exec.value, fastRefused) : { ok: false as const, failure: exec.failure };
    if (isPending(done)) {
      // An async output check or business check: bounded by the tool's timeout and the caller's cancel.
      return untilSettled(done, claim.signal, rt.timeoutMs).then((d) => settled(call, claim, unfinishedCheck(rt.tool, d), exec.attempts), internalError(call));
    }
    return settled(call, claim, done, exec.attempts);
  } catch {
    return internalError(call)();
  }
}

/** 9. Settle the ledger with the outcome, and answer. */
function settled(call: Call, claim: GoAhead, done: Done, attempts: number): ToolResult | Promise<ToolResult> {
  try {
    const s = settleCall(call.g, claim, done, attempts);
    if (isPending(s)) return s.then((d) => finish(call, d, attempts), internalError(call));
    return finish(call, s, attempts);
  } catch {
    return internalError(call)();
  }
}

/** The check's outcome, or the failure when it was cancelled or did not answer in time (the tool has run). */
function unfinishedCheck(tool: AnyTool, d: Done | typeof CANCELLED | typeof TIMED_OUT): Done {
  if (d !== CANCELLED && d !== TIMED_OUT) return d;
  const effect = tool.effect === "write" ? "applied" : "none";
  return { ok: false, failure: _fail("FAILED", d === CANCELLED ? MSG.cancelledAfter : MSG.checkTimeout, false, effect) };
}

/** A hardening refusal; its path (payload keys) passes the secret patterns, as every other issue path does. */
function hardeningFailure(h: Hardened & { ok: false }, redact: Redactor): Failure {
  const found = { ...h.issue, path: _redactThenCut(redact, h.path, MAX_ISSUE_PATH, 4 * MAX_ISSUE_PATH) }; // a window, as toSafeIssues reads paths
  return _fail("INVALID_INPUT", h.reason === "json" ? MSG.invalidJson : MSG.limits, false, "none", { issues: [found] });
}

function refuse(call: Call, failure: Failure): ToolResult {
  return finish(call, { ok: false, failure }, 0);
}

/** The answer when a step failed inside the gate itself. */
function internalError(call: Call): () => ToolResult {
  return () => finish(call, { ok: false, failure: _fail("FAILED", MSG.internal, false, call.tool?.effect === "write" ? "unknown" : "none") }, 0);
}

/**
 * A step's own result still to come. Steps return either a value or a native promise of theirs
 * (never a caller's thenable), so `instanceof` is exact here; and unlike a shared `.then` probe,
 * whose inline cache sees every shape the library passes it, it stays cheap on the hot path.
 */
function isPending<T>(v: T | Promise<T>): v is Promise<T> {
  return v instanceof Promise;
}

function asPromise(r: ToolResult | Promise<ToolResult>): Promise<ToolResult> {
  return isPending(r) ? r : Promise.resolve(r);
}

/**
 * Output validation and the business check; synchronous unless the schema or the check is async.
 * `fastRefused`: the compiled output check has already said NO for this value (it is not asked twice).
 */
function verify(g: ResolvedGate, rt: ToolRuntime, input: unknown, value: unknown, fastRefused: boolean): Done | Promise<Done> {
  const tool = rt.tool;
  const fast = fastRefused || rt.fastOutput === undefined ? NO : rt.fastOutput(value);
  if (fast !== NO) return tool.check === undefined ? { ok: true, data: fast } : judged(g, tool, input, value, { value: fast });
  const out = validate(tool.output, value);
  if (isPromiseLike(out)) return out.then((o) => judged(g, tool, input, value, asJsonData(o)));
  return judged(g, tool, input, value, asJsonData(out));
}

/**
 * A validated output that JSON cannot carry whole (a cycle, a bigint, a Map…; src/json-data.ts)
 * fails as the schema's own refusal would: the agent only ever receives JSON.
 */
function asJsonData(o: StandardSchemaV1.Result<unknown> | "threw"): StandardSchemaV1.Result<unknown> | "threw" {
  if (o === "threw" || o.issues !== undefined) return o;
  const notJson = notJsonData(o.value);
  return notJson === undefined ? o : { issues: [notJson] };
}

function judged(g: ResolvedGate, tool: AnyTool, input: unknown, value: unknown, out: StandardSchemaV1.Result<unknown> | "threw"): Done | Promise<Done> {
  const writeEffect = tool.effect === "write" ? "applied" : "none";
  if (out === "threw" || out.issues !== undefined) {
    const issues = out === "threw" ? [issue("", "validator_error", MSG.invalidOutput)] : toSafeIssues(out.issues, value, g.redact);
    return { ok: false, failure: _fail("INVALID_OUTPUT", MSG.invalidOutput, false, writeEffect, { issues }) };
  }
  if (tool.check === undefined) return { ok: true, data: out.value };
  const toDone = (verdict: unknown): Done => {
    if (verdict === undefined) return { ok: true, data: out.value };
    if (verdict === "threw") return { ok: false, failure: _fail("FAILED", MSG.checkFailed, false, writeEffect), checked: true };
    const c = classifyError(verdict, undefined);
    // A write that answered a valid output ran: only a reject (which may say what landed) is its own
    // answer; any other verdict (denied, transient…) cannot make it "none" or worth a retry.
    if (tool.effect === "write" && c.kind !== "rejected") return { ok: false, failure: _fail("FAILED", MSG.checkFailed, false, "applied"), checked: true };
    return { ok: false, failure: failureFor(c, tool.effect, g.redact), checked: true };
  };
  const verdict = businessCheck(tool, out.value, input);
  return verdict instanceof Promise ? verdict.then(toDone) : toDone(verdict);
}

/** Which call option is wrong, as the envelope's issue (the option's name, never its value). */
class BadOption {
  readonly issue: ReturnType<typeof issue>;
  constructor(path: string, code: string, message: string) {
    this.issue = issue(path, code, message);
  }
}

/** The options as `gate.call` read them: what the caller gave, and the principal's id read once. */
type ReadOptions = ListenedOptions & { readonly [PRINCIPAL_ID]?: string };

/**
 * The caller's options, each field read once (a getter or a Proxy cannot show the checks one
 * value and the call another), checked, as a plain object; a {@link BadOption} when one is wrong
 * or a read throws.
 */
function readOptions(o: unknown): ReadOptions | BadOption {
  if (typeof o !== "object" || o === null) return new BadOption("", "invalid_type", "Call options must be an object");
  let callId: unknown, idempotencyKey: unknown, principal: unknown, signal: unknown, principalId: unknown, fromModel: unknown;
  try {
    ({ callId, idempotencyKey, principal, signal, fromModel } = o as Record<string, unknown>);
    // The caller's object itself (a class instance keeps its getters and methods for `authorize`).
    if (typeof principal === "object" && principal !== null) principalId = (principal as { id?: unknown }).id;
  } catch {
    return new BadOption("", "unreadable", "Call options could not be read");
  }
  const key = (name: string, v: unknown): BadOption | undefined => {
    if (v === undefined) return undefined;
    if (typeof v !== "string") return new BadOption(name, "invalid_type", `${name} must be a string`);
    if (v.length === 0) return new BadOption(name, "too_small", `${name} must not be empty`);
    return v.length <= 256 ? undefined : new BadOption(name, "too_big", `${name} must be at most 256 characters`);
  };
  const badKey = key("callId", callId) ?? key("idempotencyKey", idempotencyKey);
  if (badKey !== undefined) return badKey;
  if (principal !== undefined && typeof principalId !== "string") return new BadOption("principal.id", "invalid_type", "principal must be an object with a string id");
  if (signal !== undefined && !(signal instanceof AbortSignal)) return new BadOption("signal", "invalid_type", "signal must be an AbortSignal");
  if (signal !== undefined && !readsAsSignal(signal)) return new BadOption("signal", "invalid_type", "signal must be an AbortSignal");
  if (fromModel !== undefined && typeof fromModel !== "boolean") return new BadOption("fromModel", "invalid_type", "fromModel must be a boolean");
  const out: { -readonly [K in keyof ReadOptions]: ReadOptions[K] } = {};
  if (callId !== undefined) out.callId = callId as string;
  if (idempotencyKey !== undefined) out.idempotencyKey = idempotencyKey as string;
  if (principal !== undefined) {
    out.principal = principal as Principal;
    out[PRINCIPAL_ID] = principalId as string;
  }
  if (signal !== undefined) out.signal = signal as AbortSignal;
  if (fromModel === true) out.fromModel = true;
  const listeners = attemptListeners(o);
  if (listeners !== undefined) out[ATTEMPT_LISTENER] = listeners;
  return out;
}

/** An AbortSignal made by Node (`Object.create(AbortSignal.prototype)` passes `instanceof`, then throws on reading). */
function readsAsSignal(signal: AbortSignal): boolean {
  try {
    return typeof signal.aborted === "boolean";
  } catch {
    return false;
  }
}

/**
 * The attempt listeners a wrapper passed (src/attempt-seam.ts): the elements of an array under
 * that key with `begin` and `attempt` methods. Anything else there, or a key that cannot be read
 * (a strict Proxy), is no listener.
 */
function attemptListeners(o: object): AttemptListener[] | undefined {
  try {
    const ok = _listenersIn(o).filter((x): x is AttemptListener => {
      const m = x as Partial<Record<keyof AttemptListener, unknown>> | null;
      return typeof m === "object" && m !== null && typeof m.begin === "function" && typeof m.attempt === "function";
    });
    return ok.length > 0 ? ok : undefined;
  } catch {
    return undefined;
  }
}

/** Standard Schema validation, sync when the schema is; a throwing validator is reported, not thrown. */
function validate(schema: StandardSchemaV1, value: unknown): StandardSchemaV1.Result<unknown> | "threw" | Promise<StandardSchemaV1.Result<unknown> | "threw"> {
  let r: StandardSchemaV1.Result<unknown> | Promise<StandardSchemaV1.Result<unknown>>;
  try {
    r = schema["~standard"].validate(value);
  } catch {
    return "threw";
  }
  return isPromiseLike(r) ? Promise.resolve(r).catch(() => "threw" as const) : r;
}

/** The check's verdict — undefined (passed), a ToolError, or "threw" — synchronously when the check is. */
function businessCheck(tool: AnyTool, output: unknown, input: unknown): unknown {
  if (tool.check === undefined) return undefined;
  let v: unknown;
  try {
    v = tool.check(output, input);
    // Inside the try: reading `then` of what it returned may throw (a Proxy), as the check itself may.
    if (isPromiseLike(v)) return Promise.resolve(v).then(verdictOf, (e: unknown) => (isToolError(e) ? e : "threw"));
  } catch (e) {
    return isToolError(e) ? e : "threw";
  }
  return verdictOf(v);
}

function verdictOf(v: unknown): unknown {
  if (v === undefined || v === true) return undefined;
  return isToolError(v) ? v : "threw";
}

/** The failure's issue paths as the record keeps them: no payload keys (src/issue-paths.ts). */
function recordedPaths(g: ResolvedGate, name: string, failure: Failure): string[] {
  return recordPaths(g.listings.find((l) => l.name === name), failure);
}

/** The masked paths are the issues' own (no payload key in any of them). */
function samePaths(masked: readonly string[], issues: readonly { readonly path: string }[]): boolean {
  for (let i = 0; i < masked.length; i++) if (masked[i] !== issues[i]?.path) return false;
  return masked.length === issues.length;
}

/** Build the envelope and emit the call's record. */
function finish(call: Call, done: Done, attempts: number): ToolResult {
  const end = performance.now();
  const durationMs = Math.round((end - call.t0) * 1000) / 1000; // µs precision
  const version = call.version ?? call.tool?.version ?? "";
  const meta: CallMeta =
    done.replayed === true
      ? { tool: call.name, version, callId: call.callId, attempts, durationMs, replayed: true }
      : { tool: call.name, version, callId: call.callId, attempts, durationMs };
  if (done.ok && call.g.onCall === undefined && call.listened === undefined) return { ok: true, data: done.data, meta };
  return finishFull(call, done, meta, end);
}

/** {@link finish} for a failure, with an `onCall` hook or attempt listeners: the envelope, the paths it masks, the record, the mark. */
function finishFull(call: Call, done: Done, meta: CallMeta, end: number): ToolResult {
  const { g, tool, name } = call;
  const result: ToolResult = done.ok ? { ok: true, data: done.data, meta } : { ok: false, ...done.failure, meta };
  // Records made outside the gate (the loop's evidence) mask the paths as the gate's own record
  // does. Most failures name only declared fields, whose masked paths are the envelope's own: only
  // a failure with a payload key in a path is remembered (a WeakMap entry per failure is most of the
  // cost of an invalid call).
  let paths: string[] | undefined;
  if (!done.ok && done.failure.issues !== undefined) {
    paths = recordedPaths(g, name, done.failure);
    if (!samePaths(paths, done.failure.issues)) _rememberPaths(result, () => recordedPaths(g, name, done.failure));
  }
  let record: CallRecord | undefined;
  if (g.onCall !== undefined) {
    const failure = done.ok ? undefined : done.failure;
    const r: { -readonly [K in keyof CallRecord]: CallRecord[K] } = {
      tool: name,
      version: meta.version,
      callId: meta.callId,
      ok: done.ok,
      code: failure === undefined ? "OK" : failure.code,
      attempts: meta.attempts,
      durationMs: meta.durationMs,
      effect: failure === undefined ? (tool?.effect === "write" ? "applied" : "none") : failure.effect,
      retryable: failure === undefined ? false : failure.retryable,
      replayed: done.replayed === true,
      startedAt: Math.round(wallClockAt(call.t0, end)),
    };
    if (paths !== undefined) r.issuePaths = paths;
    record = r;
    if (call.listened !== undefined) _noteHeard(r, call.listened.listeners, call.listened.token);
    g.onCall(r);
  }
  if (call.listened !== undefined) {
    _markAnswer(result, call.listened.token, record);
    endContext(call.listened.context);
  }
  return result;
}

/**
 * The call's async resource ends with its answer: async_hooks users that keep state per resource
 * (context managers, cls-hooked) hear its destroy then. Nothing runs in it after the answer (a
 * timed-out tool that stops later resolves a promise, runs nothing of the call's).
 */
function endContext(context: AsyncResource): void {
  try {
    context.emitDestroy();
  } catch {
    // emitted already (never: one answer per call)
  }
}
