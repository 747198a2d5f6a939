/**
 * Raw OpenAI formats, typed with the official SDK's types: tool definitions and tool results for
 * Chat Completions and for the Responses API. Strict mode (default) sends the contract module's
 * strict schema and maps strict-mode nulls back to absent fields before the gate validates.
 * @module
 */
import type {
  ChatCompletionFunctionTool,
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionToolMessageParam,
} from "openai/resources/chat/completions";
import type { FunctionTool, ResponseFunctionToolCall, ResponseInputItem } from "openai/resources/responses/responses";
import type { Gate } from "../gate.js";
import type { ToolListing } from "../json-schema.js";
import { _callThroughGate, _selected, type AdapterOptions, type GatedCall } from "./_run.js";
import { _openAIParameters, _requireObjectRoot, type OpenAIParameters } from "./_openai-params.js";
import type { ModelView } from "./model-view.js";

/** Options of the OpenAI formats. */
export interface OpenAIToolOptions extends AdapterOptions {
  /** Send strict-mode definitions (`strict: true`). Default `true`; a tool strict mode cannot take (a root that is not one object, a field that accepts any value) is sent non-strict. */
  readonly strict?: boolean;
  /** Called once per tool whose definition is inexact (a strict mapping loosened, a root union flattened); the gate still enforces the full contract. */
  onProblems?(tool: string, problems: readonly string[]): void;
}

/** A call answered for Chat Completions: the `tool` message to append, plus the envelope and decision. */
export interface ChatToolAnswer extends GatedCall {
  readonly message: ChatCompletionToolMessageParam;
}

/** A call answered for the Responses API: the `function_call_output` item to send back. */
export interface ResponsesToolAnswer extends GatedCall {
  readonly item: ResponseInputItem.FunctionCallOutput;
}

function params(gate: Gate, options: OpenAIToolOptions, where: string): Array<{ listing: ToolListing; p: OpenAIParameters }> {
  return _selected(gate, options, where).map((listing) => {
    const p = _openAIParameters(listing, options.strict ?? true);
    _requireObjectRoot(listing.name, p, where);
    if (p.problems.length > 0) options.onProblems?.(listing.name, p.problems);
    return { listing, p };
  });
}

function mapperFor(gate: Gate, name: string, options: OpenAIToolOptions): (args: unknown) => unknown {
  const listing = gate.list().find((l) => l.name === name);
  return listing === undefined ? (a) => a : _openAIParameters(listing, options.strict ?? true).mapArgs;
}

/**
 * The call's argument text, with empty (or whitespace-only) text read as `{}`: what OpenAI-compatible
 * servers send for a call without arguments, and what the AI SDK does with it too. Anything else
 * goes to the gate as it is (JSON text is parsed and checked there).
 */
function argumentsText(text: unknown): unknown {
  return typeof text === "string" && text.trim() === "" ? "{}" : text;
}

/** The tool-message text: the model view as JSON. */
function content(view: ModelView): string {
  return JSON.stringify(view);
}

/**
 * Chat Completions tool definitions (`tools: [...]`) for the gate's tools. A root union of objects
 * is sent flattened into one object, non-strict (reported through `onProblems`); a tool whose input
 * is not an object nor a union of objects throws ToolgateConfigError `E_ADAPTER_SCHEMA` (OpenAI
 * takes only object parameters).
 * @example
 * const completion = await openai.chat.completions.create({ model, messages, tools: openAIChatTools(gate) });
 */
export function openAIChatTools(gate: Gate, options: OpenAIToolOptions = {}): ChatCompletionFunctionTool[] {
  return params(gate, options, "openAIChatTools").map(({ listing, p }) => ({
    type: "function",
    function: { name: listing.name, description: listing.description, parameters: structuredClone(p.parameters), strict: p.strict },
  }));
}

/**
 * Execute one Chat Completions tool call through the gate (and the loop, when a session is given)
 * and build the `tool` message. Pass the same `strict` as to {@link openAIChatTools}.
 * @example
 * for (const call of completion.choices[0]!.message.tool_calls ?? []) {
 *   if (call.type === "function") messages.push((await answerOpenAIChatToolCall(gate, call)).message);
 * }
 */
export async function answerOpenAIChatToolCall(
  gate: Gate,
  call: ChatCompletionMessageFunctionToolCall,
  options: OpenAIToolOptions & { readonly signal?: AbortSignal } = {},
): Promise<ChatToolAnswer> {
  const args = mapperFor(gate, call.function.name, options)(argumentsText(call.function.arguments));
  const done = await _callThroughGate(gate, call.function.name, args, call.id, options.signal, options);
  return { ...done, message: toOpenAIChatToolMessage(call.id, done.view) };
}

/**
 * The Chat Completions `tool` message for a model view.
 * @example messages.push(toOpenAIChatToolMessage(call.id, toModelView(result)));
 */
export function toOpenAIChatToolMessage(toolCallId: string, view: ModelView): ChatCompletionToolMessageParam {
  return { role: "tool", tool_call_id: toolCallId, content: content(view) };
}

/**
 * Responses API function tool definitions, as {@link openAIChatTools} builds them: a tool whose
 * input is not an object nor a union of objects throws ToolgateConfigError `E_ADAPTER_SCHEMA`.
 * @example
 * const response = await openai.responses.create({ model, input, tools: openAIResponsesTools(gate) });
 */
export function openAIResponsesTools(gate: Gate, options: OpenAIToolOptions = {}): FunctionTool[] {
  return params(gate, options, "openAIResponsesTools").map(({ listing, p }) => ({
    type: "function",
    name: listing.name,
    description: listing.description,
    parameters: structuredClone(p.parameters),
    strict: p.strict,
  }));
}

/**
 * Execute one Responses API `function_call` item through the gate and build its
 * `function_call_output` item.
 * @example
 * for (const item of response.output) {
 *   if (item.type === "function_call") input.push((await answerOpenAIResponsesCall(gate, item)).item);
 * }
 */
export async function answerOpenAIResponsesCall(
  gate: Gate,
  call: ResponseFunctionToolCall,
  options: OpenAIToolOptions & { readonly signal?: AbortSignal } = {},
): Promise<ResponsesToolAnswer> {
  const args = mapperFor(gate, call.name, options)(argumentsText(call.arguments));
  const done = await _callThroughGate(gate, call.name, args, call.call_id, options.signal, options);
  return { ...done, item: toOpenAIResponsesOutput(call.call_id, done.view) };
}

/**
 * The Responses API `function_call_output` item for a model view.
 * @example input.push(toOpenAIResponsesOutput(item.call_id, toModelView(result)));
 */
export function toOpenAIResponsesOutput(callId: string, view: ModelView): ResponseInputItem.FunctionCallOutput {
  return { type: "function_call_output", call_id: callId, output: content(view) };
}
