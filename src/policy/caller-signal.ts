/**
 * The caller's AbortSignal, heard once however many waits share it: an agent turn's signal over
 * parallel tool calls, each perhaps in an attempt, a backoff or an approval. Node warns past 10
 * listeners on one signal, and each listener costs; here a signal has at most one, which calls
 * every watcher's `cancel()` once.
 * @module
 */

/** Something that waits on behalf of a call and stops when the caller aborts. */
export interface SignalWatcher {
  /** The caller aborted. Must not throw. */
  cancel(): void;
}

const watchers = new WeakMap<AbortSignal, Set<SignalWatcher>>();

/** Call `w.cancel()` when `signal` aborts (the caller checks `signal.aborted` first). */
export function watch(signal: AbortSignal, w: SignalWatcher): void {
  let set = watchers.get(signal);
  if (set === undefined) {
    set = new Set();
    watchers.set(signal, set);
    signal.addEventListener("abort", onCallerAbort); // no options object: parsing one costs more than the listener
  }
  set.add(w);
}

/** Stop watching; the signal's listener goes when its last watcher does. */
export function unwatch(signal: AbortSignal, w: SignalWatcher): void {
  const set = watchers.get(signal);
  if (set === undefined || !set.delete(w) || set.size > 0) return;
  watchers.delete(signal);
  signal.removeEventListener("abort", onCallerAbort);
}

function onCallerAbort(this: AbortSignal): void {
  const set = watchers.get(this);
  if (set === undefined) return;
  watchers.delete(this);
  this.removeEventListener("abort", onCallerAbort);
  for (const w of [...set]) {
    try {
      w.cancel();
    } catch {
      // watchers do not throw; never let one stop the rest
    }
  }
}

/** What {@link untilSettled} answers instead of the value. */
export const CANCELLED: unique symbol = Symbol("toolgate.cancelled");
export const TIMED_OUT: unique symbol = Symbol("toolgate.timedOut");

/**
 * `p`'s value, or {@link CANCELLED} as soon as `signal` aborts, or {@link TIMED_OUT} after
 * `timeoutMs` (when given) — whichever comes first. For the steps of a call that wait on code
 * other than the tool (an approval, an async check): the caller's cancel ends the call there too.
 * Rejects when `p` rejects first.
 */
export function untilSettled<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T | typeof CANCELLED>;
export function untilSettled<T>(p: Promise<T>, signal: AbortSignal | undefined, timeoutMs: number): Promise<T | typeof CANCELLED | typeof TIMED_OUT>;
export function untilSettled<T>(p: Promise<T>, signal: AbortSignal | undefined, timeoutMs?: number): Promise<T | typeof CANCELLED | typeof TIMED_OUT> {
  if (signal === undefined && timeoutMs === undefined) return p;
  if (signal?.aborted === true) return Promise.resolve(CANCELLED);
  return new Promise((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const w: SignalWatcher = { cancel: () => end(CANCELLED) };
    const end = (v: T | typeof CANCELLED | typeof TIMED_OUT, failed = false): void => {
      if (timer !== undefined) clearTimeout(timer);
      if (signal !== undefined) unwatch(signal, w);
      if (failed) reject(v);
      else resolve(v);
    };
    if (signal !== undefined) watch(signal, w);
    if (timeoutMs !== undefined) {
      // Ref'd: cleared as soon as `p` settles, and a wait on a promise that holds no handle must still end.
      timer = setTimeout(() => end(TIMED_OUT), Math.min(timeoutMs, 2 ** 31 - 1));
    }
    p.then(
      (v) => end(v),
      (e: unknown) => end(e as T, true),
    );
  });
}
