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
  return new CircuitBreaker(o.threshold ?? 5, o.halfOpenAfterMs ?? 10_000, onChange);
}

/**
 * The breaker's state is a plain field, and a success on a closed circuit with no failures
 * counted changes nothing: every call reads the one and reports the other, so both stay cheap.
 */
class CircuitBreaker implements Breaker {
  state: BreakerState = "closed";
  #failures = 0;
  #openedAt = 0;
  #probing = false;
  readonly #threshold: number;
  readonly #halfOpenAfterMs: number;
  readonly #onChange: ((s: BreakerState) => void) | undefined;
  constructor(threshold: number, halfOpenAfterMs: number, onChange: ((s: BreakerState) => void) | undefined) {
    this.#threshold = threshold;
    this.#halfOpenAfterMs = halfOpenAfterMs;
    this.#onChange = onChange;
  }
  #set(s: BreakerState): void {
    if (s === this.state) return;
    this.state = s;
    this.#onChange?.(s);
  }
  admit(now: number): Admission {
    if (this.state === "closed") return { ok: true };
    if (this.state === "open") {
      const wait = this.#openedAt + this.#halfOpenAfterMs - now;
      if (wait > 0) return { ok: false, retryAfterMs: wait };
      this.#set("half-open");
      this.#probing = true;
      return { ok: true };
    }
    if (!this.#probing) {
      this.#probing = true;
      return { ok: true };
    }
    return { ok: false, retryAfterMs: this.#halfOpenAfterMs };
  }
  success(): void {
    if (this.state === "closed" && this.#failures === 0 && !this.#probing) return;
    this.#failures = 0;
    this.#probing = false;
    this.#set("closed");
  }
  release(): void {
    this.#probing = false;
  }
  failure(now: number): void {
    this.#probing = false;
    if (this.state === "half-open") {
      this.#openedAt = now;
      this.#set("open");
      return;
    }
    this.#failures++;
    if (this.#failures >= this.#threshold) {
      this.#openedAt = now;
      this.#set("open");
    }
  }
}
