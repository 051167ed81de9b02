// Folds a history into a ReadModel with applyRecord: the core of `reports replay`, `reports
// snapshot` and the digest comparison of `reports migrate`.
import { createHash } from 'node:crypto';
import { canonicalState } from '../projections/canonical.js';
import type { ReportsView } from '../projections/reports.js';
import { cursorReached, type Cursor, type EventLog, type LogPosition, type LogRecord } from './log/event-log.js';
import { decodeAhead, type AheadItem } from './read-model/decode-ahead.js';
import type { DecodePool } from './read-model/decode-pool.js';
import type { FoldInput } from './read-model/fold-input.js';
import { applyInput, applyRecord, passGap, type Applied, type ReadModel } from './read-model/read-model.js';
import { ReportTable } from './read-model/report-table.js';

export interface FoldOptions {
  /** Stop before this cursor (exclusive, per partition); default: the head seen at start. */
  readonly to?: Cursor;
  readonly signal?: AbortSignal;
  /** Decodes large batches on other threads while this one folds (a long history). */
  readonly pool?: DecodePool;
  /** Called with every record folded and what it did. */
  readonly onRecord?: (record: LogRecord, applied: Applied) => void;
  /** Called after every batch of records, for progress. */
  readonly onProgress?: (model: ReadModel) => void;
}

function before(position: LogPosition, to: Cursor | undefined): boolean {
  if (to === undefined) return true;
  const limit = to.get(position.partition);
  return limit === undefined || position.offset < limit;
}

/** Batches read ahead of the fold (and decoded meanwhile, when there is a pool). */
const READ_AHEAD_BATCHES = 4;

/** The log's batches from the model's cursor, with the gaps between them in their place. */
function batchesOf(log: EventLog, model: ReadModel, signal: AbortSignal | undefined, pool: DecodePool | undefined): AsyncIterable<AheadItem> {
  return decodeAhead((onGap) => log.readBatches(model.cursor, { ...(signal ? { signal } : {}), onGap }), pool, READ_AHEAD_BATCHES);
}

/** Folds the log into `model` from its cursor to `to` (or the head). */
export async function foldLog(log: EventLog, model: ReadModel, { to, signal, pool, onRecord, onProgress }: FoldOptions = {}): Promise<void> {
  if (to !== undefined && cursorReached(model.cursor, to)) return;
  items: for await (const item of batchesOf(log, model, signal, pool)) {
    if (item.kind === 'gap') {
      passGap(model, item.gap);
      if (to !== undefined && cursorReached(model.cursor, to)) break;
      continue;
    }
    const { records, inputs } = item;
    for (let i = 0; i < records.length; i += 1) {
      const record = records[i] as LogRecord;
      // Kafka partitions are read together: skip what lies beyond `to` here, stop once all are done.
      if (!before(record.position, to)) continue;
      const applied = inputs === undefined ? applyRecord(model, record) : applyInput(model, record.position, inputs[i] as FoldInput);
      onRecord?.(record, applied);
      if (to !== undefined && cursorReached(model.cursor, to)) {
        onProgress?.(model);
        break items;
      }
    }
    onProgress?.(model);
  }
}

/**
 * SHA-256 of the canonical read model (projections/canonical.ts): equal for equal states, whatever
 * the log and the order of its partitions.
 */
export function stateDigest(reports: ReportTable | (ReportsView & { keys(): Iterable<string> })): string {
  const hash = createHash('sha256');
  if (!(reports instanceof ReportTable)) return hash.update(canonicalState(reports)).digest('hex');
  reports.canonicalLines((bytes) => hash.update(bytes));
  return hash.digest('hex');
}
