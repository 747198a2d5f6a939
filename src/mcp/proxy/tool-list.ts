/**
 * The upstream's `tools/list`, read leniently: the SDK's `listTools` parses the whole list with
 * its strict schema, so one tool without `"type": "object"` would fail every tool. Here the list is
 * only an array, and each entry is checked on its own with the SDK's `ToolSchema`.
 * @module
 */
import { z } from "zod";
import { ToolSchema, type Tool as SdkTool } from "@modelcontextprotocol/sdk/types.js";
import { zodSummary } from "./error-text.js";

/** A `tools/list` entry that is not a valid MCP tool definition (checked one by one). */
export interface InvalidTool {
  /** Its `name` when that is a string. */
  readonly name: string | undefined;
  /** What is wrong (schema paths and messages, never values). */
  readonly reason: string;
}

/** tools/list checked loosely: one bad tool must not fail the whole list (each is checked on its own). */
export const LooseToolList = z.object({ tools: z.array(z.unknown()), nextCursor: z.string().optional() }).loose();

/** One page or all pages of a list: the valid tools and the refused entries. */
export interface Listing {
  readonly tools: SdkTool[];
  readonly invalid: InvalidTool[];
}

/**
 * The deepest a tool definition may nest (arrays and objects, counted from the entry itself): as
 * deep as a result the proxy passes on. Far beyond any real schema; a deeper one is refused as an
 * invalid tool on its own before anything walks it (hashing, Ajv, the listing).
 */
export const MAX_DEFINITION_DEPTH = 1_000;

/** Whether `v` nests more than `max` arrays and objects (walked with a stack of its own, never recursion). */
export function nestsDeeperThan(v: unknown, max: number): boolean {
  const todo: Array<[unknown, number]> = [[v, 1]];
  while (todo.length > 0) {
    const [x, depth] = todo.pop()!;
    if (typeof x !== "object" || x === null) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(x) ? x : Object.values(x)) if (typeof child === "object" && child !== null) todo.push([child, depth + 1]);
  }
  return false;
}

/** Check each listed tool on its own. */
export function checkTools(entries: readonly unknown[], into: Listing): void {
  for (const entry of entries) {
    if (nestsDeeperThan(entry, MAX_DEFINITION_DEPTH)) {
      into.invalid.push({ name: nameOf(entry), reason: `not a valid MCP tool definition (it nests deeper than ${MAX_DEFINITION_DEPTH} levels)` });
      continue;
    }
    const r = ToolSchema.safeParse(entry);
    if (r.success) into.tools.push(r.data);
    else into.invalid.push({ name: nameOf(entry), reason: `not a valid MCP tool definition (${zodSummary(r.error.issues)})` });
  }
}

/** A listed entry's `name` when that is a string. */
function nameOf(entry: unknown): string | undefined {
  return typeof entry === "object" && entry !== null && typeof (entry as { name?: unknown }).name === "string" ? (entry as { name: string }).name : undefined;
}
