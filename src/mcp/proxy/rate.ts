/**
 * A token bucket per tool: `perSecond` tokens refill continuously up to `burst`.
 * @module
 */

/** Rate limit settings. */
export interface RateLimit {
  /** Sustained calls per second. */
  readonly perSecond: number;
  /** Calls allowed at once after a quiet period. Default: `max(1, ceil(perSecond))`. */
  readonly burst?: number | undefined;
}

/** A token bucket. */
export interface Bucket {
  /** Take a token: 0 when allowed, else the milliseconds until one is available. */
  take(now?: number): number;
}

/**
 * Create a token bucket.
 * @example const b = tokenBucket({ perSecond: 5 }); if (b.take() > 0) refuse();
 */
export function tokenBucket(limit: RateLimit): Bucket {
  const capacity = limit.burst ?? Math.max(1, Math.ceil(limit.perSecond));
  const perMs = limit.perSecond / 1000;
  let tokens = capacity;
  let last = Date.now();
  return {
    take(now = Date.now()) {
      tokens = Math.min(capacity, tokens + (now - last) * perMs);
      last = now;
      if (tokens >= 1) {
        tokens -= 1;
        return 0;
      }
      return Math.ceil((1 - tokens) / perMs);
    },
  };
}
