/**
 * Gate options: their defaults, their checks (misuse throws ToolgateConfigError at creation),
 * and the per-tool runtime state built from them.
 * @module
 */
import { ToolgateConfigError } from "./errors.js";
import { DEFAULT_LIMITS, compileLimits, type CompiledLimits, type Limits } from "./harden.js";
import { _checkRedactOptions, createRedactor, type RedactOptions, type Redactor } from "./redact.js";
import { _checkRetry, isTool, type AnyTool, type InputOf, type Principal, type ToolEffect } from "./tool.js";
import type { AttemptEvent, ToolRuntime } from "./execute.js";
import { createRetryBudget, UNLIMITED_BUDGET, type RetryBudget, type RetryBudgetOptions } from "./policy/budget.js";
import { createBreaker, type BreakerOptions, type BreakerState } from "./policy/breaker.js";
import { guardHandler, safeHook, warnOnceOnHookError, type CallRecord, type HookErrorHandler } from "./hooks.js";
import { listingFor, type ToolListing } from "./json-schema.js";
import { compileUnknownKeyCheck, type UnknownKeyCheck } from "./unknown-keys.js";
import { compileFastInput, compileFastOutput } from "./fast-path.js";
import { checkKnownKeys } from "./known-keys.js";
import type { JsonSchema } from "./standard.js";
import type { Ledger } from "./ledger/types.js";

/** What `authorize` and `approve` see: everything decided so far, never raw text. */
export interface CallRequest {
  readonly tool: string;
  readonly version: string;
  readonly effect: ToolEffect;
  readonly callId: string;
  readonly principal: Principal | undefined;
  /** The validated input. */
  readonly input: unknown;
  readonly meta: Readonly<Record<string, unknown>>;
  /**
   * Aborts when the gate stops waiting for the decision (close a prompt on it): the caller's signal
   * aborted (with its reason), or the hook's time ran out (with a `HookTimeoutError`; see
   * `authorizeTimeoutMs` and `approvalTimeoutMs`). An answer given after that is ignored. It is the
   * gate's signal, not the caller's (which may be absent), made when first read; read after a
   * decision made in time, it never aborts.
   */
  readonly signal: AbortSignal;
}

/**
 * The {@link CallRequest} for a call to one of the tools `T`: a union over the tools, `tool` naming
 * one and `input` its validated input, so narrowing on `tool` types `input`.
 * @example
 * createGate({ tools: [getOrder, createRefund], authorize: (c) => c.tool !== "create_refund" || c.input.amountCents <= 10_000 });
 */
export type CallRequestOf<T extends readonly AnyTool[]> = T[number] extends infer U
  ? U extends AnyTool
    ? Omit<CallRequest, "tool" | "input"> & { readonly tool: U["name"]; readonly input: InputOf<U> }
    : never
  : never;

/** `authorize` answers `true`/`false`, or `{ allow, reason }` (the reason is shown, after redaction). */
export type AuthorizeDecision = boolean | { readonly allow: boolean; readonly reason?: string };

/** Gate-wide retry settings. */
export interface GateRetryOptions {
  /** Total executions of a read, including the first. Default 3, at most 5. */
  readonly attempts?: number;
  /** Backoff base, ms. Default 100. */
  readonly baseMs?: number;
  /** Backoff cap, ms; a `retryAfterMs` above it is returned to the caller instead of waited. Default 2,000. */
  readonly capMs?: number;
  /** The retry budget shared by all tools, or `false` to disable. Default `{ ratio: 0.1, reserve: 10 }`. */
  readonly budget?: RetryBudgetOptions | false;
}

