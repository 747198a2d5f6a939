/**
 * Cheap timeouts for the hot path. A `setTimeout` per call costs about as much as validating a
 * small payload; calls that share a timeout length finish roughly in order, so one queue per
 * length (a doubly linked list of the deadlines themselves) with one armed timer gives O(1) add
 * and cancel, and no allocation for a deadline that an attempt carries itself. Uses the global timer functions at call
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

/**
 * A deadline that is its own node in its queue's list, so arming one allocates nothing: the
 * attempt that a deadline guards extends this class. Unlinked when cancelled or fired, so a
 * finished attempt is never kept alive by the queue.
 */
export abstract class Deadline {
  /** @internal The queue's links, and when this deadline passes (`performance.now()` time). */
  _prev: Deadline | undefined = undefined;
  _next: Deadline | undefined = undefined;
  _at = 0;
  _queue: DeadlineQueue | undefined = undefined;

  /** Called once when the deadline passes, unless cancelled first. */
  abstract onDeadline(): void;
}

/**
 * Fire `d.onDeadline()` `ms` after `now` (default: the current `performance.now()`). Arm an object
 * once; while it is armed, a second call does nothing. Functions, not methods: a tool's context
 * is a deadline, and its prototype should not offer the tool a way to disarm its own timeout.
 */
export function armDeadline(d: Deadline, ms: number, now: number = performance.now()): void {
  if (d._queue === undefined) queueFor(ms).add(d, now);
}

/** Cancel `d`; nothing happens if it already fired or was cancelled (or never armed). */
export function cancelDeadline(d: Deadline): void {
  d._queue?.remove(d);
}

/** A deadline around a separate target (what {@link scheduleDeadline} returns). */
class Entry extends Deadline implements DeadlineHandle {
  constructor(private target: DeadlineTarget | undefined) {
    super();
  }
  override onDeadline(): void {
    const t = this.target;
    this.target = undefined;
    t?.onDeadline();
  }
  cancel(): void {
    this.target = undefined;
    cancelDeadline(this);
  }
}

/**
 * Deadlines of one length, in the order they were armed (which is the order they expire): a
 * doubly linked list, so cancelling any of them is O(1), and one armed timer for the front.
 */
class DeadlineQueue {
  private head: Deadline | undefined;
  private tail: Deadline | undefined;
  private timer: Timer | undefined;
  /** Deadlines in the list. */
  size = 0;

  constructor(readonly ms: number) {}

  add(d: Deadline, now: number): void {
    d._at = now + this.ms;
    d._queue = this;
    const t = this.tail;
    if (t === undefined) this.head = d;
    else {
      t._next = d;
      d._prev = t;
    }
    this.tail = d;
    this.size++;
    if (this.timer === undefined) this.arm(this.ms);
  }

  remove(d: Deadline): void {
    const p = d._prev;
    const n = d._next;
    if (p === undefined) this.head = n;
    else p._next = n;
    if (n === undefined) this.tail = p;
    else n._prev = p;
    d._prev = undefined;
    d._next = undefined;
    d._queue = undefined;
    this.size--;
  }

  private arm(delay: number): void {
    // A deadline further away than setTimeout can wait re-arms when that much has passed.
    this.timer = setTimeout(() => this.onTimer(), Math.min(MAX_TIMER_MS, Math.max(1, delay))) as unknown as Timer;
    this.timer.unref?.();
  }

  private onTimer(): void {
    // `timer` stays set while the passed deadlines run, so one they add does not arm a second timer.
    const now = performance.now();
    for (let h = this.head; h !== undefined && h._at <= now; h = this.head) {
      this.remove(h);
      try {
        h.onDeadline();
      } catch {
        // the deadlines are internal and do not throw; never let one stop the queue
      }
    }
    this.timer = undefined;
    if (this.head !== undefined) this.arm(this.head._at - performance.now());
  }
}

const queues = new Map<number, DeadlineQueue>();
let last: DeadlineQueue | undefined;

function queueFor(ms: number): DeadlineQueue {
  if (last !== undefined && last.ms === ms) return last;
  let q = queues.get(ms);
  if (q === undefined) {
    q = new DeadlineQueue(ms);
    queues.set(ms, q);
  }
  last = q;
  return q;
}

/** @internal Deadlines waiting in the queue of `ms`-long deadlines (a test of the unlinking). */
export function _queuedDeadlines(ms: number): number {
  return queues.get(ms)?.size ?? 0;
}

/**
 * Call `target.onDeadline()` `ms` milliseconds after `now` (a `performance.now()` reading;
 * default: the current one) unless cancelled first. A caller that has just read the clock
 * passes its reading.
 */
export function scheduleDeadline(ms: number, target: DeadlineTarget, now: number = performance.now()): DeadlineHandle {
  const e = new Entry(target);
  armDeadline(e, ms, now);
  return e;
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
