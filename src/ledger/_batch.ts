/**
 * Client-side group commit: items queued in one event-loop turn go to the store as one statement
 * (one round trip, one commit), and each caller gets its own answer. A statement that fails as a
 * whole fails every item of its batch, except when `alone(error)` says the store refused it for
 * one row's data: then each item runs again as its own statement, so one bad row fails only itself.
 * @module
 */
import { outsideCalls } from "../policy/shared-context.js";

/** Wrap `run` (one answer per item, in order) into a per-item function that batches. */
export function _batcher<I, O>(
  run: (items: readonly I[]) => Promise<readonly O[]>,
  alone: (e: unknown) => boolean = () => false,
  max = 256,
): (item: I) => Promise<O> {
  type Waiter = { item: I; resolve: (o: O) => void; reject: (e: unknown) => void };
  let queue: Waiter[] = [];
  const send = (batch: readonly Waiter[]): void => {
    run(batch.map((b) => b.item)).then(
      (outs) => batch.forEach((b, i) => (i < outs.length ? b.resolve(outs[i]!) : b.reject(new Error("toolgate ledger: batch answer missing")))),
      (e: unknown) => {
        // The statement failed as a whole and changed nothing; a bad row must not fail the others.
        if (batch.length > 1 && alone(e)) for (const b of batch) send([b]);
        else batch.forEach((b) => b.reject(e));
      },
    );
  };
  const flush = (): void => {
    const batch = queue.slice(0, max);
    queue = queue.slice(max);
    if (queue.length > 0) outsideCalls(() => setImmediate(flush));
    send(batch);
  };
  return (item: I) =>
    new Promise<O>((resolve, reject) => {
      // The flush serves every call queued: it runs in none of their contexts (a traced query would get one call's span).
      if (queue.length === 0) outsideCalls(() => setImmediate(flush));
      queue.push({ item, resolve, reject });
    });
}
