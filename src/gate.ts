/**
 * The gate: one tool call, top to bottom. Each step lives in its own module; this file only
 * composes them, in the order the README's pipeline describes.
 * @module
 */
import type { StandardSchemaV1 } from "@standard-schema/spec";
import { newCallId } from "./call-id.js";
import { _fail, type CallMeta, type Failure, type ToolResult } from "./result.js";
import type { AnyTool, OutputOf, Principal } from "./tool.js";
import { resolveGate, type CallRequest, type GateOptions, type ResolvedGate } from "./gate-options.js";
import { hardenText, hardenValue } from "./harden.js";
import { splitMeta } from "./meta.js";
import { toSafeIssues, issue } from "./issues.js";
import { droppedKeys } from "./unknown-keys.js";
import { executeWithPolicy, failureFor, type ToolRuntime } from "./execute.js";
import type { CallScope } from "./attempt.js";
import { claimCall, settleCall, type StepDone } from "./idempotency.js";
import { classifyError } from "./policy/classify.js";
import { isPromiseLike } from "./standard.js";
import { isToolError } from "./errors.js";
import { truncate } from "./redact.js";
import type { ToolListing } from "./json-schema.js";

/** Per-call options. */
export interface CallOptions {
  /** Correlates the call (e.g. the provider's tool-call id or the JSON-RPC id). Default: a generated unique id. */
  readonly callId?: string;
  /** Makes a write safe to repeat (with a ledger). */
  readonly idempotencyKey?: string;
  /** The authenticated caller, for `authorize` and scoping. */
  readonly principal?: Principal;
  /** Cancels the call; the tool's `ctx.signal` aborts with it. */
  readonly signal?: AbortSignal;
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
  /** Each tool's name, version, description, effect and JSON Schemas (input side for arguments). */
  list(): readonly ToolListing[];
  /** Look up a tool by name. */
  tool(name: string): AnyTool | undefined;
}

const MSG = {
  unknownTool: "Unknown tool; pick one of the listed tools",
  invalidJson: "Arguments are not valid JSON",
  limits: "Arguments break the gate's payload rules; fix the listed fields",
  invalidInput: "Arguments do not match the tool's input schema; fix the listed fields",
  validatorThrew: "Arguments could not be validated",
  denied: "The caller is not authorized for this call",
  authorizeFailed: "Authorization could not be decided; the call was refused",
  notApproved: "not approved",
  invalidOutput: "The tool returned a result that breaks its output contract",
  checkFailed: "The tool's business check failed",
  callOptions: "Invalid call options",
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
  return {
    call: (name, args, opts) => callTool(g, name, args, opts) as Promise<ToolResult<never>>,
    list: () => g.listings,
    tool: (name) => g.runtimes.get(name)?.tool,
  };
}

async function callTool(g: ResolvedGate, name: string, args: unknown, opts: CallOptions | undefined): Promise<ToolResult> {
  const startedAt = Date.now();
  const t0 = performance.now();
  const rt = typeof name === "string" ? g.runtimes.get(name) : undefined;
  let callId: string;
  let attempts = 0;
  let done: Done;
  if (opts !== undefined && !validOptions(opts)) {
    callId = newCallId();
    done = { ok: false, failure: _fail("FAILED", MSG.callOptions, false, "none") };
  } else {
    callId = opts?.callId ?? newCallId();
    if (rt === undefined) {
      done = { ok: false, failure: _fail("UNKNOWN_TOOL", MSG.unknownTool, false, "none") };
    } else {
      try {
        const r = await pipeline(g, rt, args, callId, opts);
        attempts = r.attempts;
        done = r.done;
      } catch {
        done = { ok: false, failure: _fail("FAILED", MSG.internal, false, rt.tool.effect === "write" ? "unknown" : "none") };
      }
    }
  }
  return envelope(g, rt?.tool, typeof name === "string" ? name : String(name), callId, attempts, startedAt, t0, done);
}

