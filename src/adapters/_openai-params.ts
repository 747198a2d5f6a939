/**
 * OpenAI `parameters` for one listing: the strict-mode schema of the contract module (with the
 * mapping of strict-mode nulls back to absent fields), or the plain input schema. Internal.
 * @module
 */
import type { JsonSchema } from "../standard.js";
import type { ToolListing } from "../json-schema.js";
import { fromOpenAIStrictArgs, toOpenAIStrict } from "../contract/openai-strict.js";
import { ToolgateConfigError } from "../errors.js";

/** The parameters to send and how to read arguments made against them. */
export interface OpenAIParameters {
  readonly parameters: JsonSchema;
  /** Whether the definition is sent with `strict: true`. */
  readonly strict: boolean;
  /** Map the model's arguments back to the tool's own shape, before the gate validates them. */
  mapArgs(args: unknown): unknown;
  /** What the strict mapping could not express (empty when exact or not strict). */
  readonly problems: readonly string[];
}

function withoutDialect(schema: JsonSchema): JsonSchema {
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}

const cache = { strict: new WeakMap<ToolListing, OpenAIParameters>(), plain: new WeakMap<ToolListing, OpenAIParameters>() };

/**
 * Strict when asked and possible: a root that strict mode cannot express falls back to a
 * non-strict definition (and says so in `problems`). Memoized per listing (listings are frozen).
 */
export function _openAIParameters(listing: ToolListing, strict: boolean): OpenAIParameters {
  const memo = strict ? cache.strict : cache.plain;
  let p = memo.get(listing);
  if (p === undefined) {
    p = compute(listing, strict);
    memo.set(listing, p);
  }
  return p;
}

function compute(listing: ToolListing, strict: boolean): OpenAIParameters {
  const plain = withoutDialect(listing.inputSchema);
  if (!strict) return { parameters: plain, strict: false, mapArgs: (a) => a, problems: [] };
  const s = toOpenAIStrict(listing.inputSchema);
  if (s.problems.some((p) => p.startsWith("(root)"))) {
    return { parameters: plain, strict: false, mapArgs: (a) => a, problems: [...s.problems, "(root): sent without strict mode"] };
  }
  return {
    parameters: withoutDialect(s.schema),
    strict: true,
    mapArgs: (a) => fromOpenAIStrictArgs(a, listing.inputSchema),
    problems: s.problems,
  };
}

/**
 * OpenAI takes only an object schema as a function's `parameters`: a tool whose input is declared
 * another type (a string, an array) is refused when the tools are built, as `anthropicTools` does,
 * rather than sent for the API to reject. Throws ToolgateConfigError `E_ADAPTER_SCHEMA`.
 */
export function _requireObjectRoot(name: string, parameters: JsonSchema, where: string): void {
  const type = parameters.type;
  if (type === undefined || type === "object") return;
  throw new ToolgateConfigError("E_ADAPTER_SCHEMA", `${where}: tool ${JSON.stringify(name)} has an input that is not an object; OpenAI function parameters cannot describe it`);
}
