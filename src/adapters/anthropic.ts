/**
 * Raw Anthropic Messages format, typed with the official SDK's types: tool definitions
 * (`input_schema` from the contract module) and `tool_result` blocks with `is_error` on failure.
 * @module
 */
import type { Tool, ToolResultBlockParam, ToolUseBlock } from "@anthropic-ai/sdk/resources/messages";
import type { Gate } from "../gate.js";
import { ToolgateConfigError } from "../errors.js";
import { _objectRoot } from "../contract/anthropic.js";
import { _callThroughGate, _selected, type AdapterOptions, type GatedCall } from "./_run.js";
import { isErrorView, type ModelView } from "./model-view.js";

/** Options of the Anthropic format. */
export interface AnthropicToolOptions extends AdapterOptions {
  /** Called once per tool whose `input_schema` mapping is inexact (the gate still enforces the full contract). */
  onProblems?(tool: string, problems: readonly string[]): void;
}

/** A `tool_use` answered: the `tool_result` block to send back, plus the envelope and decision. */
export interface AnthropicToolAnswer extends GatedCall {
  readonly block: ToolResultBlockParam;
}

/**
 * Messages API tool definitions for the gate's tools. A root union of objects is flattened into
 * one object (reported through `onProblems`; the gate still enforces the union). Throws
 * ToolgateConfigError `E_ADAPTER_SCHEMA` for a tool whose input is not an object nor a union of
 * objects (a string, a nullable object): `input_schema` takes only an object root.
 * @example
 * const msg = await anthropic.messages.create({ model, max_tokens, messages, tools: anthropicTools(gate) });
 */
export function anthropicTools(gate: Gate, options: AnthropicToolOptions = {}): Tool[] {
  return _selected(gate, options, "anthropicTools").map((listing) => {
    const { $schema: _dialect, ...base } = listing.inputSchema;
    const s = _objectRoot(base);
    if (!s.ok) {
      throw new ToolgateConfigError("E_ADAPTER_SCHEMA", `anthropicTools: tool ${JSON.stringify(listing.name)} has an input that is not an object (nor a union of objects); input_schema cannot describe it (${s.problems.join("; ")})`);
    }
    if (s.problems.length > 0) options.onProblems?.(listing.name, s.problems);
    // A copy the caller owns: the listing's schemas are frozen and shared.
    return { name: listing.name, description: listing.description, input_schema: structuredClone({ ...s.schema, type: "object" as const }) };
  });
}

/**
 * Execute one `tool_use` block through the gate (and the loop, when a session is given) and build
 * the `tool_result` block.
 * @example
 * const results = [];
 * for (const block of msg.content) if (block.type === "tool_use") results.push((await answerAnthropicToolUse(gate, block)).block);
 * messages.push({ role: "user", content: results });
 */
export async function answerAnthropicToolUse(
  gate: Gate,
  block: Pick<ToolUseBlock, "id" | "name" | "input">,
  options: AnthropicToolOptions & { readonly signal?: AbortSignal } = {},
): Promise<AnthropicToolAnswer> {
  const done = await _callThroughGate(gate, block.name, block.input, block.id, options.signal, options);
  return { ...done, block: toAnthropicToolResult(block.id, done.view) };
}

/**
 * The `tool_result` block for a model view; failures and refusals carry `is_error: true`.
 * @example content.push(toAnthropicToolResult(block.id, toModelView(result)));
 */
export function toAnthropicToolResult(toolUseId: string, view: ModelView): ToolResultBlockParam {
  return { type: "tool_result", tool_use_id: toolUseId, content: JSON.stringify(view), ...(isErrorView(view) ? { is_error: true } : {}) };
}
