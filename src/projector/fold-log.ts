// Folds a whole log (or the history up to a cursor) into a ReadModel with applyRecord, on several
// threads where the file log allows: the projector's catch-up at start, and the core of `reports
// replay`, `reports snapshot` and the digest comparison of `reports migrate`.
import { createHash } from 'node:crypto';
import { canonicalState, type LiveReports } from '../../projections/canonical.js';
import {
  cursorReached,
  cursorTotal,
  type Cursor,
  type EventLog,
  type LogPosition,
  type LogRecord,
} from '../log/event-log.js';
import { readAhead } from '../read-model/read-ahead.js';
import { applyRecord, passGap, type Applied, type ErasedKey, type ReadModel } from '../read-model/read-model.js';
import { foldSharded } from '../read-model/sharded-fold.js';
import { ReportTable } from '../read-model/report-table.js';
import type { KeyDigest } from '../read-model/report-record.js';
import { isFileBacked } from '../log/file/file-range.js';
import { NO_KEYS, parseKeyId, type KeyLookup } from '../keys/key-store.js';

export interface FoldOptions {
  /** Stop before this cursor (exclusive, per partition); default: the head seen at start. */
  readonly to?: Cursor;
  readonly signal?: AbortSignal;
  /**
   * Threads to shard a long fold across (sharded-fold.ts): used when the read model is empty, the
   * log is a file log and at least SHARDED_FOLD_RECORDS records are to be folded. Absent: one thread.
   */
  readonly threads?: number;
  /** Called with every record folded and what it did; a fold with it runs on one thread. */
  readonly onRecord?: (record: LogRecord, applied: Applied) => void;
  /**
   * Told what each folded event ends (a deletion, a void create: read-model.ts Ended), as a running
   * projector is; a fold with it runs on one thread.
   */
  readonly onEnded?: ErasedKey;
  /** Called with every record skipped because it is not a valid report event, in order. */
  readonly onSkipped?: (position: LogPosition, reason: string) => void;
  /** Called as the fold goes (after every batch on one thread). */
  readonly onProgress?: (progress: FoldProgress) => void;
  /** Called when the threads failed and this thread folds instead (slower, not wrong): to say why. */
  readonly onThreadsFailed?: (error: unknown) => void;
}

export interface FoldProgress {
  /** Records in the read model's count: folded by now, or passed by every thread of a sharded fold. */
  readonly records: number;
  /** The log's timestamp of the last record folded, when known. */
  readonly lastTimestampMs: number | undefined;
}

/** Below this many records, starting threads costs more than it saves (tens of milliseconds). */
export const SHARDED_FOLD_RECORDS = 20_000;

function before(position: LogPosition, to: Cursor | undefined): boolean {
  if (to === undefined) return true;
  const limit = to.get(position.partition);
  return limit === undefined || position.offset < limit;
}

/** Batches read ahead of the fold (file reads overlap the folding of the batches before them). */
const READ_AHEAD_BATCHES = 4;

/** Folds the log into `model` from its cursor to `to` (or the head). */
export async function foldLog(log: EventLog, model: ReadModel, options: FoldOptions = {}): Promise<void> {
  const { to, signal, onRecord, onEnded, onSkipped, onProgress } = options;
  if (to !== undefined && cursorReached(model.cursor, to)) return;
  if ((await foldOnThreads(log, model, options)) === 'stop') return;
  let lastTimestampMs: number | undefined;
  items: for await (const item of readAhead(
    (onGap) => log.readBatches(model.cursor, { ...(signal ? { signal } : {}), onGap }),
    READ_AHEAD_BATCHES,
  )) {
    if (item.kind === 'gap') {
      passGap(model, item.gap);
      if (to !== undefined && cursorReached(model.cursor, to)) break;
      continue;
    }
    for (const record of item.records) {
      // Kafka partitions are read together: skip what lies beyond `to` here, stop once all are done.
      if (!before(record.position, to)) continue;
      const applied = applyRecord(model, record, undefined, onEnded);
      lastTimestampMs = record.timestampMs;
      if (applied.kind === 'invalid') onSkipped?.(record.position, applied.reason);
      onRecord?.(record, applied);
      if (to !== undefined && cursorReached(model.cursor, to)) {
        onProgress?.({ records: model.counts.records, lastTimestampMs });
        break items;
      }
    }
    onProgress?.({ records: model.counts.records, lastTimestampMs });
  }
}

