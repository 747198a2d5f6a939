/**
 * Client-side group commit: items queued in one event-loop turn go to the store as one statement
 * (one round trip, one commit), and each caller gets its own answer. A failed statement fails
 * every item of its batch.
 * @module
 */

/** Wrap `run` (one answer per item, in order) into a per-item function that batches. */
export function _batcher<I, O>(run: (items: readonly I[]) => Promise<readonly O[]>, max = 256): (item: I) => Promise<O> {
  let queue: { item: I; resolve: (o: O) => void; reject: (e: unknown) => void }[] = [];
  const flush = (): void => {
    const batch = queue.slice(0, max);
    queue = queue.slice(max);
    if (queue.length > 0) setImmediate(flush);
    run(batch.map((b) => b.item)).then(
      (outs) => batch.forEach((b, i) => (i < outs.length ? b.resolve(outs[i]!) : b.reject(new Error("toolgate ledger: batch answer missing")))),
      (e: unknown) => batch.forEach((b) => b.reject(e)),
    );
  };
  return (item: I) =>
    new Promise<O>((resolve, reject) => {
      if (queue.length === 0) setImmediate(flush);
      queue.push({ item, resolve, reject });
    });
}
