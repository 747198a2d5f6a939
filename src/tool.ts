/**
 * `defineTool` and the `Tool` type: one schema per tool as the single source for the compiler,
 * the protocol and the runtime.
 * @module
 */
import type { StandardSchemaV1 } from "@standard-schema/spec";
import { isToolError, ToolgateConfigError, type FailureKind, type ToolError } from "./errors.js";
import { isStandardSchema } from "./standard.js";
import { checkKnownKeys } from "./known-keys.js";
import type { EffectRef } from "./result.js";

/** Who is calling, as the host authenticated them. toolgate never authenticates. */
export interface Principal {
  readonly id: string;
  readonly scopes?: readonly string[];
}

/** What `execute` receives besides its validated input. */
export interface ToolContext {
  /** Aborted on timeout or when the caller's signal aborts. */
  readonly signal: AbortSignal;
  /** The call's id (stable across attempts). */
  readonly callId: string;
  /** 1 for the first execution, 2 for the first retry… */
  readonly attempt: number;
  /** The reserved `_meta` envelope of the arguments (never part of the input). */
  readonly meta: Readonly<Record<string, unknown>>;
  /** The call's idempotency key, when one was given. Pass it to a downstream that honours keys. */
  readonly idempotencyKey: string | undefined;
  /** The caller, as given in `gate.call(..., { principal })`. */
  readonly principal: Principal | undefined;
  /**
   * Record a partial effect (what kind of thing was committed and its opaque reference, never a
   * payload). With a ledger it is durable before the promise resolves; it rejects if the ledger
   * cannot write it. A failure after a recorded effect reports `effect: "applied"` and lists the refs.
   * @example await ctx.recordEffect({ kind: "refund", ref: refund.id });
   */
  recordEffect(effect: EffectRef): Promise<void>;
}

/**
 * What `reconcile` answers after an unknown write outcome: the effect landed (with the output the
 * call would have returned, checked by the output schema), certainly did not land, or cannot tell.
 */
export type ReconcileVerdict<O = unknown> =
  | { readonly status: "applied"; readonly output: O }
  | { readonly status: "none" }
  | { readonly status: "unknown" };

/** What a classifier answers: a kind, a kind with a wait, or `undefined` to use the default. */
export type Classification = FailureKind | { readonly kind: FailureKind; readonly retryAfterMs?: number } | undefined;

/** What `check` answers: nothing (or `true`) to accept, a `reject(...)` to refuse. */
export type CheckVerdict = void | undefined | true | ToolError;

/** Per-tool retry overrides, or `false` for no retries. */
export interface RetryOverrides {
  /** Total executions including the first, 1 to 5. */
  readonly attempts?: number;
  /** Backoff base in ms. */
  readonly baseMs?: number;
  /** Backoff cap in ms. */
  readonly capMs?: number;
}

/** Decides from the validated input whether a person must approve. (Method form: bivariant, so any tool fits `AnyTool`.) */
export type ApprovalPredicate<I> = { bivarianceHack(input: I): boolean }["bivarianceHack"];

/** Does this tool read, or change the world? Writes are never retried without a guarantee. */
export type ToolEffect = "read" | "write";

/** The definition a user writes. `I` and `O` are Standard Schemas (zod 4 first). */
export interface ToolDefinition<
  N extends string = string,
  I extends StandardSchemaV1 = StandardSchemaV1,
  O extends StandardSchemaV1 = StandardSchemaV1,
