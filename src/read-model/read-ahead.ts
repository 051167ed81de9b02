// Reads a log ahead of the fold: the next batches are read (file reads, Kafka fetches) while the
// fold works through this one. Gaps (offsets without a record) keep their place among the batches:
// a cursor must not pass records not yet folded.
import type { LogGap, LogRecord } from '../log/event-log.js';

export type AheadItem =
  { readonly kind: 'batch'; readonly records: readonly LogRecord[] } | { readonly kind: 'gap'; readonly gap: LogGap };

/** The batches of `open(onGap)` in order, with the gaps among them, keeping up to `depth` batches read ahead. */
export async function* readAhead(
  open: (onGap: (gap: LogGap) => void) => AsyncIterable<readonly LogRecord[]>,
  depth: number,
): AsyncIterable<AheadItem> {
  const queue: AheadItem[] = [];
  let inFlight = 0;
  const iterator = open((gap) => queue.push({ kind: 'gap', gap }))[Symbol.asyncIterator]();
  let exhausted = false;
  const fill = async (): Promise<void> => {
    while (!exhausted && inFlight < depth) {
      const next = await iterator.next();
      if (next.done === true) {
        exhausted = true;
        return;
      }
      queue.push({ kind: 'batch', records: next.value });
      inFlight += 1;
    }
  };
  // A failed read is thrown where the queue runs dry (below); meanwhile it must not count as unhandled.
  const topUp = (after: Promise<void>) => {
    const next = after.then(fill);
    next.catch(() => undefined);
    return next;
  };
  let filling = topUp(Promise.resolve());
  try {
    for (;;) {
      if (queue.length === 0) {
        await filling;
        if (queue.length === 0) return;
      }
      const item = queue.shift() as AheadItem;
      if (item.kind === 'batch') {
        inFlight -= 1;
        filling = topUp(filling);
      }
      yield item;
    }
  } finally {
    await iterator.return?.();
  }
}
