/**
 * Cheap timeouts for the hot path. A `setTimeout` per call costs about as much as validating a
 * small payload; calls that share a timeout length finish roughly in order, so one queue per
 * length with one armed timer gives O(1) add and cancel. Uses the global timer functions at call
 * time, so fake timers in tests apply (with `performance` faked too, as vitest and Jest do by default). Timers are unref'd: a pending deadline never holds the
 * process open by itself (the work it guards does, through its own sockets and handles).
 * @module
 */

/** What a deadline calls when it passes. */
export interface DeadlineTarget {
  onDeadline(): void;
}

/** A scheduled deadline; `cancel()` when the work finished first. */
export interface DeadlineHandle {
  cancel(): void;
}

type Timer = { unref?: () => unknown };

/** The longest delay `setTimeout` takes, ms; a longer one fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** One deadline: a node of its queue's list, and its own cancel handle (no closure per call). */
class Entry implements DeadlineHandle {
  next: Entry | undefined = undefined;
  done = false;
  constructor(
    readonly deadline: number,
    /** Dropped on cancel: a finished attempt is not kept alive by its deadline. */
    public target: DeadlineTarget | undefined,
    private readonly queue: DeadlineQueue,
  ) {}
  cancel(): void {
    if (this.done) return;
    this.done = true;
    this.target = undefined;
    this.queue.cancelled();
  }
}

/**
 * Deadlines of one length, in the order they were scheduled (which is the order they expire).
 * Finished entries leave from the front; when a long call holds the front, the finished ones
 * behind it are swept once they outnumber the live ones, so the list stays O(live) in length.
 */
class DeadlineQueue {
  private head: Entry | undefined;
  private tail: Entry | undefined;
  private timer: Timer | undefined;
  /** Entries in the list, and how many of them are not done. */
  private size = 0;
  private live = 0;

  constructor(private readonly ms: number) {}

  add(target: DeadlineTarget, now: number): DeadlineHandle {
    const entry = new Entry(now + this.ms, target, this);
    if (this.tail === undefined) this.head = entry;
    else this.tail.next = entry;
    this.tail = entry;
    this.size++;
    this.live++;
    if (this.timer === undefined) this.arm(this.ms);
    return entry;
  }

  /** An entry was cancelled: drop finished entries from the front, sweep the rest when they pile up. */
  cancelled(): void {
    this.live--;
    let h = this.head;
    while (h !== undefined && h.done) {
      h = h.next;
      this.size--;
    }
    this.front(h);
    if (h !== undefined && this.size > 64 && this.size > 2 * this.live) this.sweep();
  }

  /** `h` is the new front of the list (undefined: the list is empty). */
  private front(h: Entry | undefined): void {
    this.head = h;
    if (h === undefined) {
      this.tail = undefined;
      this.size = 0;
    }
  }

  /** Unlink every done entry (the head is live). */
  private sweep(): void {
    let prev = this.head!;
    let n = 1;
    for (let e = prev.next; e !== undefined; e = e.next) {
      if (e.done) continue;
      prev.next = e;
      prev = e;
      n++;
    }
    prev.next = undefined;
    this.tail = prev;
    this.size = n;
  }

  /** Entries in the list (tests). */
  get length(): number {
    return this.size;
  }

  private arm(delay: number): void {
    // A deadline further away than setTimeout can wait re-arms when that much has passed.
    this.timer = setTimeout(() => this.onTimer(), Math.min(MAX_TIMER_MS, Math.max(1, delay))) as unknown as Timer;
    this.timer.unref?.();
  }

  private onTimer(): void {
    this.timer = undefined;
    const now = performance.now();
    let h = this.head;
    while (h !== undefined && (h.done || h.deadline <= now)) {
      if (!h.done) {
        h.done = true;
        this.live--;
        const target = h.target;
        h.target = undefined;
        try {
          target?.onDeadline();
        } catch {
          // targets are internal and do not throw; never let one stop the queue
        }
      }
      h = h.next;
      this.size--;
    }
    this.front(h);
    if (h !== undefined) this.arm(h.deadline - now);
  }
}

const queues = new Map<number, DeadlineQueue>();

/** @internal Entries kept by the queue of `ms`-long deadlines (a test of the sweep). */
export function _queuedDeadlines(ms: number): number {
  return queues.get(ms)?.length ?? 0;
}

/**
 * Call `target.onDeadline()` `ms` milliseconds after `now` (a `performance.now()` reading;
 * default: the current one) unless cancelled first. A caller that has just read the clock
 * passes its reading.
 */
export function scheduleDeadline(ms: number, target: DeadlineTarget, now: number = performance.now()): DeadlineHandle {
  let q = queues.get(ms);
  if (q === undefined) {
    q = new DeadlineQueue(ms);
    queues.set(ms, q);
  }
  return q.add(target, now);
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
