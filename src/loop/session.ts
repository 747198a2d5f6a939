/**
 * One run of the loop policy: the state of a conversation (turns, calls, failed payloads, repair
 * budgets) and the decision for every proposed call and every result.
 * @module
 */
import { randomUUID } from "node:crypto";
import { TOOL_ERROR_CODES, type ToolFailure, type ToolResult } from "../result.js";
import { _isSecretKeyName, _redactThenCut, truncate } from "../redact.js";
import { ToolgateConfigError } from "../errors.js";
import { SECRET_PLACEHOLDER } from "../log/_capture.js";
import { MAX_ISSUE_PATH } from "../issues.js";
import { recordedIssuePaths } from "../issue-paths.js";
import { argsValue, callKey, canonicalJson, canonicalValue } from "./canonical.js";
import {
  LOOP_MESSAGES,
  isTerminal,
  type ContinueDecision,
  type EscalateDecision,
  type RepairDecision,
  type LoopDecision,
  type LoopEvidence,
  type StopDecision,
  type StopReason,
  type EscalateReason,
} from "./decision.js";
import type { ResolvedLoopOptions } from "./options.js";

/** A call the model proposes: a tool name and its arguments (JSON text or a value). */
export interface ProposedCall {
  readonly tool: string;
  readonly args: unknown;
  /** The provider's tool-call id. Default: a generated UUID. */
  readonly callId?: string;
}

/** A call the session admitted, with the call id to pass to the gate. */
export interface AdmittedCall extends ProposedCall {
  readonly callId: string;
}

/** The answer of {@link LoopSession.admit}: execute it, or do not (with the stop decision). */
export type Admission = { readonly ok: true; readonly call: AdmittedCall } | { readonly ok: false; readonly decision: StopDecision };

/** One proposed call, its result (absent when refused) and the decision. */
export interface LoopStep {
  readonly tool: string;
  readonly callId: string;
  readonly result?: ToolResult;
  readonly decision: LoopDecision;
}

/**
 * The state of one run. Create with `policy.start()`; use one per conversation.
 * @example
 * const session = createLoopPolicy().start();
 * const adm = session.admit({ tool: call.name, args: call.arguments, callId: call.id });
 * if (!adm.ok) return refuse(adm.decision);
 * const decision = session.observe(adm.call, await gate.call(adm.call.tool, adm.call.args, { callId: adm.call.callId }));
 */
export interface LoopSession {
  /** Start a model turn. Returns the stop decision when the turn cap is reached or the run is over. */
  beginTurn(): StopDecision | EscalateDecision | undefined;
  /** Before executing: refuse repeats of failed calls, unchanged repairs and calls beyond the caps. */
  admit(call: ProposedCall): Admission;
  /** After executing: the decision for this result (anything that is not an envelope stops the run). */
  observe(call: ProposedCall, result: unknown): LoopDecision;
  /** `admit`, then `execute` (when admitted), then `observe`. A throwing `execute` stops the run. */
  run(call: ProposedCall, execute: (call: AdmittedCall) => Promise<ToolResult> | ToolResult): Promise<LoopStep>;
  /** The decision that ended the run (`stop` or `escalate`), once there is one. */
  readonly outcome: StopDecision | EscalateDecision | undefined;
  /** Turns begun (an admitted call before any `beginTurn` starts turn 1). */
  readonly turns: number;
  /** Calls admitted or refused. */
  readonly calls: number;
  readonly steps: readonly LoopStep[];
  /** One record per stop or escalation a result caused, and per call refused as `no_new_evidence` (see docs/loop.md, Evidence). */
  readonly evidence: readonly LoopEvidence[];
}

interface FailedCall {
  readonly callId: string;
  readonly failure: ToolFailure;
}

interface PendingRepair {
  readonly used: number;
  readonly paths: readonly string[];
  /** The same paths as records keep them (no payload keys: src/issue-paths.ts). */
  readonly recordedPaths: readonly string[];
  readonly args: unknown;
  /** The tool version the failure named (the record of a refused unchanged repair names it too). */
  readonly version: string;
  /** The model turn of the failure that asked for this repair. */
  readonly turn: number;
  /** The session's event count when that failure was observed (see `Session.#seq`). */
  readonly observedAt: number;
  /** Calls of the same turn that shared this repair so far (bounded by {@link MAX_SHARED}). */
  readonly shared: number;
}

