/**
 * The re-check of the upstream's tool list against the pins, after every restart and every
 * `notifications/tools/list_changed`: a served tool whose definition changed, that is listed twice,
 * or that is no longer a valid tool is refused from then on; one the list no longer has is refused
 * until it comes back with its pinned definition. Each tool is checked on its own: one that cannot
 * even be hashed counts as changed and never stops the check of the others.
 * @module
 */
import type { Tool as SdkTool } from "@modelcontextprotocol/sdk/types.js";
import { hashTool } from "./pin.js";
import { DUPLICATE, REMOVED } from "./admission.js";
import type { InvalidTool } from "./tool-list.js";

/** What the re-check reads, and the refusals it records. */
export interface PinState {
  /** Tool name → why it is refused (written here). */
  readonly refused: Map<string, string>;
  /** Served tool → the hash it was pinned with at start-up. */
  readonly pinned: ReadonlyMap<string, string>;
  /** Tool name → the first 12 hex digits of its current definition's hash (written for a changed one). */
  readonly versions: Map<string, string>;
  /** Whether the pins come from a lock file: the log names the fix (`--update-lock`, or a restart of the proxy). */
  readonly locked: boolean;
  log(line: string): void;
}

/** A tool's pin hash, or `undefined` when it cannot be computed (then it matches no pin). */
export function hashOf(t: SdkTool): string | undefined {
  try {
    return hashTool(t);
  } catch {
    return undefined;
  }
}

/** A tool's `version` in envelopes: the first 12 hex digits of its pin hash. */
export const versionOf = (hash: string): string => hash.slice(7, 19);

/** How often each name occurs in a tool list, valid or not. */
export function nameCounts(tools: readonly SdkTool[], invalid: readonly InvalidTool[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const name of [...tools.map((t) => t.name), ...invalid.flatMap((b) => (b.name === undefined ? [] : [b.name]))]) counts.set(name, (counts.get(name) ?? 0) + 1);
  return counts;
}

/** Until when a changed tool stays refused, as the log says it. */
export const refusedUntil = (locked: boolean): string => (locked ? "refused until --update-lock" : "refused until the proxy restarts");

/**
 * Check a fresh tool list against the pins; records refusals (and lifts a `removed` one whose tool
 * is back with its pinned definition).
 */
export function recheckTools(s: PinState, list: readonly SdkTool[], invalid: readonly InvalidTool[]): void {
  const counts = nameCounts(list, invalid);
  const changed = (name: string, why: string): void => {
    if (!s.pinned.has(name) || s.refused.get(name) === "changed") return;
    s.refused.set(name, "changed");
    s.log(`tool ${name}: ${why}; ${refusedUntil(s.locked)}`);
  };
  for (const t of list) {
    const pin = s.pinned.get(t.name);
    if (pin === undefined) continue;
    const hash = hashOf(t);
    if ((counts.get(t.name) ?? 0) > 1) changed(t.name, DUPLICATE);
    else if (hash === undefined) changed(t.name, "definition changed since it was pinned (it cannot be hashed)");
    else if (pin !== hash) {
      changed(t.name, "definition changed since it was pinned");
      s.versions.set(t.name, versionOf(hash)); // DENIED names the refused definition
    }
  }
  for (const bad of invalid) if (bad.name !== undefined) changed(bad.name, "definition is no longer a valid MCP tool");
  // A served tool the list no longer has is refused (it is not offered; its calls would fail
  // upstream as unknown); one that comes back with its pinned definition is served again.
  for (const name of s.pinned.keys()) {
    const why = s.refused.get(name);
    if (!counts.has(name)) {
      if (why === undefined) {
        s.refused.set(name, REMOVED);
            s.log(`tool ${name}: no longer offered by the upstream; refused`);
      }
    } else if (why === REMOVED) {
      const t = list.find((x) => x.name === name);
      if (t !== undefined && (counts.get(name) ?? 0) === 1 && s.pinned.get(name) === hashOf(t)) {
        s.refused.delete(name);
            s.log(`tool ${name}: offered again by the upstream; served`);
      }
    }
  }
}