/** Options of {@link createGate}. Every field but `tools` is optional. */
export interface GateOptions<T extends readonly AnyTool[] = readonly AnyTool[]> {
  /** The tools this gate serves (names must be unique). */
  readonly tools: T;
  /** Payload limits; see {@link DEFAULT_LIMITS}. */
  readonly limits?: Partial<Limits>;
  /** Retry policy for reads (writes are never retried without a guarantee). */
  readonly retry?: GateRetryOptions;
  /** Per-tool circuit breaker, or `false`. Default `{ threshold: 5, halfOpenAfterMs: 10_000 }`. */
  readonly breaker?: BreakerOptions | false;
  /** Per-attempt timeout for tools without their own, ms. Default 30,000. */
  readonly timeoutMs?: number;
  /** Max calls of a tool in their execution step (attempts, backoffs), per tool, for tools without their own. Default 64. A call stops counting when it answers, even if a tool that timed out keeps running. */
  readonly concurrency?: number;
  /** Secret patterns scrubbed from every message and record. */
  readonly redact?: RedactOptions;
  /**
   * Durable record of write calls (`toolgate/ledger`): idempotency keys, replays, effects,
   * crash recovery. Default: none (keys are still passed to tools as `ctx.idempotencyKey`).
   */
  readonly ledger?: Ledger;
  /** Decide whether the principal may make this call (after validation, before any effect). `call.input` is typed by `call.tool`. */
  authorize?(call: CallRequestOf<T>): AuthorizeDecision | Promise<AuthorizeDecision>;
  /** Ask a person to approve a call to a tool that requires approval. Absent: such calls are DENIED. `call.input` is typed by `call.tool`. */
  approve?(call: CallRequestOf<T>): boolean | Promise<boolean>;
  /** How long an `authorize` that returns a promise may take, ms; past it the call is DENIED ("Authorization could not be decided"). Default 10,000. */
  readonly authorizeTimeoutMs?: number;
  /** How long an `approve` that returns a promise may take, ms; past it the call is DENIED ("not approved"). Default 600,000 (ten minutes). */
  readonly approvalTimeoutMs?: number;
  /** One record per call (never the payload). */
  onCall?(record: CallRecord): unknown;
  /** One event per execution attempt. */
  onAttempt?(event: AttemptEvent): unknown;
  /** Breaker state changes, per tool. */
  onBreakerChange?(event: { readonly tool: string; readonly state: BreakerState }): unknown;
  /** Where hook failures go. Default: one process warning per hook. What this handler throws or rejects with is dropped. */
  onHookError?: HookErrorHandler;
  /** Random source for backoff jitter, in [0, 1). Default `Math.random`. */
  random?(): number;
}

/** Everything a gate needs at call time, resolved once. */
export interface ResolvedGate {
  readonly runtimes: ReadonlyMap<string, ToolRuntime>;
  readonly listings: readonly ToolListing[];
  readonly limits: CompiledLimits;
  readonly redact: Redactor;
  readonly ledger: Ledger | undefined;
  readonly budget: RetryBudget;
  readonly authorize: GateOptions["authorize"];
  readonly approve: GateOptions["approve"];
  readonly authorizeTimeoutMs: number;
  readonly approvalTimeoutMs: number;
  readonly onCall: ((r: CallRecord) => void) | undefined;
  readonly onAttempt: ((e: AttemptEvent) => void) | undefined;
  readonly onHookError: HookErrorHandler;
  readonly random: () => number;
}

/** The keys of {@link GateOptions}. */
const GATE_KEYS = ["tools", "limits", "retry", "breaker", "timeoutMs", "concurrency", "redact", "ledger", "authorize", "approve", "authorizeTimeoutMs", "approvalTimeoutMs", "onCall", "onAttempt", "onBreakerChange", "onHookError", "random"];

function bad(code: string, message: string): never {
  throw new ToolgateConfigError(code, `createGate: ${message}`);
}

function positiveInt(v: unknown, max: number): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= 1 && v <= max;
}