/**
 * Calls of one turn that share one repair, at most: a host that calls `beginTurn` only once makes
 * every call "the same turn", and the repair budget and the unchanged-repair check must still end
 * a run that only changes unrelated fields.
 */
const MAX_SHARED = 8;

const UNKNOWN = "\u0000unknown_tool";
const ABSENT = Symbol("absent");

const EFFECTS: readonly unknown[] = ["none", "applied", "unknown"];

/**
 * A result the loop can decide on: the envelope's fields with their types (an envelope read back
 * from elsewhere may be anything; a wrong one is `not_an_envelope`, never a throw further in).
 */
function isEnvelope(r: unknown): r is ToolResult {
  if (typeof r !== "object" || r === null) return false;
  const o = r as Record<string, unknown>;
  const meta = o.meta as Record<string, unknown> | null | undefined;
  if (typeof meta !== "object" || meta === null) return false;
  if (typeof meta.version !== "string" || typeof meta.callId !== "string" || typeof meta.attempts !== "number") return false;
  if (o.ok === true) return true;
  if (o.ok !== false || typeof o.code !== "string" || !(TOOL_ERROR_CODES as readonly string[]).includes(o.code) || !EFFECTS.includes(o.effect)) return false;
  const issues = o.issues;
  if (issues === undefined) return true;
  if (!Array.isArray(issues)) return false;
  for (const i of issues as unknown[]) {
    const x = i as Record<string, unknown> | null;
    if (typeof x !== "object" || x === null || typeof x.path !== "string" || typeof x.code !== "string" || typeof x.message !== "string") return false;
  }
  return true;
}

/** Evidence holds at most this many issue paths, each at most this long, and a tool name this long. */
const MAX_EVIDENCE_PATHS = 20;
const MAX_EVIDENCE_TEXT = 200;

/** Whether a field holds the same value before and after a repair (`"42"` is not `42`; too large to compare is not the same). */
function same(a: unknown, b: unknown): boolean {
  if (a === ABSENT || b === ABSENT) return a === b;
  const ca = canonicalValue(a);
  return ca !== undefined && ca === canonicalValue(b);
}

/**
 * Property look-ups one issue path may cost the unchanged-repair check. Plain keys cost one per
 * segment; keys with dots add readings, and a payload built so that they multiply (keys "a" and
 * "a.a" at every level) would cost exponentially many: past the cap, the path counts as changed.
 */
const MAX_LOOKUPS = 10_000;

function child(v: unknown, key: string): unknown {
  return typeof v === "object" && v !== null && Object.hasOwn(v, key) ? (v as Record<string, unknown>)[key] : ABSENT;
}

/** Whether a node has a key with a dot in it: only then can one key span several segments. */
function hasDottedKey(v: unknown): boolean {
  return typeof v === "object" && v !== null && !Array.isArray(v) && Object.keys(v).some((k) => k.includes("."));
}

/** A path the gate cut at its length cap (src/issues.ts) ends inside a key it no longer names. */
function isCut(path: string): boolean {
  return path.length >= MAX_ISSUE_PATH - 1 && path.endsWith("\u2026");
}

/**
 * Whether the value an issue path names differs between the failing call's arguments and the
 * repair's. Paths join keys with "." and a key may hold dots itself (a version "v1.2", an e-mail
 * used as a record key), so "prices.v1.2" is prices → "v1.2" or prices → v1 → 2. Every reading of
 * the segments as keys that either payload has is compared, and the path is unchanged only if
 * each reading is: whichever key the validator meant, its value is the same. When in doubt (a cut
 * path, too many readings) it counts as changed: a repair wrongly admitted costs one gate call,
 * whose answer spends the repair budget; one wrongly refused ends the run.
 */
