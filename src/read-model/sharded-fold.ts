// Folds a long file-log history on several threads at once (shard-fold.ts says why that is
// sound): one thread per shard, then the shards' read models joined here into one (their id tables' segments handed over, not re-inserted). Used for a fold
// from an empty read model (a start without a snapshot, `reports replay`), where most of the time
// is spent; a fold onto a snapshot's state goes through foldLog's one-thread path.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { FileRange } from '../log/file/file-range.js';
import { createReadModel, type ReadModel } from './read-model.js';
import { ReportTable } from './report-table.js';
import { shardBits, type SkippedRecord } from './shard-fold.js';
import type { ShardMessage, ShardRequest } from './shard-worker.js';

export interface ShardedFoldOptions {
  /** Threads at most, one shard each (the largest power of two of them). */
  readonly threads: number;
  readonly signal?: AbortSignal;
  /** Called as the threads go, with how many records all of them have passed. */
  readonly onProgress?: (records: number) => void;
}

export type ShardedFold =
  | {
      readonly kind: 'folded';
      readonly model: ReadModel;
      /** Records that are not valid report events, in offset order. */
      readonly skipped: readonly SkippedRecord[];
      /** The log's timestamp of the last record. */
      readonly lastTimestampMs: number | undefined;
    }
  /** A record's key does not name its report: the history must be folded on one thread. */
  | { readonly kind: 'misrouted'; readonly offset: number }
  | { readonly kind: 'aborted' };

type Done = Extract<ShardMessage, { kind: 'done' }>;

/**
 * Every thread reads and walks the whole file, so beyond a few threads that fixed share outweighs
 * the shrinking fold share of each (and each thread's heap counts in the process's memory).
 */
const MAX_FOLD_THREADS = 4;

/** One thread per core, up to MAX_FOLD_THREADS: the main thread only waits and merges. */
export function defaultFoldThreads(): number {
  return Math.min(MAX_FOLD_THREADS, Math.max(1, availableParallelism()));
}

/**
 * A young generation this large keeps the many short-lived strings of decoding from being
 * promoted and collected again (a fold with V8's default spends far more time in GC).
 */
const YOUNG_GENERATION_MB = 64;

export async function foldSharded(
  range: FileRange,
  { threads, signal, onProgress }: ShardedFoldOptions,
): Promise<ShardedFold> {
  // The shards' tables hold the ids of their own first bits of the hash: a power of two of them.
  const bits = shardBits(threads);
  const shards = 2 ** bits;
  const walked = new Array<number>(shards).fill(0);
  const workers: Worker[] = [];
  const stop = () => {
    for (const worker of workers) void worker.terminate();
  };
  signal?.addEventListener('abort', stop, { once: true });
  try {
    const results = await Promise.all(
      Array.from(
        { length: shards },
        (_, shard) =>
          new Promise<Done>((resolve, reject) => {
            const worker = new Worker(new URL('./shard-worker.js', import.meta.url), {
              resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
            });
            workers.push(worker);
            worker.on('message', (message: ShardMessage) => {
              if (message.kind === 'done') {
                resolve(message);
                return;
              }
              walked[shard] = message.walked;
              onProgress?.(Math.min(...walked));
            });
            worker.on('error', reject);
            // After 'done' this changes nothing; before it, the thread was stopped or died.
            worker.on('exit', (code) =>
              reject(new Error(`a folding thread stopped before it was done (exit code ${code})`)),
            );
            worker.postMessage({ ...range, shard, bits } satisfies ShardRequest);
          }),
      ),
    ).catch((error: unknown) => {
      if (signal?.aborted) return undefined;
      throw error;
    });
    // Threads may have answered before the abort stopped them: an aborted fold is aborted all the same.
    if (results === undefined || signal?.aborted === true) return { kind: 'aborted' };
    const misrouted = results.find((result) => result.misrouted !== undefined)?.misrouted;
    if (misrouted !== undefined) return { kind: 'misrouted', offset: misrouted };
    return merge(results, range.records);
  } finally {
    signal?.removeEventListener('abort', stop);
    await Promise.all(workers.map((worker) => worker.terminate()));
  }
}

/** One read model from the shards' (which hold disjoint reports). */
function merge(results: readonly Done[], records: number): ShardedFold {
  // Shard s's table is at s: the join hands each its segments of the directory.
  const reports = ReportTable.joinShards(results.map((result) => ReportTable.fromParts(result.table)));
  const model = createReadModel({ reports, cursor: new Map([[0, records]]) });
  // An idempotency key belongs to the first event that carried it, whichever shard folded it.
  const firstSeen = new Map<string, number>();
  for (const { keys } of results) {
    for (const [key, offset, request] of keys) {
      const seen = firstSeen.get(key);
      if (seen !== undefined && seen < offset) continue;
      firstSeen.set(key, offset);
      model.keys.set(key, request);
    }
  }
  // The newest sealed create of the whole log is the newest of the shards'.
  const newest = results
    .map((result) => result.newestKey)
    .reduce(
      (best, candidate) =>
        candidate !== undefined && (best === undefined || candidate[1] > best[1]) ? candidate : best,
      undefined,
    );
  if (newest !== undefined) model.newestKey = newest[0];
  const skipped = results.flatMap((result) => result.skipped).sort((a, b) => a.offset - b.offset);
  model.counts.records = records;
  model.counts.voidEvents = results.reduce((sum, result) => sum + result.voidEvents, 0);
  model.counts.invalid = skipped.length;
  return { kind: 'folded', model, skipped, lastTimestampMs: results[0]?.lastTimestampMs };
}
