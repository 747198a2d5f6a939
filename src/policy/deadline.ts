/**
 * Cheap timeouts for the hot path. A `setTimeout` per call costs about as much as validating a
 * small payload; calls that share a timeout length finish roughly in order, so one queue per
 * length (a doubly linked list) with one armed timer gives O(1) add and cancel. Uses the global timer functions at call
 * time, so fake timers in tests apply (with `performance` faked too, as vitest and Jest do by default). Timers are unref'd, so a
 * finished call's armed timer never holds the process open; when the process would exit with
 * deadlines still waiting (a tool awaiting a promise that holds no handle), they hold it until
 * they pass, so every call still answers.
 * @module
 */
import { unwatch, watch, type SignalWatcher } from "./caller-signal.js";
import { outsideCalls } from "./shared-context.js";

/** What a deadline calls when it passes. */
export interface DeadlineTarget {
  onDeadline(): void;
}

/** A scheduled deadline; `cancel()` when the work finished first. */
export interface DeadlineHandle {
  cancel(): void;
}

type Timer = { unref?: () => unknown; ref?: () => unknown };

/** The longest delay `setTimeout` takes, ms; a longer one fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * One deadline: a node of its queue's list, and its own cancel handle (no closure per call).
 * A separate object from the work it guards: a tool's context must not lead to the queue, which
 * links every call in flight with the same timeout length.
 */
class Entry implements DeadlineHandle {
  prev: Entry | undefined = undefined;
  next: Entry | undefined = undefined;
  /** Set while the entry is in the list. */
  queue: DeadlineQueue | undefined = undefined;
  constructor(
    readonly at: number,
    /** Dropped on cancel: a finished attempt is not kept alive by its deadline. */
    public target: DeadlineTarget | undefined,
  ) {}
  cancel(): void {
    this.target = undefined;
    this.queue?.remove(this);
  }
}

/**
 * Deadlines of one length, in the order they were armed (which is the order they expire): a
 * doubly linked list, so cancelling any of them is O(1), and one armed timer for the front.
 */
class DeadlineQueue {
  private head: Entry | undefined;
  private tail: Entry | undefined;
  private timer: Timer | undefined;
  /**
   * The `setTimeout` that armed {@link timer}. Tests swap the global timer functions (fake timers
   * installed, then uninstalled): a timer armed with functions no longer installed may never fire,
   * and would hold every later deadline of this length with it. So one is re-armed when they changed.
   */
  private armedWith: typeof setTimeout | undefined;
  /** Deadlines in the list. */
  size = 0;

  constructor(readonly ms: number) {}

  add(target: DeadlineTarget, now: number): DeadlineHandle {
    const d = new Entry(now + this.ms, target);
    d.queue = this;
    const t = this.tail;
    if (t === undefined) this.head = d;
    else {
      t.next = d;
      d.prev = t;
    }
    this.tail = d;
    this.size++;
    if (this.timer === undefined) this.arm(this.ms);
    else if (this.armedWith !== setTimeout) this.rearm(now);
    return d;
  }

  remove(d: Entry): void {
    const p = d.prev;
    const n = d.next;
    if (p === undefined) this.head = n;
    else p.next = n;
    if (n === undefined) this.tail = p;
    else n.prev = p;
    d.prev = undefined;
    d.next = undefined;
    d.queue = undefined;
    this.size--;
  }

  /**
   * The process is about to exit with deadlines still waiting: their work holds no handle (a tool
   * awaiting a promise nothing will settle). Hold the process until the first of them passes, so
   * the call answers with its timeout instead of never.
   */
  holdIfWaiting(): void {
    if (this.size > 0) this.timer?.ref?.();
  }

  private arm(delay: number): void {
    // A deadline further away than setTimeout can wait re-arms when that much has passed. The
    // timer serves every call in the queue: it runs in none of their contexts (./shared-context.ts).
    this.armedWith = setTimeout;
    // A timer of the functions swapped out that fires anyway runs the passed deadlines (they may be
    // ones it was armed for), but arms nothing: the current timer does.
    const timer = outsideCalls(() => setTimeout(() => this.onTimer(this.timer === timer), Math.min(MAX_TIMER_MS, Math.max(1, delay)))) as unknown as Timer;
    this.timer = timer;
    timer.unref?.();
  }

  /** The global timer functions changed since the timer was armed: arm it anew with today's. */
  private rearm(now: number): void {
    const old = this.timer;
    this.timer = undefined;
    try {
      clearTimeout(old as Parameters<typeof clearTimeout>[0]); // the old clock's timer, if today's functions know it
    } catch {
      // a timer of another clock: no longer the queue's; should it fire, it only runs passed deadlines
    }
    this.arm((this.head?.at ?? now + this.ms) - now);
  }

  /** `current`: the queue's own timer fired (not one armed with timer functions since swapped out). */
  private onTimer(current: boolean): void {
    // `timer` stays set while the passed deadlines run, so one they add does not arm a second timer.
    const now = performance.now();
    for (let h = this.head; h !== undefined && h.at <= now; h = this.head) {
      this.remove(h);
      const target = h.target;
      h.target = undefined;
      try {
        target?.onDeadline();
      } catch {
        // the deadlines are internal and do not throw; never let one stop the queue
      }
    }
    if (!current) return;
    this.timer = undefined;
    if (this.head !== undefined) this.arm(this.head.at - performance.now());
  }
}

const queues = new Map<number, DeadlineQueue>();
let last: DeadlineQueue | undefined;

function queueFor(ms: number): DeadlineQueue {
  if (last !== undefined && last.ms === ms) return last;
  let q = queues.get(ms);
  if (q === undefined) {
    if (queues.size === 0 && typeof process === "object" && typeof process.on === "function") process.on("beforeExit", holdWaiting);
    q = new DeadlineQueue(ms);
    queues.set(ms, q);
  }
  last = q;
  return q;
}

/** `beforeExit`: see {@link DeadlineQueue.holdIfWaiting}. Unref'd timers cost nothing per call; this costs nothing until the process would exit. */
function holdWaiting(): void {
  for (const q of queues.values()) q.holdIfWaiting();
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
  return queueFor(ms).add(target, now);
}

/**
 * Wait `ms` (or until `signal` aborts). Resolves true when the full wait elapsed. Calls that back
 * off on one signal share its one listener (src/policy/caller-signal.ts).
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (ms <= 0) return Promise.resolve(signal?.aborted !== true);
  if (signal?.aborted === true) return Promise.resolve(false);
  return new Promise((resolve) => {
    const w: SignalWatcher = {
      cancel: () => {
        clearTimeout(t);
        resolve(false);
      },
    };
    const t = setTimeout(
      () => {
        if (signal !== undefined) unwatch(signal, w);
        resolve(true);
      },
      Math.min(MAX_TIMER_MS, ms),
    );
    if (signal !== undefined) watch(signal, w);
  });
}