/** The steps of one call, top to bottom. */
async function pipeline(
  g: ResolvedGate,
  rt: ToolRuntime,
  args: unknown,
  callId: string,
  opts: CallOptions | undefined,
): Promise<{ done: Done; attempts: number }> {
  const tool = rt.tool;
  const fail = (failure: Failure, attempts = 0) => ({ done: { ok: false, failure } as Done, attempts });

  // 1. Harden the raw payload: JSON text or value; size, depth, keys.
  const hardened = typeof args === "string" ? hardenText(args, g.limits) : hardenValue(args, g.limits);
  if (!hardened.ok) {
    const msg = hardened.reason === "json" ? MSG.invalidJson : MSG.limits;
    return fail(_fail("INVALID_INPUT", msg, false, "none", { issues: [hardened.issue] }));
  }

  // 2. Split the reserved `_meta` envelope.
  const split = splitMeta(hardened.value);
  if (!split.ok) return fail(_fail("INVALID_INPUT", MSG.invalidInput, false, "none", { issues: [split.issue] }));

  // 3. Validate input; refuse keys the schema dropped.
  let validated = validate(tool.input, split.input);
  if (isPromiseLike(validated)) validated = await validated;
  if (validated === "threw") {
    return fail(_fail("INVALID_INPUT", MSG.validatorThrew, false, "none", { issues: [issue("", "validator_error", MSG.validatorThrew)] }));
  }
  if (validated.issues !== undefined) {
    return fail(_fail("INVALID_INPUT", MSG.invalidInput, false, "none", { issues: toSafeIssues(validated.issues, split.input, g.redact) }));
  }
  const input = validated.value;
  if (tool.unknownKeys !== "strip") {
    const dropped = droppedKeys(split.input, input, g.redact);
    if (dropped.length > 0) return fail(_fail("INVALID_INPUT", MSG.invalidInput, false, "none", { issues: dropped }));
  }

  // 4. Authorize, then ask for approval when the tool requires it. Both before any effect.
  const request: CallRequest = {
    tool: tool.name,
    version: tool.version,
    effect: tool.effect,
    callId,
    principal: opts?.principal,
    input,
    meta: split.meta,
  };
  if (g.authorize !== undefined || (tool.approval !== undefined && tool.approval !== false)) {
    const refused = await authorizeAndApprove(g, tool, request);
    if (refused !== undefined) return fail(refused);
  }

  // 5. Claim the idempotency key (writes, with a ledger): replay, CONFLICT, or go ahead.
  let claim = claimCall(g, rt, input, { callId, meta: split.meta, idempotencyKey: opts?.idempotencyKey, principal: opts?.principal, signal: opts?.signal });
  if (isPromiseLike(claim)) claim = await claim;
  if (claim.kind === "answer") return { done: claim.done, attempts: 0 };

  // 6–8. Execute, validate output, business check; then settle the ledger with the outcome.
  const r = await executeAndVerify(g, rt, input, claim.scope);
  let settled = settleCall(g, claim, r.done, r.attempts);
  if (isPromiseLike(settled)) settled = await settled;
  return { done: settled, attempts: r.attempts };
}

/** Execute under policy, then check what came back. */
async function executeAndVerify(g: ResolvedGate, rt: ToolRuntime, input: unknown, scope: CallScope): Promise<{ done: Done; attempts: number }> {
  const tool = rt.tool;
  const fail = (failure: Failure, attempts = 0) => ({ done: { ok: false, failure } as Done, attempts });

  // 6. Execute under policy: timeout, classification, retry, breaker, concurrency.
  const exec = await executeWithPolicy(rt, input, scope, g);
  if (!exec.ok) return fail(exec.failure, exec.attempts);

  // 7. Validate output: a transport success proves no business rule.
  let out = validate(tool.output, exec.value);
  if (isPromiseLike(out)) out = await out;
  const writeEffect = tool.effect === "write" ? "applied" : "none";
  if (out === "threw" || out.issues !== undefined) {
    const issues = out === "threw" ? [issue("", "validator_error", MSG.invalidOutput)] : toSafeIssues(out.issues, exec.value, g.redact);
    return fail(_fail("INVALID_OUTPUT", MSG.invalidOutput, false, writeEffect, { issues }), exec.attempts);
  }

  // 8. Business check on the valid output.
  const verdict = tool.check === undefined ? undefined : await businessCheck(tool, out.value, input);
  if (verdict !== undefined) {
    if (verdict === "threw") return fail(_fail("FAILED", MSG.checkFailed, false, writeEffect), exec.attempts);
    return fail(failureFor(classifyError(verdict, undefined), tool.effect, g.redact), exec.attempts);
  }

  return { done: { ok: true, data: out.value }, attempts: exec.attempts };
}

