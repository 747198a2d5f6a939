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

/** Check each listed tool on its own. */
export function checkTools(entries: readonly unknown[], into: Listing): void {
  for (const entry of entries) {
    const r = ToolSchema.safeParse(entry);
    if (r.success) into.tools.push(r.data);
    else {
      const name = typeof entry === "object" && entry !== null && typeof (entry as { name?: unknown }).name === "string" ? (entry as { name: string }).name : undefined;
      into.invalid.push({ name, reason: `not a valid MCP tool definition (${zodSummary(r.error.issues)})` });
    }
  }
}
