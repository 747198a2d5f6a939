/**
 * OpenAI `parameters` for one listing: the strict-mode schema of the contract module (with the
 * mapping of strict-mode nulls back to absent fields), or the plain input schema with an object
 * root. Internal.
 * @module
 */
import type { JsonSchema } from "../standard.js";
import type { ToolListing } from "../json-schema.js";
import { _ANY_VALUE, fromOpenAIStrictArgs, toOpenAIStrict } from "../contract/openai-strict.js";
import { _isObjectRoot, _objectRoot } from "../contract/anthropic.js";
import { ToolgateConfigError } from "../errors.js";

/** The parameters to send and how to read arguments made against them. */
export interface OpenAIParameters {
  readonly parameters: JsonSchema;
  /** Whether `parameters` has a root OpenAI takes (`type: "object"`, no top-level union); see {@link _requireObjectRoot}. */
  readonly objectRoot: boolean;
  /** Why no object root could be made (the contract module's problems), when `objectRoot` is false. */
  readonly refusal?: string;
  /** Whether the definition is sent with `strict: true`. */
  readonly strict: boolean;
  /** Map the model's arguments back to the tool's own shape, before the gate validates them. */
  mapArgs(args: unknown): unknown;
  /** What the definition sent cannot express (empty when exact). */
  readonly problems: readonly string[];
}

function withoutDialect(schema: JsonSchema): JsonSchema {
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}

const cache = { strict: new WeakMap<ToolListing, OpenAIParameters>(), plain: new WeakMap<ToolListing, OpenAIParameters>() };

/**
 * Strict when asked and possible: a schema strict mode cannot take (a root that is not one object,
 * a sub-schema that accepts any value) falls back to a non-strict definition (and says so in
 * `problems`). Memoized per listing (listings are frozen).
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

const asIs = (a: unknown): unknown => a;

function compute(listing: ToolListing, strict: boolean): OpenAIParameters {
  let why: string[] = [];
  if (strict) {
    const s = toOpenAIStrict(listing.inputSchema);
    const parameters = withoutDialect(s.schema);
    // Strict mode takes neither a root that is not one object nor a sub-schema without a type.
    why = s.problems.filter((p) => p.startsWith("(root)") || p.endsWith(`: ${_ANY_VALUE}`));
    if (why.length === 0 && _isObjectRoot(parameters)) {
      return { parameters, objectRoot: true, strict: true, mapArgs: (a) => fromOpenAIStrictArgs(a, listing.inputSchema), problems: s.problems };
    }
    if (why.length === 0) why.push("(root): strict mode needs a root object schema without a union");
  }
  // The plain schema, a root union of objects flattened into one object (the gate still enforces the union).
  const plain = _objectRoot(withoutDialect(listing.inputSchema));
  const fallback = strict ? ["(root): sent without strict mode"] : [];
  return {
    parameters: plain.schema,
    objectRoot: plain.ok,
    ...(plain.ok ? {} : { refusal: plain.problems.join("; ") }),
    strict: false,
    mapArgs: asIs,
    problems: [...why, ...plain.problems, ...fallback],
  };
}

/**
 * OpenAI takes only an object schema as a function's `parameters`: a tool whose input is not an
 * object, nor a union of objects (a string, an array, a nullable object), is refused when the tools
 * are built, as `anthropicTools` does, rather than sent for the API to reject the whole request.
 * Throws ToolgateConfigError `E_ADAPTER_SCHEMA`.
 */
export function _requireObjectRoot(name: string, p: Pick<OpenAIParameters, "objectRoot" | "refusal">, where: string, target = "OpenAI function parameters"): void {
  if (p.objectRoot) return;
  throw new ToolgateConfigError(
    "E_ADAPTER_SCHEMA",
    `${where}: tool ${JSON.stringify(name)} has an input that is not an object (nor a union of objects); ${target} cannot describe it${p.refusal === undefined ? "" : ` (${p.refusal})`}`,
  );
}
