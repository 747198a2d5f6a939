/**
 * The ledger steps of one call: claim the idempotency key before a write executes (replay a
 * completed key, answer CONFLICT for a running or reused one), record effects durably while it
 * runs, settle the entry with the final envelope. Without a ledger only the key and the in-memory
 * effect list remain.
 * @module
 */
import { randomUUID } from "node:crypto";
import { _fail, TOOL_ERROR_CODES, type EffectRef, type Failure } from "./result.js";
import type { CallScope } from "./attempt.js";
import type { ToolRuntime } from "./execute.js";
import type { ResolvedGate } from "./gate-options.js";
import type { Principal } from "./tool.js";
import { _storedNothing, type ClaimOutcome, type Ledger, type LedgerEntry } from "./ledger/types.js";
import { _fingerprint, _keyHash, _redactDeep } from "./ledger/_canonical.js";
import { _permanentLedgerFault } from "./ledger/_fault.js";
import { _redactThenCut } from "./redact.js";
import { maskSecretFields } from "./log/_capture.js";
import { NO } from "./fast-path.js";
import { cancelledBefore, inheritedUnknown } from "./execute.js";
import { CANCELLED, untilSettled } from "./policy/caller-signal.js";

/** What a pipeline step settles on (the gate's `Done`). */
export type StepDone =
  | {
      readonly ok: true;
      readonly data: unknown;
      readonly replayed?: boolean;
      /** A replay: the tool version that stored it (may differ from the tool's current version). */
      readonly storedVersion?: string;
      /** A replay whose stored copy may break the contract (values were withheld): answer FAILED/applied, not the data. */
      readonly withheld?: boolean;
      /** A replay of a success whose result could not be stored (not JSON: a bigint, a cycle): nothing to replay. */
      readonly unstorable?: boolean;
    }
  | {
      readonly ok: false;
      readonly failure: Failure;
      readonly replayed?: boolean;
      /** A replay: the tool version that stored it (may differ from the tool's current version). */
      readonly storedVersion?: string;
      /** The failure is the business check's verdict on what the tool returned: the tool ran and answered. */
      readonly checked?: boolean;
    };

/**
 * @internal The principal's id as `gate.call` read it with the other options: the key is scoped
 * by that id, and a claim whose principal no longer reads as it (a reused object whose id changed
 * after the call began, or a getter that throws the second time) is refused before anything runs.
 */
export const PRINCIPAL_ID: unique symbol = Symbol("toolgate.principalId");

/** The caller's part of the call (what `gate.call` was given besides the arguments). */
export interface ClaimOptions {
  readonly idempotencyKey?: string | undefined;
  readonly principal?: Principal | undefined;
  readonly signal?: AbortSignal | undefined;
  readonly [PRINCIPAL_ID]?: string | undefined;
}

/** The caller's part of the call. */
interface ClaimInput {
  readonly callId: string;
  readonly meta: Readonly<Record<string, unknown>>;
  readonly opts: ClaimOptions | undefined;
}

/** The principal's id still reads as `id` (a getter that throws, or a changed id, does not). */
function samePrincipal(p: Principal | undefined, id: string): boolean {
  try {
    return p?.id === id;
  } catch {
    return false;
  }
}

/** A claim held in the ledger. */
interface Ticket {
  readonly ledger: Ledger;
  readonly id: string;
  readonly owner: string;
  /** The tool's advertised output schema: fields it marks secret are stored as a placeholder. */
  readonly outputSchema: unknown;
  /** The tool's compiled output check (src/fast-path.ts), to vouch for a redacted copy; absent outside its subset. */
  readonly fastOutput: ((value: unknown) => unknown) | undefined;
}

/** Either an answer without executing (replay, conflict), or go ahead in a scope. */
export type ClaimedCall = { readonly kind: "answer"; readonly done: StepDone } | GoAhead;