> {
  /** Unique name, `[A-Za-z0-9_-]{1,64}` (portable across MCP, OpenAI and Anthropic). */
  readonly name: N;
  /** The schema version, carried in every result and record. */
  readonly version: string;
  /** What the tool does, for the model. */
  readonly description: string;
  /** Input schema. Extra keys are refused unless `unknownKeys: "strip"`. */
  readonly input: I;
  /** Output schema: what the service returns must pass it before it reaches the agent. */
  readonly output: O;
  /** `read` may be retried on transient failures; `write` never is without a ledger guarantee. */
  readonly effect: ToolEffect;
  /** Per-attempt timeout in ms. Default: the gate's (30,000). */
  readonly timeoutMs?: number;
  /** Retry overrides, or `false` for a single attempt. */
  readonly retry?: RetryOverrides | false;
  /** How to refuse unknown keys: `reject` (default) or `strip` (drop silently). */
  readonly unknownKeys?: "reject" | "strip";
  /** Max attempts the gate is waiting for; further calls answer RETRYABLE. Default: the gate's (64). A timed-out or cancelled attempt stops counting, even if it ignores `ctx.signal`. */
  readonly concurrency?: number;
  /** A person must approve: `true`, or a predicate on the validated input. */
  readonly approval?: boolean | ApprovalPredicate<StandardSchemaV1.InferOutput<I>>;
  /**
   * Derive the idempotency key of a write from its validated input (a business identifier, e.g.
   * `` `refund:${input.orderId}` ``); `gate.call(..., { idempotencyKey })` wins over it. Keys are
   * scoped per tool and per principal. Return `undefined` for no key. Writes only.
   */
  idempotencyKey?(input: StandardSchemaV1.InferOutput<I>): string | undefined;
  /**
   * The downstream deduplicates on `ctx.idempotencyKey`, so a write with a key may be retried on
   * transient failures and re-executed after a crash. Default `false`. Writes only.
   */
  readonly idempotentDownstream?: boolean;
  /**
   * A state check the gate runs after an unknown write outcome (timeout, transient or unclassified
   * failure, or a claim left in flight by a crashed process): `applied` continues on the success
   * path with `output`, `none` makes a retry safe, `unknown` answers FAILED with effect `unknown`.
   * Writes only.
   */
  reconcile?(
    input: StandardSchemaV1.InferOutput<I>,
    ctx: ToolContext,
  ): ReconcileVerdict<StandardSchemaV1.InferInput<O>> | Promise<ReconcileVerdict<StandardSchemaV1.InferInput<O>>>;
  /** Map a thrown error to a kind; `undefined` falls back to the default classifier. */
  classify?(error: unknown): Classification;
  /**
   * Business rules on a valid output: return `reject(...)` to answer REJECTED (on a write,
   * `reject(msg, { effect })` says what landed; default `none`). On a write any other verdict is
   * FAILED with effect `applied`: the write ran.
   */
  check?(
    output: StandardSchemaV1.InferOutput<O>,
    input: StandardSchemaV1.InferOutput<I>,
  ): CheckVerdict | Promise<CheckVerdict>;
  /** Do the work. Throw `reject`, `transient` or `denied` to classify; anything else is classified. */
  execute(
    input: StandardSchemaV1.InferOutput<I>,
    ctx: ToolContext,
  ): Promise<StandardSchemaV1.InferInput<O>> | StandardSchemaV1.InferInput<O>;
}

const TOOL_BRAND = Symbol.for("toolgate.Tool");

/** A checked, frozen tool definition. */
export type Tool<
  N extends string = string,
  I extends StandardSchemaV1 = StandardSchemaV1,
  O extends StandardSchemaV1 = StandardSchemaV1,
> = ToolDefinition<N, I, O> & { readonly [TOOL_BRAND]: true };

/** Any tool, whatever its schemas. */
// Method syntax in ToolDefinition makes execute/check bivariant, so every Tool fits here.
export type AnyTool = Tool<string, StandardSchemaV1, StandardSchemaV1>;

/** The validated input type of a tool. */
export type InputOf<T> = T extends Tool<string, infer I, StandardSchemaV1> ? StandardSchemaV1.InferOutput<I> : never;
/** The arguments a caller may send a tool: its input schema's input side (a field with a default is optional). */
export type ArgsOf<T> = T extends Tool<string, infer I, StandardSchemaV1> ? StandardSchemaV1.InferInput<I> : never;
/** The data type of a tool's successful result. */
export type OutputOf<T> = T extends Tool<string, StandardSchemaV1, infer O> ? StandardSchemaV1.InferOutput<O> : never;

/** True for a value made by {@link defineTool}. */
export function isTool(v: unknown): v is AnyTool {
  return typeof v === "object" && v !== null && (v as Record<symbol, unknown>)[TOOL_BRAND] === true;
}

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** An object literal, `Object.create(null)`, or a plain object from another realm (a vm context). */
function isPlainObject(o: object): boolean {
  const proto: unknown = Object.getPrototypeOf(o);
  if (proto === null || proto === Object.prototype) return true;
  return Object.getPrototypeOf(proto) === null && (proto as { constructor?: { name?: unknown } }).constructor?.name === "Object";
}

/** The keys of {@link ToolDefinition}. */
const TOOL_KEYS = ["name", "version", "description", "input", "output", "effect", "timeoutMs", "retry", "unknownKeys", "concurrency", "approval", "idempotencyKey", "idempotentDownstream", "reconcile", "classify", "check", "execute"];

function bad(code: string, name: string, message: string): never {
  throw new ToolgateConfigError(code, `defineTool(${JSON.stringify(name)}): ${message}`);
}

function positiveInt(v: unknown, max: number): boolean {
  return typeof v === "number" && Number.isInteger(v) && v >= 1 && v <= max;
}

/** Check retry overrides; shared with the gate's own retry options. */
export function _checkRetry(r: RetryOverrides, where: (m: string) => never): void {
  if (r.attempts !== undefined && !positiveInt(r.attempts, 5)) where("retry.attempts must be an integer from 1 to 5");
  if (r.baseMs !== undefined && !(typeof r.baseMs === "number" && r.baseMs >= 0 && Number.isFinite(r.baseMs))) {
    where("retry.baseMs must be a finite number ≥ 0");
  }
  if (r.capMs !== undefined && !(typeof r.capMs === "number" && r.capMs >= 0 && Number.isFinite(r.capMs))) {
    where("retry.capMs must be a finite number ≥ 0");
  }
}

