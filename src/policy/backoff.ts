/**
 * Full-jitter exponential backoff: a random wait in [0, min(cap, base·2^(n-1))].
 * @module
 */

/** Backoff settings in milliseconds. */
export interface BackoffOptions {
  readonly baseMs: number;
  readonly capMs: number;
}

/**
 * The wait before retry number `retry` (1 for the first retry).
 * @example fullJitter(2, { baseMs: 100, capMs: 2000 }) // somewhere in [0, 200)
 */
export function fullJitter(retry: number, o: BackoffOptions, random: () => number = Math.random): number {
  const ceiling = Math.min(o.capMs, o.baseMs * 2 ** Math.max(0, retry - 1));
  return Math.floor(unit(random) * ceiling);
}

/**
 * A draw in [0, 1) from `random` (the gate's `random` option, for deterministic tests): a value
 * outside is clamped into it, and a draw that throws or is not a number is `Math.random()`'s, so a
 * wrong hook can neither stretch a wait past `capMs` nor break the retry.
 */
function unit(random: () => number): number {
  let r: unknown;
  try {
    r = random();
  } catch {
    r = undefined;
  }
  if (typeof r !== "number" || Number.isNaN(r)) return Math.random();
  return Math.min(Math.max(r, 0), 0.9999999999999999);
}
