/**
 * A gate's tool listing as MCP `Tool` definitions: the input side schema for arguments, the
 * output schema when it describes an object, annotations derived from the tool's effect.
 * @module
 */
import { mapSubschemas, type ToolListing } from "../json-schema.js";
import { ToolgateConfigError } from "../errors.js";
import { TOOL_META_KEY } from "./result.js";
import { isRecord } from "../_record.js";

/** One tool as `tools/list` advertises it. */
export interface McpTool {
  [key: string]: unknown;
  name: string;
  description: string;
  inputSchema: { type: "object"; [key: string]: unknown };
  outputSchema?: { type: "object"; [key: string]: unknown };
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean };
  _meta: Record<string, unknown>;
}

function isObjectSchema(s: unknown): s is { type: "object"; [key: string]: unknown } {
  return typeof s === "object" && s !== null && (s as { type?: unknown }).type === "object";
}

/**
 * Convert one listing. Throws {@link ToolgateConfigError} (`E_MCP_INPUT_SCHEMA`) when the input
 * schema is not an object schema: MCP arguments are always a JSON object.
 * @example
 * const tools = gate.list().map(toMcpTool);
 */
export function toMcpTool(l: ToolListing): McpTool {
  if (!isObjectSchema(l.inputSchema)) {
    throw new ToolgateConfigError(
      "E_MCP_INPUT_SCHEMA",
      `createMcpServer: tool ${JSON.stringify(l.name)} has a non-object input schema; MCP tool arguments are a JSON object`,
    );
  }
  const read = l.effect === "read";
  const tool: McpTool = {
    name: l.name,
    description: l.description,
    inputSchema: l.inputSchema,
    // readOnlyHint comes from the tool's declared effect; a write is assumed destructive and not idempotent.
    annotations: { readOnlyHint: read, destructiveHint: !read, idempotentHint: read },
    _meta: { [TOOL_META_KEY]: { version: l.version, effect: l.effect, approval: l.approval } },
  };
  if (isObjectSchema(l.outputSchema)) tool.outputSchema = readableByClients(l.outputSchema) as { type: "object"; [key: string]: unknown };
  return tool;
}

/**
 * The `format`s the SDK 1.x `Client` knows (Ajv with ajv-formats' full set). It compiles every
 * output schema, and prints "unknown format … ignored" twice per tool on each `tools/list` for any
 * other (zod writes `emoji`, `jwt`, `cuid`, `ulid`, `cidrv4`… next to the `pattern` that checks them).
 */
const CLIENT_FORMATS = new Set([
  "date", "time", "date-time", "iso-time", "iso-date-time", "duration", "uri", "uri-reference", "uri-template", "url", "email",
  "hostname", "ipv4", "ipv6", "regex", "uuid", "json-pointer", "json-pointer-uri-fragment", "relative-json-pointer",
  "byte", "int32", "int64", "float", "double", "password", "binary",
]);

/**
 * An output schema as MCP clients read it: a draft-07 validator reads it as its draft 2020-12
 * `$schema` means, or more loosely. The SDK 1.x `Client` checks `structuredContent` with a
 * draft-07 validator whatever `$schema` says, and draft-07 reads an `items` beside `prefixItems`
 * (a tuple) as the schema of every element: it would refuse each valid tuple. So `items: false`
 * becomes the `maxItems` it means (the same contract), and a rest element's `items` is left out
 * (the advertised contract says less about rest elements; the gate still enforces them before
 * anything is sent). A `format` the client does not know (an annotation it ignores, with a
 * warning) is left out too; the `pattern` beside it stays.
 */
function readableByClients(node: unknown): unknown {
  if (!isRecord(node)) return node;
  const out = mapSubschemas(node, readableByClients);
  if (Array.isArray(out.prefixItems) && "items" in out) {
    if (out.items === false) {
      const n = out.prefixItems.length;
      out.maxItems = typeof out.maxItems === "number" ? Math.min(out.maxItems, n) : n;
    }
    delete out.items;
  }
  if (typeof out.format === "string" && !CLIENT_FORMATS.has(out.format)) delete out.format;
  return out;
}

/** @internal The formats {@link readableByClients} keeps (a test holds them to ajv-formats' own list). */
export const _CLIENT_FORMATS: ReadonlySet<string> = CLIENT_FORMATS;
