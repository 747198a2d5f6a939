/**
 * Cheap timeouts for the hot path. A `setTimeout` per call costs about as much as validating a
 * small payload; calls that share a timeout length finish roughly in order, so one queue per
 * length with one armed timer gives O(1) add and cancel. Uses the global timer functions at call
 * time, so fake timers in tests apply. Timers are unref'd: a pending deadline never holds the
 * process open by itself (the work it guards does, through its own sockets and handles).
 * @module
 */

interface Entry {
  readonly deadline: number;
  readonly fire: () => void;
  done: boolean;
}

/** A scheduled deadline; `cancel()` when the work finished first. */
export interface DeadlineHandle {
  cancel(): void;
}

type Timer = { unref?: () => unknown };

class DeadlineQueue {
  private entries: Entry[] = [];
  private head = 0;
  private timer: Timer | undefined;

  constructor(private readonly ms: number) {}

  add(fire: () => void): DeadlineHandle {
    const entry: Entry = { deadline: Date.now() + this.ms, fire, done: false };
    this.entries.push(entry);
    if (this.timer === undefined) this.arm(this.ms);
    return {
      cancel: () => {
        if (entry.done) return;
        entry.done = true;
        this.compact();
      },
    };
  }

  private compact(): void {
    const e = this.entries;
    while (this.head < e.length && e[this.head]!.done) this.head++;
    if (this.head === e.length) {
      e.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > e.length) {
      this.entries = e.slice(this.head);
      this.head = 0;
    }
  }

  private arm(delay: number): void {
    this.timer = setTimeout(() => this.onTimer(), Math.max(1, delay)) as unknown as Timer;
    this.timer.unref?.();
  }

  private onTimer(): void {
    this.timer = undefined;
    const now = Date.now();
    const e = this.entries;
    while (this.head < e.length) {
      const entry = e[this.head]!;
      if (!entry.done && entry.deadline > now) break;
      this.head++;
      if (!entry.done) {
        entry.done = true;
        try {
          entry.fire();
        } catch {
          // fire callbacks are internal and do not throw; never let one stop the queue
        }
      }
    }
    if (this.head < e.length) this.arm(e[this.head]!.deadline - now);
    else {
      e.length = 0;
      this.head = 0;
    }
  }
}

const queues = new Map<number, DeadlineQueue>();

/** Call `fire` after `ms` milliseconds unless cancelled first. */
export function scheduleDeadline(ms: number, fire: () => void): DeadlineHandle {
  let q = queues.get(ms);
  if (q === undefined) {
    q = new DeadlineQueue(ms);
    queues.set(ms, q);
  }
  return q.add(fire);
}

/** Wait `ms` (or until `signal` aborts). Resolves true when the full wait elapsed. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (ms <= 0) return Promise.resolve(signal?.aborted !== true);
  return new Promise((resolve) => {
    if (signal?.aborted === true) return resolve(false);
    const onAbort = (): void => {
      clearTimeout(t);
      resolve(false);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
