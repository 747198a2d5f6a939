/**
 * Contract snapshots: the advertised contracts of a gate's tools, written by
 * `toolgate check --snapshot contracts.json` and compared by `--against contracts.json`.
 * @module
 */
import type { JsonSchema } from "../standard.js";
import type { ToolListing } from "../json-schema.js";
import { isRecord } from "./_schema.js";
import { ToolgateConfigError } from "../errors.js";

/** One tool's advertised contract (MCP, JSON Schema 2020-12). */
export interface ToolContract {
  readonly version: string;
  readonly description: string;
  readonly effect: "read" | "write";
  readonly inputSchema: JsonSchema;
  readonly outputSchema?: JsonSchema;
}

/** The snapshot file. Keys of `tools` are tool names, sorted. */
export interface ContractSnapshot {
  readonly format: "toolgate-contracts";
  readonly version: 1;
  readonly tools: Readonly<Record<string, ToolContract>>;
}

/**
 * Build a snapshot from a gate's listings (`gate.list()`).
 * @example
 * writeFileSync("contracts.json", JSON.stringify(snapshotOf(gate.list()), null, 2) + "\n");
 */
export function snapshotOf(listings: readonly ToolListing[]): ContractSnapshot {
  if (!Array.isArray(listings) || !listings.every((l) => isRecord(l) && typeof l.name === "string" && isRecord(l.inputSchema))) {
    throw new ToolgateConfigError("E_CHECK_OPTIONS", "snapshotOf: the argument must be a gate's listings (gate.list())");
  }
  const tools: Record<string, ToolContract> = {};
  for (const l of [...listings].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    tools[l.name] = {
      version: l.version,
      description: l.description,
      effect: l.effect,
      inputSchema: l.inputSchema,
      ...(l.outputSchema !== undefined ? { outputSchema: l.outputSchema } : {}),
    };
  }
  return { format: "toolgate-contracts", version: 1, tools };
}

/**
 * Parse a snapshot file's JSON value; the reason when it is not one.
 * @example
 * const parsed = parseSnapshot(JSON.parse(readFileSync("contracts.json", "utf8")));
 * if (!parsed.ok) throw new Error(parsed.reason);
 */
export function parseSnapshot(v: unknown): { ok: true; snapshot: ContractSnapshot } | { ok: false; reason: string } {
  if (!isRecord(v) || v.format !== "toolgate-contracts") return { ok: false, reason: 'not a toolgate contracts snapshot (expected "format": "toolgate-contracts")' };
  if (v.version !== 1) return { ok: false, reason: `unsupported snapshot version ${JSON.stringify(v.version)} (this toolgate reads version 1)` };
  if (!isRecord(v.tools)) return { ok: false, reason: '"tools" must be an object keyed by tool name' };
  for (const [name, t] of Object.entries(v.tools)) {
    if (!isRecord(t) || typeof t.version !== "string" || !isRecord(t.inputSchema)) {
      return { ok: false, reason: `tool ${JSON.stringify(name)}: expected { version: string, inputSchema: object, … }` };
    }
    if (t.outputSchema !== undefined && !isRecord(t.outputSchema)) return { ok: false, reason: `tool ${JSON.stringify(name)}: outputSchema must be an object` };
  }
  return { ok: true, snapshot: v as unknown as ContractSnapshot };
}