function changedAt(before: unknown, after: unknown, path: string): boolean {
  if (isCut(path)) return true;
  const segs = path.split(".");
  let lookups = 0;
  // Readings of segs[from..] below the nodes a and b (either may be ABSENT): the next key is
  // segs[from], or (where a node has a key with a dot) segs[from] + "." + segs[from + 1], and so on.
  const changedBelow = (a: unknown, b: unknown, from: number): boolean => {
    const to = hasDottedKey(a) || hasDottedKey(b) ? segs.length : from + 1;
    let key = segs[from]!;
    for (let i = from; i < to; i++) {
      if (i > from) key += "." + segs[i]!;
      if (++lookups > MAX_LOOKUPS) return true;
      const ca = child(a, key);
      const cb = child(b, key);
      if (i === segs.length - 1) return !same(ca, cb);
      // A key neither payload has leads nowhere: no value below it to compare.
      if ((ca !== ABSENT || cb !== ABSENT) && changedBelow(ca, cb, i + 1)) return true;
    }
    return false;
  };
  return changedBelow(before, after, 0);
}

/** Create a session. Internal: use `createLoopPolicy(...).start()`. */
export function _createSession(o: ResolvedLoopOptions): LoopSession {
  return new Session(o);
}

type FailureFacts = Pick<ToolFailure, "code" | "effect" | "issues"> & { readonly meta?: Partial<ToolFailure["meta"]> };
type At = { readonly tool: string; readonly callId: string };

/** One run's state. A class so that starting a session allocates one object, not a set of closures. */
class Session implements LoopSession {
  #turns = 0;
  /** `beginTurn` was called: `#turns` counts model turns, not just "some call was made". */
  #turnsBegun = false;
  /** Admissions and observations so far: orders a call's admission against another's failure. */
  #seq = 0;
  /** Call id → `#seq` at its admission, while it runs. */
  readonly #admittedAt = new Map<string, number>();
  #calls = 0;
  #outcome: StopDecision | EscalateDecision | undefined;
  readonly #failed = new Map<string, FailedCall>();
  readonly #pending = new Map<string, PendingRepair>();
  readonly #steps: LoopStep[] = [];
  readonly #evidence: LoopEvidence[] = [];

  constructor(private readonly o: ResolvedLoopOptions) {}

  get outcome(): StopDecision | EscalateDecision | undefined {
    return this.#outcome;
  }
  get turns(): number {
    return this.#turns;
  }
  get calls(): number {
    return this.#calls;
  }
  get steps(): readonly LoopStep[] {
    return this.#steps;
  }
  get evidence(): readonly LoopEvidence[] {
    return this.#evidence;
  }

