/**
 * The reserved `_meta` key: split off the top-level arguments before validation and handed to
 * `ctx.meta`, never to the tool's input.
 * @module
 */
import type { Issue } from "./result.js";
import { issue } from "./issues.js";

/** The reserved key name. */
export const META_KEY = "_meta";

const EMPTY: Readonly<Record<string, unknown>> = Object.freeze({});

/** The arguments without `_meta`, and `_meta` itself (empty when absent). */
export type SplitMeta =
  | { ok: true; input: unknown; meta: Readonly<Record<string, unknown>> }
  | { ok: false; issue: Issue };

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const p: unknown = Object.getPrototypeOf(v);
  return p === Object.prototype || p === null;
}

/** Split `_meta` from hardened arguments. Allocates only when `_meta` is present. */
export function splitMeta(args: unknown): SplitMeta {
  if (!isPlainObject(args) || !Object.hasOwn(args, META_KEY)) return { ok: true, input: args, meta: EMPTY };
  const meta = args[META_KEY];
  if (meta !== undefined && !isPlainObject(meta)) {
    return { ok: false, issue: issue(META_KEY, "invalid_meta", "_meta must be an object") };
  }
  const input: Record<string, unknown> = {};
  for (const k of Object.keys(args)) if (k !== META_KEY) input[k] = args[k];
  return { ok: true, input, meta: meta === undefined ? EMPTY : Object.freeze({ ...meta }) };
}
