/**
 * The proxy's own checks around its gate, in the pipeline's order: a tool refused by its pin is
 * DENIED first (it has no contract to validate against); then the arguments are validated; only a
 * valid call is checked against the upstream's state (restarting: RETRYABLE, nothing sent) and
 * takes a token of the tool's rate limit. So an invalid call is always INVALID_INPUT and never
 * spends a rate token.
 *
 * When the upstream is up and the tool has no rate limit (the common case), the call goes to the
 * gate directly and nothing is added. Otherwise the arguments are first run through a second gate
 * over the same input schemas and limits whose tools do nothing (so hardening, `_meta` handling
 * and the issues are exactly the real gate's), then the state and the rate limit are checked,
 * then the real gate runs the call.
 * @module
 */
import { _UNKNOWN_TOOL_MESSAGE, createGate, type CallOptions, type Gate } from "../../gate.js";
import { defineTool, type AnyTool } from "../../tool.js";
import type { Limits } from "../../harden.js";
import type { ToolFailure, ToolResult } from "../../result.js";
import { RECORD_REFUSAL, _recordRefusal, type RefusalRecorder } from "../../refusal.js";
import { _withoutAttemptListener } from "../../attempt-seam.js";
import { newCallId } from "../../call-id.js";
import { ajvStandardSchema } from "./ajv.js";
import type { Bucket } from "./rate.js";
import type { Upstream } from "./upstream.js";

const MSG = {
  changed: "The tool's definition changed since it was pinned; an operator must re-approve it (toolgate proxy --update-lock)",
  changedUnlocked: "The tool's definition changed since the proxy started; it is refused until the proxy restarts",
  unpinned: "The tool is not pinned in the lock file; an operator must approve it (toolgate proxy --update-lock)",
  duplicate: "The upstream lists this tool more than once; it is not served until the upstream lists it once",
  removed: "The upstream no longer offers this tool",
  unknownTool: _UNKNOWN_TOOL_MESSAGE,
  down: "The upstream server is restarting; try again later",
  rate: "The tool's rate limit is reached; try again later",
} as const;

/** Refusal reasons that answer DENIED (the others leave the tool unknown). */
export const DUPLICATE = "listed twice by the upstream";
/** The reason of a served tool the upstream's list no longer has. */
export const REMOVED = "removed by the upstream";
const DENIED_MESSAGE: ReadonlyMap<string, string> = new Map([
  ["changed", MSG.changed],
  ["unpinned", MSG.unpinned],
  [DUPLICATE, MSG.duplicate],
  [REMOVED, MSG.removed],
]);

/**
 * The tool a gate with nothing to serve is built with (a gate needs one): never listed, and a call
 * to it is UNKNOWN_TOOL like any other name the proxy does not serve.
 */
export const PLACEHOLDER_TOOL = "__toolgate_none__";

/** A failure the proxy answers itself: nothing was executed (`attempts: 0`, `effect: none`). */
export function failure(name: string, version: string, callId: string, code: "DENIED" | "RETRYABLE" | "UNKNOWN_TOOL", message: string, retryAfterMs?: number): ToolFailure {
  return {
    ok: false,
    code,
    message,
    retryable: code === "RETRYABLE",
    ...(retryAfterMs !== undefined ? { retryAfterMs: Math.max(1, Math.ceil(retryAfterMs)) } : {}),
    effect: "none",
    meta: { tool: name, version, callId, attempts: 0, durationMs: 0 },
  };
}

/** What the admission checks read. */
export interface AdmissionState {
  /** Tool name → why it is refused. */
  readonly refused: ReadonlyMap<string, string>;
  /** Tool name → the first 12 hex digits of its current definition's hash (served or refused). */
  readonly versions: ReadonlyMap<string, string>;
  readonly buckets: ReadonlyMap<string, Bucket>;
  readonly upstream: Upstream;
  /** Whether the pins come from a lock file; without one, a changed tool's fix is a restart, not `--update-lock`. */
  readonly locked: boolean;
}

