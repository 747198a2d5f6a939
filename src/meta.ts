/**
 * The reserved `_meta` key: split off the top-level arguments before validation and handed to
 * `ctx.meta`, never to the tool's input.
 * @module
 */
import type { Issue } from "./result.js";
import { issue } from "./issues.js";
import { setOwn } from "./_record.js";

/** The reserved key name. */
export const META_KEY = "_meta";

const RESERVED = "The _meta argument is reserved for the host; leave it out of the arguments";

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

/**
 * Split `_meta` from hardened arguments. Allocates only when `_meta` is present. `refuse`: the
 * arguments are the model's (the call option `fromModel`), and a `_meta` in them is an issue.
 */
export function splitMeta(args: unknown, refuse = false): SplitMeta {
  if (!isPlainObject(args) || !Object.hasOwn(args, META_KEY)) return { ok: true, input: args, meta: EMPTY };
  if (refuse) return { ok: false, issue: issue(META_KEY, "reserved_key", RESERVED) };
  const meta = args[META_KEY];
  if (meta !== undefined && !isPlainObject(meta)) {
    return { ok: false, issue: issue(META_KEY, "invalid_meta", "_meta must be an object") };
  }
  const input: Record<string, unknown> = {};
  // An own `__proto__` key (allowed when the host's forbiddenKeys leave it out) stays an own key, never the prototype.
  for (const k of Object.keys(args)) if (k !== META_KEY) setOwn(input, k, args[k]);
  return { ok: true, input, meta: meta === undefined ? EMPTY : Object.freeze({ ...meta }) };
}