const MSG = {
  keyFailed: "The tool's idempotency key could not be derived; nothing was executed",
  principalChanged: "The call's principal changed while the call was being decided; nothing was executed",
  ledgerDown: "The ledger is unavailable; nothing was executed; try again later",
  ledgerBroken: "The ledger cannot record this call (misconfigured or damaged); nothing was executed; an operator must fix it",
  inFlight: "A call with this idempotency key is still running; wait and retry",
  mismatch: "This idempotency key was already used with different arguments",
  abandoned: "An earlier call with this idempotency key ended with an unknown effect; check state before any retry",
  unreadable: "The stored result of this idempotency key could not be read",
  partial: "The write failed after applying the listed effects; check them before any retry",
} as const;

const NO_EFFECTS: readonly EffectRef[] = Object.freeze([]);

const answer = (failure: Failure): ClaimedCall => ({ kind: "answer", done: { ok: false, failure } });

/** The key of a write: the caller's, else the tool's own. `null` when the tool's derivation fails. */
function keyOf(rt: ToolRuntime, input: unknown, given: string | undefined): string | undefined | null {
  if (given !== undefined || rt.tool.effect !== "write" || rt.tool.idempotencyKey === undefined) return given;
  try {
    const k: unknown = rt.tool.idempotencyKey(input);
    if (k === undefined) return undefined;
    return typeof k === "string" && k.length > 0 && k.length <= 256 ? k : null;
  } catch {
    return null;
  }
}

/**
 * Claim the call: writes through a gate with a ledger are recorded, keyed or not. Synchronous
 * when there is nothing to claim (reads, no ledger). Never throws.
 */
export function claimCall(
  g: ResolvedGate,
  rt: ToolRuntime,
  input: unknown,
  callId: string,
  meta: Readonly<Record<string, unknown>>,
  opts: ClaimOptions | undefined,
): ClaimedCall | Promise<ClaimedCall> {
  const key = keyOf(rt, input, opts?.idempotencyKey);
  if (key === null) return answer(_fail("FAILED", MSG.keyFailed, false, "none"));
  const ledger = rt.tool.effect === "write" ? g.ledger : undefined;
  if (ledger === undefined) return new GoAhead(g, callId, meta, opts, key, undefined, false, NO_EFFECTS);
  return claimInLedger(g, rt, input, { callId, meta, opts }, key, ledger);
}

/** How long a call waits for the release of a claim whose answer was lost, ms (the retry hint it answers). */
const RELEASE_WAIT_MS = 1_000;

