// A thread of the sharded fold (sharded-fold.ts): walks the file log's checked records from the
// start (the log's own frame walker reads the file), folds its shard (shard-fold.ts) and answers with its read model (the report table's
// buffers move to the main thread, they are not copied), its idempotency keys with their first offsets and what it skipped.
import { parentPort } from 'node:worker_threads';
import type { KeyedRequest } from '../../projections/idempotency.js';
import { walkLogFile, type LogFileRange } from '../log/file/frame-walker.js';
import type { ReportTableParts } from './report-table.js';
import { ShardFold, type SkippedRecord } from './shard-fold.js';

export interface ShardRequest extends LogFileRange {
  readonly shard: number;
  /** Of 2^bits shards. */
  readonly bits: number;
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

function foldShard(request: ShardRequest): ShardFold {
  const fold = new ShardFold(request.shard, request.bits, request.records);
  walkLogFile(
    request,
    (buffer, offset, parts) => fold.fold(buffer, offset, parts),
    (walked) => parentPort?.postMessage({ kind: 'progress', walked } satisfies ShardMessage),
  );
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
  parentPort?.postMessage(message, [
    ...table.arena.chunks,
    ...table.index.segments.map((segment) => segment.words.buffer as ArrayBuffer),
  ]);
});
