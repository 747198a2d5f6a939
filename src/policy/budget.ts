/**
 * A retry budget (token bucket): every call deposits `ratio` tokens, every retry spends one, and
 * the bucket holds at most `reserve` tokens (at least one). Under a dead dependency retries settle at about
 * `ratio` of calls plus the reserve, so it sees ~1.1× load instead of 3×.
 * @module
 */

/** Budget settings. */
export interface RetryBudgetOptions {
  /** Tokens earned per call. Default 0.1 (retries ≤ 10% of calls). */
  readonly ratio?: number;
  /** Bucket size and starting balance: the small floor of retries always allowed. Default 10. */
  readonly reserve?: number;
}

/** A shared retry budget. */
export interface RetryBudget {
  /** Record a call (earns `ratio` tokens). */
  deposit(): void;
  /** Spend a token for a retry; false when the budget is exhausted. */
  tryWithdraw(): boolean;
  /** Give back the token of a retry that was not made after all (refused by the breaker, cancelled in its wait). */
  refund(): void;
  /** Tokens available now. */
  readonly balance: number;
}

/**
 * Create a retry budget.
 * @example const budget = createRetryBudget({ ratio: 0.1, reserve: 10 });
 */
export function createRetryBudget(o: RetryBudgetOptions = {}): RetryBudget {
  const ratio = o.ratio ?? 0.1;
  const reserve = o.reserve ?? 10;
  // Room for at least one token: with a reserve below 1 the calls still earn their retries.
  const capacity = Math.max(reserve, 1);
  let balance = reserve;
  return {
    deposit() {
      balance = Math.min(capacity, balance + ratio);
    },
    tryWithdraw() {
      if (balance < 1) return false;
      balance -= 1;
      return true;
    },
    refund() {
      balance = Math.min(capacity, balance + 1);
    },
    get balance() {
      return balance;
    },
  };
}

/** A budget that never refuses (budget disabled). */
export const UNLIMITED_BUDGET: RetryBudget = Object.freeze({
  deposit() {},
  tryWithdraw: () => true,
  refund() {},
  balance: Number.POSITIVE_INFINITY,
});