async function claimInLedger(g: ResolvedGate, rt: ToolRuntime, input: unknown, c: ClaimInput, key: string | undefined, ledger: Ledger): Promise<ClaimedCall> {
  const tool = rt.tool;
  let outcome: ClaimOutcome;
  {
    const principal = c.opts?.[PRINCIPAL_ID] ?? null;
    // authorize, approve and ctx.principal see the caller's object as given (a class keeps its
    // methods); the key is scoped by the id read when the call began. Were the object's id changed
    // since (a host that reuses it), authorize may have judged one principal and the key would
    // belong to another: the call is refused before anything runs, never recorded under either.
    if (principal !== null && !samePrincipal(c.opts?.principal, principal)) return answer(_fail("FAILED", MSG.principalChanged, false, "none"));
    const owner = randomUUID();
    const id = randomUUID();
    let fingerprint: string;
    try {
      fingerprint = _fingerprint(input); // a cycle or a bigint in a transform's output: no key can be derived
    } catch {
      return answer(_fail("FAILED", MSG.keyFailed, false, "none"));
    }
    const signal = c.opts?.signal;
    const callId = _redactThenCut(g.redact, c.callId, 256);
    try {
      const pending = ledger.claim({
        id,
        owner,
        callId,
        tool: tool.name,
        version: tool.version,
        principal: principal === null ? null : _redactThenCut(g.redact, principal, 256),
        ...(key !== undefined ? { key: { display: _redactThenCut(g.redact, key, 256), hash: _keyHash(tool.name, principal, key) } } : {}),
        fingerprint,
        leaseMs: leaseFor(rt),
        takeover: tool.reconcile !== undefined || (tool.idempotentDownstream === true && key !== undefined),
      });
      const first = await untilSettled(pending, signal);
      if (first === CANCELLED) {
        // The caller cancelled while the store decided: nothing ran. Should a fresh claim land
        // later, free it, or a retry would meet CONFLICT for a call that never ran. A takeover
        // (`resumed`) goes back to what it was, settled with the earlier call's unknown effect and
        // its key held: freeing it would let the next call run the write again without the state
        // check; the next call takes it over again and checks state first.
        pending.then(
          (o) => (o.status !== "claimed" ? undefined : o.resumed ? returnTakeover(ledger, o.entry, owner) : releaseLostClaim(ledger, o.entry.id, owner)),
          () => undoLostClaim({ ledger, id, owner, callId }),
        );
        return answer(cancelledBefore());
      }
      outcome = first;
    } catch (e) {
      g.onHookError("ledger", e);
      // Misconfigured or damaged (refused credentials, a read-only or corrupt file, a newer schema):
      // nothing was stored, and "later" would not work either.
      if (_permanentLedgerFault(e)) return answer(_fail("FAILED", MSG.ledgerBroken, false, "none"));
      // The store may have committed the claim and lost only its answer: undo it, or a retry
      // would meet CONFLICT (for a lease) for a call that never ran. Waited for at most the retry
      // hint (and not past the caller's cancel): a store that does not answer does not hold the call.
      // A store that knows it stored nothing (SQLite's rolled-back transaction) is not asked again.
      if (!_storedNothing(e)) await untilSettled(undoLostClaim({ ledger, id, owner, callId }), signal, RELEASE_WAIT_MS);
      return answer(_fail("RETRYABLE", MSG.ledgerDown, true, "none", { retryAfterMs: RELEASE_WAIT_MS }));
    }
    if (outcome.status === "completed") return { kind: "answer", done: replay(outcome.entry) };
    if (outcome.status === "in_flight") return answer(_fail("CONFLICT", MSG.inFlight, true, "unknown", { retryAfterMs: outcome.retryAfterMs }));
    if (outcome.status === "mismatch") return answer(_fail("CONFLICT", MSG.mismatch, false, "none"));
    if (outcome.status === "abandoned") {
      return { kind: "answer", done: withEffects({ ok: false, failure: _fail("FAILED", MSG.abandoned, false, "unknown") }, outcome.entry.effects) };
    }
    const outputSchema = g.listings.find((l) => l.name === tool.name)?.outputSchema;
    return goAhead(g, c, key, { ledger, id: outcome.entry.id, owner, outputSchema, fastOutput: rt.fastOutput }, outcome);
  }
}

/** A claim whose answer may be lost: what it asked the store for. */
interface LostClaim {
  readonly ledger: Ledger;
  /** The fresh id the request offered: the entry's id only when the claim created it. */
  readonly id: string;
  readonly owner: string;
  /** The call id as the request gave it (redacted, truncated). */
  readonly callId: string;
}

/**
 * Undo a claim whose answer was lost (the store failed, or the caller cancelled, while it decided):
 * nothing ran. A claim that created its entry has the request's id: released. A takeover keeps
 * the entry's id, so it is found by this call's id, and goes back to what the earlier calls left,
 * key held (as after a cancel): releasing it would let the next call run the write again without
 * the state check. Only while this call's owner token holds the entry. Best effort; never rejects:
 * when the call id finds another entry (a reused id), nothing is undone and the key waits out its lease.
 */
async function undoLostClaim(c: LostClaim): Promise<void> {
  if (await releaseLostClaim(c.ledger, c.id, c.owner)) return;
  let entry: LedgerEntry | undefined;
  try {
    entry = await c.ledger.get(c.callId);
  } catch {
    return; // the store is down: the claim was most likely never written, or its lease runs out
  }
  if (entry === undefined || entry.id === c.id || entry.owner !== c.owner || entry.state !== "in_flight") return;
  await returnTakeover(c.ledger, entry, c.owner);
}

/** Best effort: settle a claim whose answer was lost as "nothing ran", releasing its key. Resolves whether it settled. */
function releaseLostClaim(ledger: Ledger, id: string, owner: string): Promise<boolean> {
  return settleNothingRan(ledger, id, owner, _fail("RETRYABLE", MSG.ledgerDown, true, "none"), true);
}