/** The DENIED message of a tool refused by its pin (or listed twice, or removed), else undefined. */
export function deniedMessage(s: Pick<AdmissionState, "refused" | "locked">, name: string): string | undefined {
  const why = s.refused.get(name);
  if (why === "changed" && !s.locked) return MSG.changedUnlocked;
  return why === undefined ? undefined : DENIED_MESSAGE.get(why);
}

/** DENIED for a tool refused by its pin (or listed twice), else undefined. */
export function deniedFor(s: AdmissionState, name: string, callId: string): ToolFailure | undefined {
  const message = deniedMessage(s, name);
  return message === undefined ? undefined : failure(name, s.versions.get(name) ?? "", callId, "DENIED", message);
}

/** A gate over the same input schemas whose tools do nothing: validation only. */
function checkGate(tools: readonly AnyTool[], limits: Partial<Limits> | undefined): Gate | undefined {
  if (tools.length === 0) return undefined;
  const anything = ajvStandardSchema({}, Object.assign(() => true, { errors: null }) as never);
  return createGate({
    tools: tools.map((t) =>
      defineTool({
        name: t.name,
        version: t.version,
        description: t.description,
        input: t.input,
        output: anything,
        effect: "read",
        unknownKeys: "strip",
        concurrency: 1_000_000,
        retry: false,
        execute: () => ({}),
      }),
    ),
    breaker: false,
    ...(limits !== undefined ? { limits } : {}),
  });
}

/**
 * The gate the proxy serves: `gate` with the admission checks (see the module comment).
 * `tools`: the served tools (their input schemas back the validation-only gate).
 */
export function admissionGate(gate: Gate, tools: readonly AnyTool[], limits: Partial<Limits> | undefined, s: AdmissionState): Gate {
  const check = checkGate(tools, limits);
  const served = new Set(tools.map((t) => t.name));
  const slow = async (name: string, args: unknown, opts: CallOptions | undefined, bucket: Bucket | undefined): Promise<ToolResult> => {
    const callId = opts?.callId ?? newCallId();
    const o: CallOptions = { ...opts, callId };
    // The argument check is a call of the proxy's own: its no-op attempt is not the caller's.
    const pre = await check!.call(name, args, _withoutAttemptListener(o));
    if (!pre.ok) return pre;
    const version = s.versions.get(name) ?? "";
    if (s.upstream.state() !== "up") return failure(name, version, callId, "RETRYABLE", MSG.down, s.upstream.retryAfterMs());
    const wait = bucket?.take();
    if (wait !== undefined && wait > 0) return failure(name, version, callId, "RETRYABLE", MSG.rate, wait);
    return gate.call(name, args, o);
  };
  const admission: Gate & { [RECORD_REFUSAL]: RefusalRecorder } = {
    list: () => gate.list().filter((l) => l.name !== PLACEHOLDER_TOOL),
    tool: (name) => (name === PLACEHOLDER_TOOL ? undefined : gate.tool(name)),
    // A refusal made in front of this gate (the MCP server's) is recorded by the one behind it.
    [RECORD_REFUSAL]: (f) => _recordRefusal(gate, f),
    call: ((name: string, args: unknown, opts?: CallOptions): Promise<ToolResult> => {
      if (name === PLACEHOLDER_TOOL) return Promise.resolve(failure(name, "", opts?.callId ?? newCallId(), "UNKNOWN_TOOL", MSG.unknownTool));
      if (s.refused.has(name)) {
        const denied = deniedFor(s, name, opts?.callId ?? newCallId());
        if (denied !== undefined) return Promise.resolve(denied);
      }
      const bucket = s.buckets.get(name);
      if (!served.has(name) || (bucket === undefined && s.upstream.state() === "up")) return gate.call(name, args, opts);
      return slow(name, args, opts, bucket);
    }) as Gate["call"],
  };
  return admission;
}
