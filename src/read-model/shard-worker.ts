// A thread of the sharded fold (sharded-fold.ts): reads the file log's checked records from the
// start, folds its shard (shard-fold.ts) and answers with its read model (the report table's
// buffers move to the main thread, they are not copied), its idempotency keys with their first offsets and what it skipped.
// Reads are synchronous: this thread has nothing else to do meanwhile.
import { closeSync, openSync, readSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import type { KeyedRequest } from '../../projections/idempotency.js';
import type { ReportTableParts } from './report-table.js';
import { ShardFold, type SkippedRecord } from './shard-fold.js';

export interface ShardRequest {
  readonly path: string;
  /** Where the first batch lies, and where the records end. */
  readonly startByte: number;
  readonly endByte: number;
  readonly records: number;
  readonly shard: number;
  readonly shards: number;
}

export type ShardMessage =
  | { readonly kind: 'progress'; readonly walked: number }
  | {
      readonly kind: 'done';
      readonly table: ReportTableParts;
      readonly keys: ReadonlyArray<readonly [key: string, offset: number, request: KeyedRequest]>;
      readonly voidEvents: number;
      readonly skipped: readonly SkippedRecord[];
      readonly lastTimestampMs: number | undefined;
      readonly misrouted: number | undefined;
      /** The shard's newest sealed create: its key and offset. */
      readonly newestKey: readonly [key: string, offset: number] | undefined;
    };

/** Bytes read at a time: large sequential reads. */
const READ_BYTES = 4 * 1024 * 1024;

function foldShard(request: ShardRequest): ShardFold {
  const fold = new ShardFold(request.shard, request.shards, request.records);
  const file = openSync(request.path, 'r');
  try {
    let buffer = Buffer.allocUnsafeSlow(READ_BYTES);
    let position = request.startByte;
    while (!fold.done) {
      const length = Math.min(buffer.length, request.endByte - position);
      const bytesRead = length > 0 ? readSync(file, buffer, 0, length, position) : 0;
      if (bytesRead === 0)
        throw new Error(
          `${request.path}: the log ends at byte ${position}, before record #${fold.walked} (was it truncated?)`,
        );
      const consumed = fold.walk(buffer.subarray(0, bytesRead));
      if (consumed === 0) {
        if (bytesRead < buffer.length)
          throw new Error(
            `${request.path}: record #${fold.walked} runs past the end of the log (did the file change?)`,
          );
        // A frame larger than the buffer: read it whole next time.
        buffer = Buffer.allocUnsafeSlow(buffer.length * 2);
      }
      position += consumed;
      parentPort?.postMessage({ kind: 'progress', walked: fold.walked } satisfies ShardMessage);
    }
  } finally {
    closeSync(file);
  }
  return fold;
}

parentPort?.once('message', (request: ShardRequest) => {
  const { model, keyOffsets, skipped, misrouted, lastTimestampMs, newestKeyAt } = foldShard(request);
  const table = model.reports.parts();
  const keys = [...model.keys].map(([key, keyed]) => [key, keyOffsets.get(key) as number, keyed] as const);
  const newestKey =
    model.newestKey === undefined || newestKeyAt === undefined ? undefined : ([model.newestKey, newestKeyAt] as const);
  const message: ShardMessage = {
    kind: 'done',
    table,
    keys,
    voidEvents: model.counts.voidEvents,
    skipped,
    lastTimestampMs,
    misrouted,
    newestKey,
  };
  // The table's buffers move with the message (the thread ends after it): no copy.
  parentPort?.postMessage(message, [...table.arena.chunks, table.index.slots.buffer as ArrayBuffer]);
});