/**
 * Settle a taken-over claim in which nothing ran back to what the earlier calls left, key held:
 * their unknown effect, or `applied` with the effects they recorded (as the resumed path answers).
 */
function returnTakeover(ledger: Ledger, entry: LedgerEntry, owner: string): Promise<boolean> {
  const done = withEffects({ ok: false, failure: inheritedUnknown() }, entry.effects);
  return done.ok ? Promise.resolve(false) : settleNothingRan(ledger, entry.id, owner, done.failure, false);
}

/**
 * Settle a claim in which nothing ran with `failure` as its stored answer; resolves whether it
 * settled (`false`: `owner` holds no entry `id`). Never rejects: when the store is down, the claim
 * was most likely never written (its failure is reported already), or its lease runs out and the
 * next call takes it over.
 */
async function settleNothingRan(ledger: Ledger, id: string, owner: string, failure: Failure, releaseKey: boolean): Promise<boolean> {
  try {
    const result = JSON.stringify({ ok: false, ...failure });
    return await ledger.settle(id, owner, { code: failure.code, effect: failure.effect, result, attempts: 0, releaseKey });
  } catch {
    return false; // see above
  }
}

function goAhead(g: ResolvedGate, c: ClaimInput, key: string | undefined, held: Ticket | undefined, outcome: ClaimOutcome | undefined): GoAhead {
  const resumed = outcome?.status === "claimed" && outcome.resumed;
  return new GoAhead(g, c.callId, c.meta, c.opts, key, held, resumed, resumed ? [...outcome.entry.effects] : NO_EFFECTS);
}

/**
 * The call goes ahead: one object per call that is the scope every attempt's context shares, the
 * ledger claim it holds (if any), and the effects recorded so far.
 */
export class GoAhead implements CallScope {
  readonly kind = "go";
  readonly principal: Principal | undefined;
  readonly signal: AbortSignal | undefined;
  constructor(
    private readonly g: ResolvedGate,
    readonly callId: string,
    readonly meta: Readonly<Record<string, unknown>>,
    opts: ClaimOptions | undefined,
    readonly idempotencyKey: string | undefined,
    readonly ticket: Ticket | undefined,
    readonly resumed: boolean,
    private recorded: readonly EffectRef[],
  ) {
    this.principal = opts?.principal;
    this.signal = opts?.signal;
  }
  /** The scope the attempts run in (this object). */
  get scope(): CallScope {
    return this;
  }
  get effects(): readonly EffectRef[] {
    return this.recorded;
  }
  async recordEffect(e: EffectRef): Promise<void> {
    const ref = checkEffect(e, this.g);
    if (this.ticket !== undefined) await this.ticket.ledger.recordEffect(this.ticket.id, this.ticket.owner, ref);
    this.recorded = [...this.recorded, ref];
  }
}

/**
 * Settle the claim with the final outcome; recorded effects make a failure `applied`.
 * Synchronous when nothing was claimed. Never throws.
 */
export function settleCall(g: ResolvedGate, claim: GoAhead, done: StepDone, attempts: number): StepDone | Promise<StepDone> {
  const final = withEffects(done, claim.effects);
  return claim.ticket === undefined ? final : settleInLedger(g, claim.ticket, final, attempts, claim.signal);
}

async function settleInLedger(g: ResolvedGate, t: Ticket, final: StepDone, attempts: number, signal: AbortSignal | undefined): Promise<StepDone> {
  // The outcome is known: a caller who cancels stops waiting for the store, the settle goes on.
  await untilSettled(store(g, t, final, attempts), signal);
  return final;
}

