/**
 * A per-tool circuit breaker: after `threshold` consecutive failures it opens and calls fail fast
 * with RETRYABLE and `retryAfterMs`; after `halfOpenAfterMs` one probe goes through, and its
 * outcome closes or reopens the circuit. A probe that ends without a verdict (the caller cancelled
 * it) lets the next call probe instead. Only the probe's own verdict closes or reopens a half-open
 * circuit: attempts let through before it opened report into the state they find, and a success
 * or a failure of theirs while it is open or probing changes nothing.
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

/**
 * Admission answer. `probe`: the id of the probe this attempt is (a half-open circuit let it
 * through), or 0 for an attempt let through a closed circuit. Its verdict is reported with it.
 */
export type Admission = { ok: true; probe: number } | { ok: false; retryAfterMs: number };

/**
 * A breaker instance (one per tool per gate). Times are `performance.now()` readings: a step of
 * the wall clock (NTP) neither holds the circuit open nor closes it early.
 */
export interface Breaker {
  admit(now: number): Admission;
  /** How long an attempt would wait to be admitted, from `now` (0: at once); changes nothing. */
  waitMs(now: number): number;
  /**
   * An attempt's answer showed the service up. `probe`: its admission's probe id (0 when a closed
   * circuit let it through). A closed circuit forgets its failures; an open one, or a half-open one
   * with another attempt as its probe, changes nothing (an attempt let through before it opened
   * is no probe), so only the probe closes it.
   */
  success(probe: number): void;
  /**
   * An attempt failed in a way that counts against the service. `probe`: its admission's probe id
   * (0 when a closed circuit let it through). While the circuit is open, or half-open with another
   * attempt as its probe, a failure of an attempt let through earlier says nothing new: it is not
   * counted, and does not move the wait.
   */
  failure(now: number, probe: number): void;
  /** Probe `probe` ended without a verdict on the service (cancelled, or never started): the next call may probe. */
  release(probe: number): void;
  readonly state: BreakerState;
}

/**
 * Create a breaker. `onChange` hears every state change.
 * @example const b = createBreaker({ threshold: 5, halfOpenAfterMs: 10_000 });
 */
export function createBreaker(o: BreakerOptions = {}, onChange?: (s: BreakerState) => void): Breaker {
  return new CircuitBreaker(o.threshold ?? 5, o.halfOpenAfterMs ?? 10_000, onChange);
}

const CLOSED_ADMISSION: Admission = Object.freeze({ ok: true, probe: 0 });

/**
 * The breaker's state is a plain field, and a success on a closed circuit with no failures
 * counted changes nothing: every call reads the one and reports the other, so both stay cheap.
 */
class CircuitBreaker implements Breaker {
  state: BreakerState = "closed";
  #failures = 0;
  #openedAt = 0;
  /** The id of the half-open circuit's probe in flight; 0 when none is. */
  #probe = 0;
  #lastProbe = 0;
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
    if (this.state === "closed") return CLOSED_ADMISSION;
    const wait = this.waitMs(now);
    if (wait > 0) return { ok: false, retryAfterMs: wait };
    // The probe is taken before the change is heard: a hook that calls the tool is not a second probe.
    this.#probe = ++this.#lastProbe;
    this.#set("half-open");
    return { ok: true, probe: this.#probe };
  }
  waitMs(now: number): number {
    if (this.state === "closed") return 0;
    if (this.state === "open") return Math.max(0, this.#openedAt + this.#halfOpenAfterMs - now);
    // A probe in flight holds every other call; at least 1 ms, so `halfOpenAfterMs: 0` is still one probe.
    return this.#probe === 0 ? 0 : Math.max(1, this.#halfOpenAfterMs);
  }
  success(probe: number): void {
    if (this.state === "closed") {
      this.#failures = 0;
      return;
    }
    if (this.state === "open" || probe === 0 || probe !== this.#probe) return;
    this.#failures = 0;
    this.#probe = 0;
    this.#set("closed");
  }
  release(probe: number): void {
    if (probe !== 0 && probe === this.#probe) this.#probe = 0;
  }
  failure(now: number, probe: number): void {
    if (this.state === "open") return;
    if (this.state === "half-open") {
      if (probe === 0 || probe !== this.#probe) return;
      this.#probe = 0;
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
