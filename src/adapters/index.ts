/**
 * `toolgate/adapters`: the gate's tools for the frameworks people use — Vercel AI SDK, OpenAI
 * Agents SDK — and the raw OpenAI (Chat Completions, Responses) and Anthropic Messages formats.
 * Every adapter sends the same model view and can take a loop session.
 *
 * @example
 * import { aiSdkTools, loopStopWhen } from "toolgate/adapters";
 * import { createLoopPolicy } from "toolgate/loop";
 * const session = createLoopPolicy().start();
 * await generateText({ model, prompt, tools: aiSdkTools(gate, { session }), stopWhen: loopStopWhen(session) });
 * @module
 */
export { aiSdkTools, loopStopWhen } from "./ai-sdk.js";
export type { AiSdkToolOptions } from "./ai-sdk.js";
export { openAIAgentsTools, loopToolUseBehavior } from "./openai-agents.js";
export type { OpenAIAgentsToolOptions } from "./openai-agents.js";
export {
  answerOpenAIChatToolCall,
  answerOpenAIResponsesCall,
  openAIChatTools,
  openAIResponsesTools,
  toOpenAIChatToolMessage,
  toOpenAIResponsesOutput,
} from "./openai.js";
export type { ChatToolAnswer, OpenAIToolOptions, ResponsesToolAnswer } from "./openai.js";
export { anthropicTools, answerAnthropicToolUse, toAnthropicToolResult } from "./anthropic.js";
export type { AnthropicToolAnswer, AnthropicToolOptions } from "./anthropic.js";
export { isErrorView, refusalView, toModelView } from "./model-view.js";
export type { ModelFailureView, ModelRefusalView, ModelSuccessView, ModelView } from "./model-view.js";
export type { AdapterOptions, GatedCall } from "./_run.js";
export { CallOptionsError } from "./call-options-error.js";