  beginTurn(): StopDecision | EscalateDecision | undefined {
    if (this.#outcome !== undefined) return this.#outcome;
    // The refused turn is not begun: `turns` stays at the cap.
    if (this.#turns >= this.o.maxTurns) return this.#stop("turn_limit");
    this.#turns++;
    this.#turnsBegun = true;
    return undefined;
  }

  admit(call: ProposedCall): Admission {
    let callId = typeof call.callId === "string" && call.callId.length > 0 ? call.callId : randomUUID();
    // The run has ended: every later call is refused with the outcome's reason, and not kept (a
    // host that keeps calling must not grow the session).
    if (this.#outcome !== undefined) return { ok: false, decision: this.#stopAgain(call, callId) };
    // The same id twice in flight (a host's bug): the second gets its own, so their order survives.
    if (this.#admittedAt.has(callId)) callId = randomUUID();
    if (this.#turns === 0) this.#turns = 1;
    if (this.#calls >= this.o.maxCalls) return this.#refuse(call, callId, "call_limit");
    // Hash only when something failed before: the valid path pays nothing.
    const prior = this.#failed.size === 0 ? undefined : this.#failed.get(callKey(call.tool, call.args));
    if (prior !== undefined) {
      const facts = { ...prior.failure, meta: { ...prior.failure.meta, attempts: 0 } };
      const ev = this.#record(call, callId, facts, "stop", "no_new_evidence", prior.callId, recordedIssuePaths(prior.failure));
      return this.#refuse(call, callId, "no_new_evidence", { code: prior.failure.code, evidence: ev });
    }
    const repair = this.#pending.get(call.tool);
    // Another call of the turn that asked for the repair (answered one after another) is not the
    // repair: the model has not seen the failure yet.
    if (this.o.requireFieldChange && repair !== undefined && !this.#sameTurn(repair, undefined) && repair.paths.length > 0 && !repair.paths.includes("")) {
      const now = argsValue(call.args);
      // Failing arguments that could not be read as a value (text with a key twice) leave nothing to compare.
      if (now.parsed && repair.args !== ABSENT && repair.paths.every((p) => !changedAt(repair.args, now.value, p))) {
        const facts = {
          code: "INVALID_INPUT" as const,
          effect: "none" as const,
          issues: repair.paths.map((path) => ({ path, code: "unchanged", message: "" })),
          meta: { version: repair.version, attempts: 0 },
        };
        const ev = this.#record(call, callId, facts, "stop", "no_new_evidence", undefined, repair.recordedPaths);
        return this.#refuse(call, callId, "no_new_evidence", { code: "INVALID_INPUT", evidence: ev });
      }
    }
    this.#calls++;
    this.#admittedAt.set(callId, ++this.#seq);
    return { ok: true, call: { tool: call.tool, args: call.args, callId } };
  }

  observe(call: ProposedCall, result: unknown): LoopDecision {
    const envelope = isEnvelope(result);
    const callId = call.callId ?? (envelope ? result.meta.callId : randomUUID());
    const admittedAt = this.#admittedAt.get(callId);
    this.#admittedAt.delete(callId);
    if (admittedAt === undefined) {
      // A call the session did not admit: once the run has ended it changes nothing; before, it
      // counts against `maxCalls` as an admitted one does.
      if (this.#outcome !== undefined) return this.#stopAgain(call, callId);
      this.#calls++;
    }
    this.#seq++;
    const d = envelope ? this.#decide(call, this.#at(call, callId), result, admittedAt) : this.#stop("not_an_envelope", this.#at(call, callId));
    this.#steps.push(envelope ? { tool: call.tool, callId, result, decision: d } : { tool: call.tool, callId, decision: d });
    return d;
  }

  async run(call: ProposedCall, execute: (call: AdmittedCall) => Promise<ToolResult> | ToolResult): Promise<LoopStep> {
    const adm = this.admit(call);
    if (!adm.ok) return { tool: call.tool, callId: adm.decision.callId ?? "", decision: adm.decision };
    let result: unknown;
    try {
      result = await execute(adm.call);
    } catch {
      result = undefined;
    }
    this.observe(adm.call, result);
    return this.#steps[this.#steps.length - 1]!;
  }

  #decide(call: ProposedCall, at: At, r: ToolResult, admittedAt: number | undefined): LoopDecision {
    if (r.ok) {
      if (this.#pending.size > 0) this.#pending.delete(call.tool);
      return this.#emit<ContinueDecision>({ action: "continue", reason: "ok", message: LOOP_MESSAGES.ok, tool: at.tool, callId: at.callId });
    }
    this.#failed.set(callKey(call.tool, call.args), { callId: at.callId, failure: r });
    const code = r.code;
    if (code === "INVALID_INPUT" || code === "UNKNOWN_TOOL") return this.#repair(call, at, r, admittedAt);
    this.#pending.delete(call.tool);
    switch (code) {
      case "REJECTED":
        // A write refused without saying whether it changed anything (a proxied upstream's error):
        // as for FAILED, a state check comes before any new decision.
        if (r.effect === "unknown") return this.#escalate(call, at, "unknown_effect", r);
        return this.#emit<ContinueDecision>({ action: "continue", reason: "rejected", message: LOOP_MESSAGES.rejected, ...at, code });
      case "CONFLICT":
        if (!r.retryable) return this.#emit<ContinueDecision>({ action: "continue", reason: "conflict", message: LOOP_MESSAGES.conflict, ...at, code });
        return this.#retryLater(call, at, r);
      case "RETRYABLE":
        return this.#retryLater(call, at, r);
      case "INVALID_OUTPUT":
        return this.#stop("invalid_output", at, { code, evidence: this.#record(call, at.callId, r, "stop", "invalid_output") });
      case "DENIED":
        return this.#escalate(call, at, "denied", r);
      case "FAILED":
        if (r.effect === "unknown") return this.#escalate(call, at, "unknown_effect", r);
        return this.#stop("failed", at, { code, evidence: this.#record(call, at.callId, r, "stop", "failed") });
    }
    return this.#stop("failed", at, { code, evidence: this.#record(call, at.callId, r, "stop", "failed") });
  }

  #repair(call: ProposedCall, at: At, r: ToolFailure, admittedAt: number | undefined): LoopDecision {
    const code = r.code as "INVALID_INPUT" | "UNKNOWN_TOOL";
    const slot = code === "UNKNOWN_TOOL" ? UNKNOWN : call.tool;
    const prev = this.#pending.get(slot);
    // Calls the model made in one turn (parallel tool calls) share one repair: the model has not
    // had a chance to fix anything yet.
    const sameTurn = prev !== undefined && this.#sameTurn(prev, admittedAt);
    const used = sameTurn ? prev.used - 1 : (prev?.used ?? 0);
    if (used >= this.o.repairBudget) {
      this.#pending.delete(slot);
      return this.#stop("repair_budget_exhausted", at, { code, evidence: this.#record(call, at.callId, r, "stop", "repair_budget_exhausted") });
    }
    const v = argsValue(call.args);
    this.#pending.set(slot, {
      used: used + 1,
      // An unknown key's repair is its removal, left to the gate to re-check: the key is the
      // caller's text, and one that looks like a secret is redacted in the path, which then names
      // nothing to compare (its removal would look unchanged).
      paths: (r.issues ?? []).filter((i) => i.code !== "unrecognized_key").map((i) => i.path),
      recordedPaths: recordedIssuePaths(r),
      args: v.parsed ? v.value : ABSENT,
      version: r.meta.version,
      turn: this.#turns,
      observedAt: this.#seq,
      shared: sameTurn ? prev.shared + 1 : 0,
    });
    const reason = code === "UNKNOWN_TOOL" ? "unknown_tool" : "invalid_input";
    return this.#emit<RepairDecision>({ action: "repair", reason, message: LOOP_MESSAGES[reason], ...at, code, issues: r.issues ?? [], repairsLeft: this.o.repairBudget - used - 1 });
  }

  /**
   * A call belongs to the model turn of the failure that asked for `repair` (and may share it, up to
   * {@link MAX_SHARED}): known from `beginTurn`, or without it from the order of events (the call,
   * admitted at `admittedAt`, was admitted before that failure was seen).
   */
  #sameTurn(repair: PendingRepair, admittedAt: number | undefined): boolean {
    if (repair.shared >= MAX_SHARED) return false;
    return (this.#turnsBegun && repair.turn === this.#turns) || (admittedAt !== undefined && admittedAt < repair.observedAt);
  }

  #retryLater(call: ProposedCall, at: At, r: ToolFailure): StopDecision {
    return this.#stop("retry_later", at, {
      code: r.code,
      ...(r.retryAfterMs !== undefined ? { retryAfterMs: r.retryAfterMs } : {}),
      evidence: this.#record(call, at.callId, r, "stop", "retry_later"),
    });
  }

  #escalate(call: ProposedCall, at: At, reason: EscalateReason, r: ToolFailure): EscalateDecision {
    const evidence = this.#record(call, at.callId, r, "escalate", reason);
    return this.#emit<EscalateDecision>({ action: "escalate", reason, message: LOOP_MESSAGES[reason], ...at, code: r.code, evidence });
  }

