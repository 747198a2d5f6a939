/**
 * Work the gate shares between calls — the deadline queue's timer, the microtask that starts
 * listening to callers' signals — is scheduled from here, outside every call's async context.
 *
 * Node runs a timer or a microtask in the async context of the code that scheduled it. Shared
 * work is scheduled by whichever call comes first, yet what it runs belongs to other calls too: a
 * call that timed out would continue (its hooks, its retry) in the `AsyncLocalStorage` stores of
 * the call that armed the timer — another request's id in a log line, another trace as the parent
 * of its spans. Scheduled from here, it runs in the context this module was loaded in: none at
 * start-up (imported lazily inside a request, that request's: Node offers no way to leave every
 * store, so docs/observability.md asks for an import at start-up). A call that needs its own
 * context back there captures it (src/gate.ts, for calls made through a wrapper that listens to
 * their attempts). Users: the deadline queue, the signal-listening microtask, the ledgers' group
 * commit, the proxy's upstream restarts.
 * @module
 */
import { AsyncResource } from "node:async_hooks";

/** Entered only to schedule; never destroyed (no destroy hook is registered for it). */
const SHARED = new AsyncResource("toolgate.shared", { requireManualDestroy: true });

/**
 * Call `schedule` outside any call's async context: the timer or microtask it creates runs there.
 * @example
 * const timer = outsideCalls(() => setTimeout(fire, 30_000));
 */
export function outsideCalls<R>(schedule: () => R): R {
  return SHARED.runInAsyncScope(schedule);
}