function isEmpty(model: ReadModel): boolean {
  return (
    model.reports.size === 0 && model.keys.size === 0 && model.counts.records === 0 && cursorTotal(model.cursor) === 0
  );
}

/**
 * The sharded fold, when it applies: 'stop' when it folded (or was aborted), 'go on' when the
 * one-thread fold is to do the work (or the rest of it).
 */
async function foldOnThreads(
  log: EventLog,
  model: ReadModel,
  { to, signal, threads, onRecord, onEnded, onSkipped, onProgress, onThreadsFailed }: FoldOptions,
): Promise<'stop' | 'go on'> {
  if (threads === undefined || onRecord !== undefined || onEnded !== undefined || !isFileBacked(log) || !isEmpty(model))
    return 'go on';
  const head = (await log.head()).get(0) ?? 0;
  const end = Math.min(head, to?.get(0) ?? head);
  if (end < SHARDED_FOLD_RECORDS) return 'go on';
  const range = await log.fileRange(end);
  if (range === undefined) return 'go on';
  const progress = (records: number) => onProgress?.({ records, lastTimestampMs: undefined });
  // A thread that fails (it could not start, or read the file) leaves the work to this thread, which
  // folds the same records and fails the same way if the file itself is at fault; it is told, not hidden.
  const folded = await foldSharded(range, { threads, ...(signal ? { signal } : {}), onProgress: progress }).catch(
    (error: unknown) => void onThreadsFailed?.(error),
  );
  // A record under a key that is not its report's id: only a fold in log order is sure to be right.
  if (folded === undefined || folded.kind === 'misrouted') return 'go on';
  if (folded.kind === 'aborted') return 'stop';
  model.reports.takeOver(folded.model.reports);
  if (folded.model.newestKey !== undefined) model.newestKey = folded.model.newestKey;
  for (const [key, request] of folded.model.keys) model.keys.set(key, request);
  Object.assign(model.counts, folded.model.counts);
  model.cursor.set(0, end);
  for (const { offset, reason } of folded.skipped) onSkipped?.({ partition: 0, offset }, reason);
  onProgress?.({ records: model.counts.records, lastTimestampMs: folded.lastTimestampMs });
  return to === undefined || cursorReached(model.cursor, to) ? 'stop' : 'go on';
}

/**
 * SHA-256 of the canonical read model (projections/canonical.ts): equal for equal states, whatever
 * the log and the order of its partitions, and whether content was written in the clear or sealed.
 * A sealed report's line takes its content digest from `keys` (the key store as it is now); without
 * the key store, or for a key it does not hold, the line says null.
 */
export function stateDigest(reports: ReportTable | LiveReports, keys: KeyLookup = NO_KEYS): string {
  const hash = createHash('sha256');
  if (!(reports instanceof ReportTable))
    return hash
      .update(canonicalState(reports, ({ sealed }) => keys.get(parseKeyId(sealed.key))?.contentDigest))
      .digest('hex');
  reports.canonicalLines((bytes) => hash.update(bytes), keyDigestOf(keys));
  return hash.digest('hex');
}

/** The state digest's way into `keys`: their copyContentDigest, or else through get. */
export function keyDigestOf(keys: KeyLookup): KeyDigest {
  if (keys.copyContentDigest !== undefined) return keys.copyContentDigest.bind(keys);
  return (keyId, start, end, into) => {
    const digest = keys.get(Buffer.from(keyId.buffer, keyId.byteOffset + start, end - start))?.contentDigest;
    if (digest === undefined) return false;
    digest.copy(into);
    return true;
  };
}
