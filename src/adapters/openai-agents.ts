/**
 * OpenAI Agents SDK (`@openai/agents`): function tools built by the SDK's own `tool()` whose
 * `invoke` hands the model's raw argument text to the gate, and a `toolUseBehavior` that ends the
 * run when the loop policy does.
 * @module
 */
import type { FunctionTool, RunContext, ToolToFinalOutputFunction } from "@openai/agents";
import type { Gate } from "../gate.js";
import type { LoopSession } from "../loop/session.js";
import { _callThroughGate, _selected, type AdapterOptions } from "./_run.js";
import { _openAIParameters, _requireObjectRoot } from "./_openai-params.js";
import { ToolgateConfigError } from "../errors.js";

/** Options of {@link openAIAgentsTools}. */
export interface OpenAIAgentsToolOptions extends AdapterOptions {
  /** Send strict-mode schemas (the SDK's own default). Default `true`; a tool strict mode cannot take (a root that is not one object, a field that accepts any value) is sent non-strict. */
  readonly strict?: boolean;
  /** Called once per tool whose definition is inexact (a strict mapping loosened, a root union flattened); the gate still enforces the full contract. */
  onProblems?(tool: string, problems: readonly string[]): void;
}

type NonStrictParameters = FunctionTool["parameters"] & { additionalProperties: true };
type Details = { readonly toolCall?: { readonly callId: string }; readonly signal?: AbortSignal } | undefined;

/**
 * Agents SDK function tools for the gate's tools. Each call hands the model's raw argument text
 * to the gate and resolves to the model view as JSON text (`{"ok":true,"data":…}` or the
 * failure); a failed call never throws into the run. Approval stays the gate's (`approve` hook):
 * the SDK's `needsApproval` is off. Async because `@openai/agents` is loaded on first use (an
 * optional peer of toolgate), so the tools come from the same SDK instance as your `Runner`.
 *
 * The SDK renames tools (`get-order` becomes `get_order`); each still calls the gate under its own
 * name. Rejects with ToolgateConfigError `E_ADAPTER_TOOLS` when two tools would get one SDK name,
 * and `E_ADAPTER_SCHEMA` for a tool whose input is not an object nor a union of objects (a union
 * of objects is sent flattened into one object, non-strict, and reported through `onProblems`).
 *
 * Arguments that are not JSON never reach the gate: the SDK parses them before any tool runs and
 * answers the model with its own error text (and the loop session does not see that call).
 * @example
 * const session = createLoopPolicy().start();
 * const agent = new Agent({ name: "orders", tools: await openAIAgentsTools(gate, { session }), toolUseBehavior: loopToolUseBehavior(session) });
 * const result = await run(agent, "Refund order o_100");
 */
export async function openAIAgentsTools(gate: Gate, options: OpenAIAgentsToolOptions = {}): Promise<FunctionTool[]> {
  const listings = _selected(gate, options, "openAIAgentsTools");
  const sdk = await import("@openai/agents");
  const tools = listings.map((listing) => {
    const p = _openAIParameters(listing, options.strict ?? true);
    _requireObjectRoot(listing.name, p, "openAIAgentsTools");
    if (p.problems.length > 0) options.onProblems?.(listing.name, p.problems);
    const name = listing.name;
    const run = async (input: string, details: Details): Promise<string> => {
      const done = await _callThroughGate(gate, name, p.mapArgs(input), details?.toolCall?.callId ?? "", details?.signal, options);
      return JSON.stringify(done.view);
    };
    // Built by the SDK (so its approval and enablement policies are the SDK's own static ones).
    // Built non-strict and flagged afterwards: with `strict: true` the SDK would re-map the schema
    // the contract module already mapped (and strip nulls its own way).
    const base = sdk.tool({
      name,
      description: listing.description,
      parameters: structuredClone(p.parameters) as unknown as NonStrictParameters,
      strict: false,
      needsApproval: false,
      execute: (input: unknown, _ctx, details) => run(JSON.stringify(input), details),
    });
    // The SDK's invoke would re-parse the text; ours hands the raw text to the gate (duplicate keys, size).
    base.strict = p.strict;
    base.invoke = (_ctx: RunContext, input: string, details?: Details) => run(input, details);
    return base as unknown as FunctionTool;
  });
  // The SDK renames tools (every character outside A–Z, a–z, 0–9 becomes "_"): each tool still
  // calls the gate under its own name, but two tools must not end up with one name (the SDK would
  // keep one and drop the other).
  const gateNameOf = new Map<string, string>();
  tools.forEach((t, i) => {
    const own = listings[i]!.name;
    const other = gateNameOf.get(t.name);
    if (other !== undefined) {
      throw new ToolgateConfigError(
        "E_ADAPTER_TOOLS",
        `openAIAgentsTools: the Agents SDK gives ${JSON.stringify(other)} and ${JSON.stringify(own)} one name, ${JSON.stringify(t.name)} (it replaces every character outside A-Z, a-z and 0-9 with "_"); rename one, or pick one with the tools option`,
      );
    }
    gateNameOf.set(t.name, own);
  });
  return tools;
}

/**
 * A `toolUseBehavior` that ends the run when the loop policy stops or escalates (the final
 * output is the decision as JSON), and otherwise lets the model run again. When the policy's
 * turn cap is reached the run ends the same way: the run makes at most `maxTurns` model requests,
 * also when the first one admitted no gate call.
 * @example new Agent({ name, tools: await openAIAgentsTools(gate, { session }), toolUseBehavior: loopToolUseBehavior(session) })
 */
export function loopToolUseBehavior(session: LoopSession): ToolToFinalOutputFunction {
  return () => {
    // A first turn that admitted no gate call (only another tool, or argument text the SDK
    // answered itself) began no turn: it counts as turn 1 (never refused, maxTurns is at least 1).
    if (session.outcome === undefined && session.turns === 0) session.beginTurn();
    const d = session.outcome ?? session.beginTurn();
    if (d === undefined) return { isFinalOutput: false, isInterrupted: undefined };
    return { isFinalOutput: true, isInterrupted: undefined, finalOutput: JSON.stringify(d) };
  };
}