/**
 * Define a tool. Checks the definition and throws {@link ToolgateConfigError} on misuse; input and
 * output types are inferred from the schemas.
 * @example
 * const getOrder = defineTool({
 *   name: "get_order", version: "1", description: "Look up a customer's orders",
 *   input: z.object({ customerId: z.string().min(1) }),
 *   output: z.object({ found: z.boolean(), orders: z.array(z.object({ id: z.string() })) }),
 *   effect: "read",
 *   execute: ({ customerId }, { signal }) => orders.find(customerId, { signal }),
 * });
 */
export function defineTool<const N extends string, I extends StandardSchemaV1, O extends StandardSchemaV1>(
  def: ToolDefinition<N, I, O>,
): Tool<N, I, O> {
  if (typeof def !== "object" || def === null) throw new ToolgateConfigError("E_TOOL", "defineTool: expected a definition object");
  if (!isPlainObject(def)) {
    // The tool is a frozen copy of the definition's own keys: a class's methods, or keys inherited
    // from a prototype, would be lost.
    throw new ToolgateConfigError("E_TOOL", "defineTool: expected a plain object (own keys only), not a class instance or an object with a prototype of its own");
  }
  const name = def.name;
  if (typeof name !== "string" || !NAME.test(name)) bad("E_TOOL_NAME", String(name), "name must match [A-Za-z0-9_-]{1,64}");
  checkKnownKeys(def, TOOL_KEYS, "", (m) => bad("E_TOOL_OPTIONS", name, m));
  if (typeof def.version !== "string" || def.version.length === 0) bad("E_TOOL_VERSION", name, "version must be a non-empty string");
  if (typeof def.description !== "string" || def.description.length === 0) {
    bad("E_TOOL_DESCRIPTION", name, "description must be a non-empty string");
  }
  if (!isStandardSchema(def.input)) bad("E_TOOL_SCHEMA", name, "input must be a Standard Schema (e.g. a zod 4 schema)");
  if (!isStandardSchema(def.output)) bad("E_TOOL_SCHEMA", name, "output must be a Standard Schema (e.g. a zod 4 schema)");
  if (def.effect !== "read" && def.effect !== "write") bad("E_TOOL_EFFECT", name, 'effect must be "read" or "write"');
  if (typeof def.execute !== "function") bad("E_TOOL_EXECUTE", name, "execute must be a function");
  if (def.timeoutMs !== undefined && !positiveInt(def.timeoutMs, 2 ** 31 - 1)) {
    bad("E_TOOL_TIMEOUT", name, "timeoutMs must be a positive integer (ms)");
  }
  if (def.retry !== undefined && def.retry !== false) {
    if (typeof def.retry !== "object" || def.retry === null) bad("E_TOOL_RETRY", name, "retry must be an object or false");
    checkKnownKeys(def.retry, ["attempts", "baseMs", "capMs"], "retry.", (m) => bad("E_TOOL_RETRY", name, m));
    _checkRetry(def.retry, (m) => bad("E_TOOL_RETRY", name, m));
  }
  if (def.unknownKeys !== undefined && def.unknownKeys !== "reject" && def.unknownKeys !== "strip") {
    bad("E_TOOL_UNKNOWN_KEYS", name, 'unknownKeys must be "reject" or "strip"');
  }
  if (def.concurrency !== undefined && !positiveInt(def.concurrency, 1_000_000)) {
    bad("E_TOOL_CONCURRENCY", name, "concurrency must be a positive integer");
  }
  if (def.approval !== undefined && typeof def.approval !== "boolean" && typeof def.approval !== "function") {
    bad("E_TOOL_APPROVAL", name, "approval must be a boolean or a predicate");
  }
  for (const hook of ["classify", "check", "idempotencyKey", "reconcile"] as const) {
    if (def[hook] !== undefined && typeof def[hook] !== "function") bad("E_TOOL_HOOK", name, `${hook} must be a function`);
  }
  if (def.idempotentDownstream !== undefined && typeof def.idempotentDownstream !== "boolean") {
    bad("E_TOOL_IDEMPOTENCY", name, "idempotentDownstream must be a boolean");
  }
  if (def.effect === "read" && (def.idempotencyKey !== undefined || def.idempotentDownstream === true || def.reconcile !== undefined)) {
    bad("E_TOOL_IDEMPOTENCY", name, "idempotencyKey, idempotentDownstream and reconcile apply to write tools only");
  }
  return Object.freeze({ ...def, [TOOL_BRAND]: true as const });
}

/** @internal a check verdict that refuses, or undefined. */
export function _verdictError(v: unknown): ToolError | undefined {
  return isToolError(v) ? v : undefined;
}
