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
  return Math.floor(random() * ceiling);
}