/** Store the final envelope. Never rejects: a failure is the ledger hook's error, the entry stays in flight. */
async function store(g: ResolvedGate, t: Ticket, final: StepDone, attempts: number): Promise<void> {
  try {
    // Secret-marked output fields as capture stores them, then every string through the patterns.
    // Inside the try: a value JSON cannot hold (a bigint, a cycle) fails the store, not the call.
    let body: Record<string, unknown>;
    if (final.ok) body = storedSuccess(g, t, final.data);
    else body = { ok: false, ...failureOf(final.failure, g.redact) };
    const settled = await t.ledger.settle(t.id, t.owner, {
      code: final.ok ? "OK" : final.failure.code,
      effect: final.ok ? "applied" : final.failure.effect,
      result: JSON.stringify(body),
      attempts,
      releaseKey: releasesKey(final),
    });
    if (!settled) g.onHookError("ledger", new Error("toolgate: the ledger claim was taken over before it settled"));
  } catch (e) {
    g.onHookError("ledger", e); // the entry stays in flight: `toolgate ledger unresolved` shows it
  }
}

/**
 * The stored body of a success. A result JSON cannot hold (a bigint, a cycle, a throwing `toJSON`)
 * is still settled, as a success with nothing to replay — the effect applied, and a retry must not
 * wait on a claim that looks in flight, nor run again — and the failure is the ledger hook's error.
 */
function storedSuccess(g: ResolvedGate, t: Ticket, result: unknown): Record<string, unknown> {
  try {
    return storableSuccess(g, t, result);
  } catch (e) {
    g.onHookError("ledger", e);
    return { ok: true, data: null, withheld: true, unstorable: true };
  }
}

/** The stored copy of a success: secret-marked fields masked, every string through the patterns. */
function storableSuccess(g: ResolvedGate, t: Ticket, result: unknown): Record<string, unknown> {
  const redacted = _redactDeep(result, g.redact);
  const data = maskSecretFields(redacted, t.outputSchema);
  // Withheld: redaction changed the copy and it may no longer keep the output contract (a
  // secret number, a token a length rule or enum constrains). Decided without running the
  // tool's schema again (it may be async, or have side effects): the compiled output check,
  // when the tool has one, vouches for the copy; without one, a copy with a masked secret field
  // counts as withheld, and strings only the secret patterns rewrote are replayed as they are.
  const redactedJson = JSON.stringify(redacted);
  const masked = JSON.stringify(data) !== redactedJson;
  const changed = masked || redactedJson !== JSON.stringify(result);
  const withheld = changed && (t.fastOutput !== undefined ? t.fastOutput(data) === NO : masked);
  return withheld ? { ok: true, data, withheld: true } : { ok: true, data }; // data is redacted already
}

/**
 * Whether a settled outcome frees its key for a new execution instead of being replayed: only a
 * failure with effect `none` (nothing happened) that is not an answer — a retryable failure, a
 * cancel, a failure a state check found harmless, or the service denying the caller (a replay
 * would keep answering DENIED after the credential is fixed). A REJECTED verdict, and any verdict
 * of the business check on what the tool returned, is kept and replayed: the tool ran and answered.
 */
function releasesKey(final: StepDone): boolean {
  if (final.ok || final.checked === true || final.failure.effect !== "none") return false;
  return final.failure.code !== "REJECTED";
}

/** A failure after recorded effects: the effect applied, here are the refs. */
function withEffects(done: StepDone, effects: readonly EffectRef[]): StepDone {
  if (done.ok || effects.length === 0) return done;
  const { retryAfterMs: _drop, ...rest } = done.failure;
  // A message that said the effect is unknown would contradict `applied` (a service's own message stays).
  const message = done.failure.effect === "unknown" || rest.code === "RETRYABLE" ? MSG.partial : rest.message;
  // Not retryable once effects applied: a RETRYABLE code would contradict that.
  const code = rest.code === "RETRYABLE" ? "FAILED" : rest.code;
  return { ok: false, failure: { ...rest, code, message, retryable: false, effect: "applied", effects: effects.map((e) => ({ ...e })) } };
}