/** Check options and build the runtime. Throws ToolgateConfigError on misuse. */
export function resolveGate(o: GateOptions): ResolvedGate {
  if (typeof o !== "object" || o === null) bad("E_GATE", "expected an options object");
  checkKnownKeys(o, GATE_KEYS, "", (m) => bad("E_GATE_OPTIONS", m));
  if (!Array.isArray(o.tools) || o.tools.length === 0) bad("E_GATE_TOOLS", "tools must be a non-empty array of defineTool(...) values");
  if (o.limits !== undefined) {
    if (typeof o.limits !== "object" || o.limits === null) bad("E_GATE_LIMITS", "limits must be an object");
    checkKnownKeys(o.limits, Object.keys(DEFAULT_LIMITS), "limits.", (m) => bad("E_GATE_LIMITS", m));
  }
  if (o.retry !== undefined) {
    if (typeof o.retry !== "object" || o.retry === null) {
      bad("E_GATE_RETRY", "retry must be an object (retry: { attempts: 1 } for no retries; retry: false is per tool, in defineTool)");
    }
    checkKnownKeys(o.retry, ["attempts", "baseMs", "capMs", "budget"], "retry.", (m) => bad("E_GATE_RETRY", m));
    const budget: unknown = o.retry.budget;
    if (budget !== undefined && budget !== false) {
      if (typeof budget !== "object" || budget === null) bad("E_GATE_RETRY", "retry.budget must be an object or false");
      checkKnownKeys(budget, ["ratio", "reserve"], "retry.budget.", (m) => bad("E_GATE_RETRY", m));
    }
  }
  if (o.breaker !== undefined && o.breaker !== false) {
    if (typeof o.breaker !== "object" || o.breaker === null) bad("E_GATE_BREAKER", "breaker must be an object or false");
    checkKnownKeys(o.breaker, ["threshold", "halfOpenAfterMs"], "breaker.", (m) => bad("E_GATE_BREAKER", m));
  }
  if (o.redact !== undefined) _checkRedactOptions(o.redact, (m) => bad("E_GATE_REDACT", m));
  const limits: Limits = { ...DEFAULT_LIMITS, ...o.limits };
  if (!positiveInt(limits.maxBytes, 2 ** 31)) bad("E_GATE_LIMITS", "limits.maxBytes must be a positive integer");
  if (!positiveInt(limits.maxDepth, 1000)) bad("E_GATE_LIMITS", "limits.maxDepth must be an integer from 1 to 1000");
  if (!Array.isArray(limits.forbiddenKeys) || !limits.forbiddenKeys.every((k) => typeof k === "string")) {
    bad("E_GATE_LIMITS", "limits.forbiddenKeys must be an array of strings");
  }
  const retry = o.retry ?? {};
  _checkRetry(retry, (m) => bad("E_GATE_RETRY", m));
  const timeoutMs = o.timeoutMs ?? 30_000;
  if (!positiveInt(timeoutMs, 2 ** 31 - 1)) bad("E_GATE_TIMEOUT", "timeoutMs must be a positive integer (ms)");
  const authorizeTimeoutMs = o.authorizeTimeoutMs ?? 10_000;
  if (!positiveInt(authorizeTimeoutMs, 2 ** 31 - 1)) bad("E_GATE_TIMEOUT", "authorizeTimeoutMs must be a positive integer (ms)");
  const approvalTimeoutMs = o.approvalTimeoutMs ?? 600_000;
  if (!positiveInt(approvalTimeoutMs, 2 ** 31 - 1)) bad("E_GATE_TIMEOUT", "approvalTimeoutMs must be a positive integer (ms)");
  const concurrency = o.concurrency ?? 64;
  if (!positiveInt(concurrency, 1_000_000)) bad("E_GATE_CONCURRENCY", "concurrency must be a positive integer");
  if (o.breaker !== undefined && o.breaker !== false) {
    const b = o.breaker;
    if (b.threshold !== undefined && !positiveInt(b.threshold, 1_000_000)) bad("E_GATE_BREAKER", "breaker.threshold must be a positive integer");
    if (b.halfOpenAfterMs !== undefined && !(b.halfOpenAfterMs >= 0 && Number.isFinite(b.halfOpenAfterMs))) {
      bad("E_GATE_BREAKER", "breaker.halfOpenAfterMs must be a finite number ≥ 0");
    }
  }
  if (retry.budget !== undefined && retry.budget !== false) {
    const { ratio, reserve } = retry.budget;
    if (ratio !== undefined && !(typeof ratio === "number" && ratio >= 0 && ratio <= 1)) bad("E_GATE_RETRY", "retry.budget.ratio must be a number in [0, 1]");
    if (reserve !== undefined && !(typeof reserve === "number" && reserve >= 0 && Number.isFinite(reserve))) bad("E_GATE_RETRY", "retry.budget.reserve must be a finite number ≥ 0");
  }
  for (const hook of ["authorize", "approve", "onCall", "onAttempt", "onBreakerChange", "onHookError", "random"] as const) {
    if (o[hook] !== undefined && typeof o[hook] !== "function") bad("E_GATE_HOOK", `${hook} must be a function`);
  }
  if (o.ledger !== undefined) {
    const l = o.ledger as unknown as Record<string, unknown> | null;
    const methods = ["claim", "recordEffect", "settle"];
    if (typeof l !== "object" || l === null || methods.some((m) => typeof l[m] !== "function")) {
      bad("E_GATE_LEDGER", "ledger must come from memoryLedger(), sqliteLedger() or postgresLedger() (toolgate/ledger)");
    }
  }
  // Guarded once here: the gate and the ledger steps call it directly, and it must never throw into a call.
  const onHookError = guardHandler(o.onHookError ?? warnOnceOnHookError);
  const onBreaker = safeHook("onBreakerChange", o.onBreakerChange?.bind(o), onHookError);

  const runtimes = new Map<string, ToolRuntime>();
  const listings: ToolListing[] = [];
  const compiledLimits = compileLimits(limits);
  for (const tool of o.tools as readonly unknown[]) {
    if (!isTool(tool)) bad("E_GATE_TOOLS", "every tool must come from defineTool(...)");
    if (runtimes.has(tool.name)) bad("E_GATE_DUPLICATE", `two tools are named ${JSON.stringify(tool.name)}`);
    const l = listingFor(tool);
    if (!l.ok) bad("E_GATE_SCHEMA", `tool ${JSON.stringify(tool.name)}: its input schema cannot be represented as JSON Schema (${l.reason})`);
    listings.push(l.listing);
    let unknownKeys: UnknownKeyCheck | undefined;
    if (tool.unknownKeys !== "strip") {
      try {
        unknownKeys = compileUnknownKeyCheck(l.listing.inputSchema);
      } catch (e) {
        bad("E_GATE_SCHEMA", `tool ${JSON.stringify(tool.name)}: its advertised input schema does not compile (${e instanceof Error ? e.message : String(e)})`);
      }
    }
    const own = tool.retry === false ? { attempts: 1 } : (tool.retry ?? {});
    const breaker =
      o.breaker === false ? undefined : createBreaker(o.breaker ?? {}, onBreaker === undefined ? undefined : (state) => onBreaker({ tool: tool.name, state }));
    runtimes.set(tool.name, {
      tool,
      retry: {
        attempts: own.attempts ?? retry.attempts ?? 3,
        baseMs: own.baseMs ?? retry.baseMs ?? 100,
        capMs: own.capMs ?? retry.capMs ?? 2_000,
      },
      timeoutMs: tool.timeoutMs ?? timeoutMs,
      concurrency: tool.concurrency ?? concurrency,
      breaker,
      unknownKeys,
      // A top-level `_meta` field is never the tool's (it is split off first): no fast path then.
      fastInput: hasMetaField(l.listing.inputSchema) ? undefined : compileFastInput(tool.input, compiledLimits),
      fastOutput: compileFastOutput(tool.output),
      inFlight: 0,
    });
  }
  return {
    runtimes,
    listings: Object.freeze(listings),
    limits: compiledLimits,
    redact: createRedactor(o.redact),
    ledger: o.ledger,
    budget: retry.budget === false ? UNLIMITED_BUDGET : createRetryBudget(retry.budget),
    authorize: o.authorize?.bind(o),
    approve: o.approve?.bind(o),
    authorizeTimeoutMs,
    approvalTimeoutMs,
    onCall: safeHook("onCall", o.onCall?.bind(o), onHookError),
    onAttempt: safeHook("onAttempt", o.onAttempt?.bind(o), onHookError),
    onHookError,
    random: o.random?.bind(o) ?? Math.random,
  };
}

function hasMetaField(schema: JsonSchema): boolean {
  // Anywhere in the advertised schema (a root object inside `anyOf`, as a nullable one is, hides it
  // from the root's `properties`): once per tool, and a tool that names `_meta` at all is rare.
  try {
    return JSON.stringify(schema).includes('"_meta"');
  } catch {
    return true;
  }
}