  #emit<D extends LoopDecision>(d: D): D {
    if (this.#outcome === undefined && isTerminal(d)) this.#outcome = d;
    this.o.onDecision?.(d);
    return d;
  }

  #stop(reason: StopReason, at?: At, extra: Partial<StopDecision> = {}): StopDecision {
    return this.#emit<StopDecision>({ action: "stop", reason, message: LOOP_MESSAGES[reason], ...(at ?? {}), ...extra });
  }

  /** After the run ended: `stopped` again for this call, told to `onDecision`, neither counted nor kept. */
  #stopAgain(call: ProposedCall, callId: string): StopDecision {
    const d: StopDecision = { action: "stop", reason: "stopped", message: LOOP_MESSAGES.stopped, ...this.#at(call, callId) };
    this.o.onDecision?.(d);
    return d;
  }

  #refuse(call: ProposedCall, callId: string, reason: StopReason, extra: Partial<StopDecision> = {}): Admission {
    this.#calls++;
    const decision = this.#stop(reason, this.#at(call, callId), extra);
    this.#steps.push({ tool: call.tool, callId, decision });
    return { ok: false, decision };
  }

  /**
   * Where a decision is about: the call id as the host gave it (to correlate), the tool's name as
   * operators may read it. The model proposed the name: one it invented can be anything (a pasted
   * key), so it is redacted and bounded, as the envelope and the records show it.
   */
  #at(call: ProposedCall, callId: string): At {
    return { tool: _redactThenCut(this.o.redact, String(call.tool), MAX_EVIDENCE_TEXT), callId };
  }

  #record(
    call: ProposedCall,
    callId: string,
    f: FailureFacts,
    action: "stop" | "escalate",
    reason: StopReason | EscalateReason,
    repeatOf?: string,
    paths: readonly string[] = recordedIssuePaths(f),
  ): LoopEvidence {
    const gateCallId = repeatOf === undefined ? f.meta?.callId : undefined;
    const e: LoopEvidence = Object.freeze({
      tool: _redactThenCut(this.o.redact, String(call.tool), MAX_EVIDENCE_TEXT),
      version: truncate(f.meta?.version ?? "", MAX_EVIDENCE_TEXT),
      code: f.code,
      issuePaths: Object.freeze(paths.slice(0, MAX_EVIDENCE_PATHS).map((p) => truncate(p, MAX_EVIDENCE_TEXT))),
      callId: _redactThenCut(this.o.redact, callId, MAX_EVIDENCE_TEXT),
      ...(gateCallId !== undefined && gateCallId !== callId ? { gateCallId: _redactThenCut(this.o.redact, gateCallId, MAX_EVIDENCE_TEXT) } : {}),
      at: isoTime(this.o.now),
      effect: f.effect,
      attempts: f.meta?.attempts ?? 0,
      action,
      reason,
      ...(repeatOf !== undefined ? { repeatOf: _redactThenCut(this.o.redact, repeatOf, MAX_EVIDENCE_TEXT) } : {}),
      ...this.#argumentsText(call.args),
    });
    this.#evidence.push(e);
    return e;
  }

  #argumentsText(args: unknown): { arguments?: string } {
    if (!this.o.includeArguments) return {};
    // A value under a secret key name is replaced whole first: the text patterns stop at a space or
    // a comma inside it ("correct horse battery staple"), or miss a short one.
    const v = argsValue(args);
    const text = (v.parsed ? canonicalJson(withoutSecretKeys(v.value, 0)) : undefined) ?? canonicalJson(args) ?? (typeof args === "string" ? args : "<unrepresentable>");
    return { arguments: _redactThenCut(this.o.redact, text, 2_000, 8_192) }; // a window: the redactor sees a secret whole, and runs on a bounded text
  }
}

/** A copy of a parsed value with every value under a secret key name replaced (bounded in depth). */
function withoutSecretKeys(v: unknown, depth: number): unknown {
  if (typeof v !== "object" || v === null || depth > 64) return v;
  if (Array.isArray(v)) return v.map((x) => withoutSecretKeys(x, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = _isSecretKeyName(k) && x !== null ? SECRET_PLACEHOLDER : withoutSecretKeys(x, depth + 1);
  return out;
}

/** The evidence time: `now()` must give epoch milliseconds (a clock that does not is named, not thrown as a RangeError). */
function isoTime(now: () => number): string {
  let t: unknown;
  try {
    t = now();
  } catch (e) {
    throw Object.assign(new ToolgateConfigError("E_LOOP_OPTIONS", "createLoopPolicy: now() threw; it must return epoch milliseconds"), { cause: e });
  }
  if (typeof t !== "number" || !Number.isFinite(t) || Math.abs(t) > 8.64e15) {
    throw new ToolgateConfigError("E_LOOP_OPTIONS", "createLoopPolicy: now() must return epoch milliseconds (a finite number, as Date.now() does)");
  }
  return new Date(t).toISOString();
}