function validOptions(o: CallOptions): boolean {
  if (typeof o !== "object" || o === null) return false;
  if (o.callId !== undefined && (typeof o.callId !== "string" || o.callId.length === 0 || o.callId.length > 256)) return false;
  if (o.idempotencyKey !== undefined && (typeof o.idempotencyKey !== "string" || o.idempotencyKey.length === 0 || o.idempotencyKey.length > 256)) {
    return false;
  }
  if (o.principal !== undefined && (typeof o.principal !== "object" || o.principal === null || typeof o.principal.id !== "string")) return false;
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal)) return false;
  return true;
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

async function authorizeAndApprove(g: ResolvedGate, tool: AnyTool, request: CallRequest): Promise<Failure | undefined> {
  if (g.authorize !== undefined) {
    let decision: unknown;
    try {
      decision = await g.authorize(request);
    } catch (e) {
      g.onHookError("authorize", e);
      return _fail("DENIED", MSG.authorizeFailed, false, "none");
    }
    if (decision !== true) {
      if (typeof decision === "object" && decision !== null && (decision as { allow?: unknown }).allow === true) {
        // allowed
      } else {
        const reason = typeof decision === "object" && decision !== null ? (decision as { reason?: unknown }).reason : undefined;
        const msg = typeof reason === "string" && reason.length > 0 ? truncate(g.redact(reason), 200) : MSG.denied;
        return _fail("DENIED", msg, false, "none");
      }
    }
  }
  if (tool.approval !== undefined && tool.approval !== false) {
    let needed = true;
    if (typeof tool.approval === "function") {
      try {
        needed = tool.approval(request.input) !== false;
      } catch (e) {
        g.onHookError("approval", e); // fail closed: ask
      }
    }
    if (needed) {
      if (g.approve === undefined) return _fail("DENIED", MSG.notApproved, false, "none");
      let ok: unknown;
      try {
        ok = await g.approve(request);
      } catch (e) {
        g.onHookError("approve", e);
        ok = false;
      }
      if (ok !== true) return _fail("DENIED", MSG.notApproved, false, "none");
    }
  }
  return undefined;
}

async function businessCheck(tool: AnyTool, output: unknown, input: unknown): Promise<unknown> {
  if (tool.check === undefined) return undefined;
  try {
    let v: unknown = tool.check(output, input);
    if (isPromiseLike(v)) v = await v;
    if (v === undefined || v === true) return undefined;
    return isToolError(v) ? v : "threw";
  } catch (e) {
    return isToolError(e) ? e : "threw";
  }
}

function envelope(
  g: ResolvedGate,
  tool: AnyTool | undefined,
  name: string,
  callId: string,
  attempts: number,
  startedAt: number,
  t0: number,
  done: Done,
): ToolResult {
  const durationMs = Math.round((performance.now() - t0) * 1000) / 1000;
  const version = tool?.version ?? "";
  const meta: CallMeta =
    done.replayed === true ? { tool: name, version, callId, attempts, durationMs, replayed: true } : { tool: name, version, callId, attempts, durationMs };
  const result: ToolResult = done.ok ? { ok: true, data: done.data, meta } : { ok: false, ...done.failure, meta };
  if (g.onCall !== undefined) {
    g.onCall({
      tool: name,
      version: meta.version,
      callId,
      ok: done.ok,
      code: done.ok ? "OK" : done.failure.code,
      attempts,
      durationMs,
      effect: done.ok ? (tool?.effect === "write" ? "applied" : "none") : done.failure.effect,
      retryable: done.ok ? false : done.failure.retryable,
      replayed: done.replayed === true,
      startedAt,
      ...(!done.ok && done.failure.issues !== undefined ? { issuePaths: done.failure.issues.map((i) => i.path) } : {}),
    });
  }
  return result;
}
