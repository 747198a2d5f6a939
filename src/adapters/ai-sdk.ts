/**
 * Vercel AI SDK (`ai`, 6.x; the API 7.x shares): tools whose `execute` runs through the gate.
 * The SDK does not validate the arguments (the schema we hand it accepts everything): the gate
 * does, so the model sees toolgate's INVALID_INPUT issues instead of an SDK error string.
 * Failures come back as structured results (`error-json`, so providers mark them as errors).
 * @module
 */
import type { JSONValue, StopCondition, Tool, ToolExecutionOptions, ToolSet } from "ai";
import type { StandardJSONSchemaV1, StandardSchemaV1 } from "@standard-schema/spec";
import type { Gate } from "../gate.js";
import type { JsonSchema } from "../standard.js";
import { advertisedInput } from "../json-schema.js";
import type { LoopSession } from "../loop/session.js";
import { _callThroughGate, _selected, type AdapterOptions } from "./_run.js";
import { _openAIParameters, _requireObjectRoot } from "./_openai-params.js";
import { _objectRoot } from "../contract/anthropic.js";
import { isErrorView, type ModelView } from "./model-view.js";

/** Options of {@link aiSdkTools}. */
export interface AiSdkToolOptions extends AdapterOptions {
  /**
   * Mark tools `strict` and advertise OpenAI strict-mode schemas (nulls map back to absent).
   * A tool strict mode cannot take (a root that is not one object, a field that accepts any value)
   * is sent non-strict. Default `false`.
   */
  readonly strict?: boolean;
  /** Called once per tool whose advertised schema is inexact (a root union flattened, a strict mapping loosened); the gate still enforces the full contract. */
  onProblems?(tool: string, problems: readonly string[]): void;
}

/** Who cannot take a tool whose input has no object root: the AI SDK hands the schema to the provider unchanged. */
const PROVIDERS = "the providers' tool schemas (OpenAI parameters, Anthropic input_schema)";

type PassThrough = StandardSchemaV1<unknown, unknown> & { readonly "~standard": StandardSchemaV1.Props<unknown, unknown> & { readonly jsonSchema: StandardJSONSchemaV1.Converter } };

/**
 * A Standard Schema that advertises `schema` and accepts every value: validation is the gate's job.
 * Each read is a fresh copy: the AI SDK edits the schema it is given in place (it adds
 * `additionalProperties`), and the listing's schemas are frozen and shared.
 */
function passThrough(schema: JsonSchema): PassThrough {
  return {
    "~standard": {
      version: 1,
      vendor: "toolgate",
      validate: (value: unknown) => ({ value }),
      jsonSchema: { input: () => structuredClone(schema), output: () => structuredClone(schema) },
    },
  };
}

/**
 * The SDK hands `execute` the arguments it parsed. A string among them is a value, not the model's
 * text: `gate.call` would parse it as JSON a second time (a model that sent the string
 * `"{\"id\":1}"` for an object tool would pass), so it goes as the JSON text of that string.
 */
function asValue(args: unknown): unknown {
  return typeof args === "string" ? JSON.stringify(args) : args;
}

function toModelOutput({ output }: { output: ModelView }): { type: "json" | "error-json"; value: JSONValue } {
  return { type: isErrorView(output) ? "error-json" : "json", value: output as unknown as JSONValue };
}

/**
 * AI SDK tools for the gate's tools, for `generateText({ tools })` / `streamText({ tools })`.
 * Each `execute` resolves to the model view (`{ ok: true, data }` or the failure), never throws
 * for a failed call. The SDK sends each schema to the provider as it is, and the providers take
 * only an object root: a root union of objects is flattened into one object (reported through
 * `onProblems`), and a tool whose input is not an object nor a union of objects throws
 * ToolgateConfigError `E_ADAPTER_SCHEMA`, as the raw formats do.
 * @example
 * const session = createLoopPolicy().start();
 * const result = await generateText({ model, prompt, tools: aiSdkTools(gate, { session }), stopWhen: [loopStopWhen(session), stepCountIs(10)] });
 */
export function aiSdkTools(gate: Gate, options: AiSdkToolOptions = {}): Record<string, Tool<unknown, ModelView>> {
  const tools: Record<string, Tool<unknown, ModelView>> = {};
  for (const listing of _selected(gate, options, "aiSdkTools")) {
    const name = listing.name;
    let schema: JsonSchema;
    let mapArgs: (a: unknown) => unknown = (a) => a;
    let strict = false;
    let problems: readonly string[];
    if (options.strict === true) {
      const p = _openAIParameters(listing, true);
      _requireObjectRoot(name, p, "aiSdkTools", PROVIDERS);
      schema = p.parameters;
      mapArgs = p.mapArgs;
      strict = p.strict;
      problems = p.problems;
    } else {
      const tool = gate.tool(name);
      const draft07 = tool === undefined ? undefined : advertisedInput(tool, "draft-07");
      const root = _objectRoot(draft07?.ok === true ? draft07.schema : listing.inputSchema);
      _requireObjectRoot(name, { objectRoot: root.ok, ...(root.ok ? {} : { refusal: root.problems.join("; ") }) }, "aiSdkTools", PROVIDERS);
      schema = root.schema;
      problems = root.problems;
    }
    if (problems.length > 0) options.onProblems?.(name, problems);
    tools[name] = {
      description: listing.description,
      inputSchema: passThrough(schema),
      ...(strict ? { strict: true } : {}),
      execute: async (input: unknown, opts: ToolExecutionOptions): Promise<ModelView> =>
        (await _callThroughGate(gate, name, asValue(mapArgs(input)), opts.toolCallId, opts.abortSignal, options)).view,
      toModelOutput,
    };
  }
  return tools;
}

/**
 * A `stopWhen` condition that ends the run when the loop policy stops or escalates, or when the
 * next step would exceed the policy's turn cap: the run makes at most `maxTurns` model requests,
 * whatever its steps called (the session's turns are brought up to the steps made before the
 * next one begins). Use with the same session as {@link aiSdkTools}.
 * Generic in the run's tool set (it reads none of it), so it fits a run that mixes the gate's
 * tools with the AI SDK's own `tool()`s.
 * @example generateText({ model, prompt, tools: aiSdkTools(gate, { session }), stopWhen: loopStopWhen(session) })
 */
export function loopStopWhen<TOOLS extends ToolSet = ToolSet>(session: LoopSession): StopCondition<TOOLS> {
  return ({ steps }) => {
    if (session.outcome !== undefined) return true;
    // A step that admitted no gate call (only another tool, or argument text the SDK answered
    // itself) began no turn when it was the first: count every model request made so far.
    while (session.turns < steps.length) if (session.beginTurn() !== undefined) return true;
    return session.beginTurn() !== undefined;
  };
}
