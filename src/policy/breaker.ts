/**
 * A per-tool circuit breaker: after `threshold` consecutive failures it opens and calls fail fast
 * with RETRYABLE and `retryAfterMs`; after `halfOpenAfterMs` one probe goes through, and its
 * outcome closes or reopens the circuit. A probe that ends without a verdict (the caller cancelled
 * it) lets the next call probe instead.
 * @module
 */

/** Breaker settings. */
export interface BreakerOptions {
  /** Consecutive failed attempts that open the circuit. Default 5. */
  readonly threshold?: number;
  /** How long the circuit stays open before one probe, in ms. Default 10,000. */
  readonly halfOpenAfterMs?: number;
}

/** Breaker states. */
export type BreakerState = "closed" | "open" | "half-open";

/** Admission answer. */
export type Admission = { ok: true } | { ok: false; retryAfterMs: number };

/** A breaker instance (one per tool per gate). */
export interface Breaker {
  admit(now: number): Admission;
  success(): void;
  failure(now: number): void;
  /** The admitted attempt ended without a verdict on the service (cancelled, or never started): the next call may probe. */
  release(): void;
  readonly state: BreakerState;
}

/**
 * Create a breaker. `onChange` hears every state change.
 * @example const b = createBreaker({ threshold: 5, halfOpenAfterMs: 10_000 });
 */
export function createBreaker(o: BreakerOptions = {}, onChange?: (s: BreakerState) => void): Breaker {
  const threshold = o.threshold ?? 5;
  const halfOpenAfterMs = o.halfOpenAfterMs ?? 10_000;
  let state: BreakerState = "closed";
  let failures = 0;
  let openedAt = 0;
  let probing = false;
  const set = (s: BreakerState): void => {
    if (s === state) return;
    state = s;
    onChange?.(s);
  };
  return {
    admit(now) {
      if (state === "closed") return { ok: true };
      if (state === "open") {
        const wait = openedAt + halfOpenAfterMs - now;
        if (wait > 0) return { ok: false, retryAfterMs: wait };
        set("half-open");
        probing = true;
        return { ok: true };
      }
      if (!probing) {
        probing = true;
        return { ok: true };
      }
      return { ok: false, retryAfterMs: halfOpenAfterMs };
    },
    success() {
      failures = 0;
      probing = false;
      set("closed");
    },
    release() {
      probing = false;
    },
    failure(now) {
      probing = false;
      if (state === "half-open") {
        openedAt = now;
        set("open");
        return;
      }
      failures++;
      if (failures >= threshold) {
        openedAt = now;
        set("open");
      }
    },
    get state() {
      return state;
    },
  };
}