/** The stored envelope, as this call's outcome. */
function replay(entry: LedgerEntry): StepDone {
  const storedVersion = entry.version;
  try {
    const body = JSON.parse(entry.result ?? "") as { ok?: unknown; data?: unknown } & Record<string, unknown>;
    if (body.ok === true) {
      if (body.unstorable === true) return { ok: true, data: null, replayed: true, storedVersion, withheld: true, unstorable: true };
      return body.withheld === true ? { ok: true, data: body.data, replayed: true, storedVersion, withheld: true } : { ok: true, data: body.data, replayed: true, storedVersion };
    }
    const failure = body.ok === false ? storedFailure(body) : undefined;
    if (failure !== undefined) return { ok: false, failure, replayed: true, storedVersion };
  } catch {
    // fall through
  }
  return { ok: false, failure: _fail("FAILED", MSG.unreadable, false, "unknown"), replayed: true, storedVersion };
}

/**
 * A failure with only an envelope's fields, each issue and effect a plain object of its own;
 * `text` rewrites the free text. Stored with the redactor as `text` (the text was redacted when it
 * was made; this is the net under that) while the fixed fields (code, effect, the field names) stay
 * as they are, so a custom pattern that happens to match `INVALID_OUTPUT` or `applied` cannot make
 * the stored answer unreadable; read back with the text as stored.
 */
function failureOf(f: Failure, text: (s: string) => string): Failure {
  const out = _fail(f.code, text(f.message), f.retryable, f.effect, { retryAfterMs: f.retryAfterMs });
  const kept = out as { -readonly [K in keyof Failure]: Failure[K] };
  if (f.issues !== undefined && f.issues.length > 0) kept.issues = f.issues.map((i) => ({ path: text(i.path), code: i.code, message: text(i.message) }));
  if (f.effects !== undefined && f.effects.length > 0) kept.effects = f.effects.map((e) => ({ kind: text(e.kind), ref: text(e.ref) }));
  return out;
}

const EFFECTS: readonly unknown[] = ["none", "applied", "unknown"];
const isText = (v: unknown): v is string => typeof v === "string";
const isRecordOf = (v: unknown, keys: readonly string[]): v is Record<string, string> =>
  typeof v === "object" && v !== null && keys.every((k) => isText((v as Record<string, unknown>)[k]));

/**
 * A stored failure as the envelope's failure, built from the fields an envelope has and only when
 * each is what the gate stores (a row another program wrote or someone edited is unreadable, not
 * handed on: a non-string issue path would break the record's path masking, and more).
 */
function storedFailure(body: Record<string, unknown>): Failure | undefined {
  const { code, message, retryable, effect, issues, retryAfterMs, effects } = body;
  if (!(TOOL_ERROR_CODES as readonly unknown[]).includes(code) || !isText(message) || typeof retryable !== "boolean" || !EFFECTS.includes(effect)) return undefined;
  if (issues !== undefined && !(Array.isArray(issues) && issues.every((i) => isRecordOf(i, ["path", "code", "message"])))) return undefined;
  if (retryAfterMs !== undefined && !(typeof retryAfterMs === "number" && Number.isFinite(retryAfterMs) && retryAfterMs >= 0)) return undefined;
  if (effects !== undefined && !(Array.isArray(effects) && effects.every((e) => isRecordOf(e, ["kind", "ref"])))) return undefined;
  const checked = { code, message, retryable, effect, retryAfterMs, issues, effects } as unknown as Failure; // each field checked above
  return failureOf(checked, (s) => s);
}

function checkEffect(e: EffectRef, g: ResolvedGate): EffectRef {
  const ok = (v: unknown): v is string => typeof v === "string" && v.length > 0 && v.length <= 200;
  if (typeof e !== "object" || e === null || !ok(e.kind) || !ok(e.ref)) {
    throw new TypeError("recordEffect: kind and ref must be non-empty strings of at most 200 characters");
  }
  return { kind: g.redact(e.kind), ref: g.redact(e.ref) };
}

/**
 * How long a claim is presumed alive: everything a call may wait for, each to its timeout — per
 * attempt the attempt, the wait for a timed-out attempt to stop and the state check; once the
 * state check of a resumed claim, and the async business check — plus backoff and slack.
 */
function leaseFor(rt: ToolRuntime): number {
  return rt.timeoutMs * (3 * rt.retry.attempts + 2) + rt.retry.capMs * rt.retry.attempts + 5_000;
}
