// Reads a log ahead of the fold and, with a decode pool, hands large batches to it as it goes, so
// the workers decode the next batches while the main thread folds this one. Gaps (offsets without a
// record) keep their place among the batches: a cursor must not pass records not yet folded.
import type { LogGap, LogRecord } from '../log/event-log.js';
import type { DecodePool } from './decode-pool.js';
import type { FoldInput } from './fold-input.js';

/** Smaller batches are decoded by the folding thread itself (the hand-over would cost more). */
const MIN_POOL_BATCH = 256;

export type AheadItem =
  | { readonly kind: 'batch'; readonly records: readonly LogRecord[]; readonly inputs: FoldInput[] | undefined }
  | { readonly kind: 'gap'; readonly gap: LogGap };

type Queued = { readonly kind: 'batch'; readonly records: readonly LogRecord[]; readonly inputs: Promise<FoldInput[]> | undefined } | { readonly kind: 'gap'; readonly gap: LogGap };

/**
 * The batches of `open(onGap)` in order, with their fold inputs when a pool decoded them (absent:
 * the folding thread decodes), keeping up to `depth` batches in flight.
 */
export async function* decodeAhead(open: (onGap: (gap: LogGap) => void) => AsyncIterable<readonly LogRecord[]>, pool: DecodePool | undefined, depth: number): AsyncIterable<AheadItem> {
  const queue: Queued[] = [];
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
      const records = next.value;
      const inputs = pool !== undefined && records.length >= MIN_POOL_BATCH ? pool.decode(records) : undefined;
      // Awaited in order below; until then a failure must not count as unhandled.
      inputs?.catch(() => undefined);
      queue.push({ kind: 'batch', records, inputs });
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
      const item = queue.shift() as Queued;
      if (item.kind === 'gap') {
        yield item;
        continue;
      }
      inFlight -= 1;
      filling = topUp(filling);
      yield { kind: 'batch', records: item.records, inputs: item.inputs === undefined ? undefined : await item.inputs };
    }
  } finally {
    await iterator.return?.();
  }
}
