// Folds a history into a ReadModel with applyRecord: the core of `reports replay`, `reports
// snapshot` and the digest comparison of `reports migrate`.
import { createHash } from 'node:crypto';
import { canonicalState } from '../projections/canonical.js';
import type { ReportsView } from '../projections/reports.js';
import { cursorReached, type Cursor, type EventLog, type LogGap, type LogPosition, type LogRecord } from './log/event-log.js';
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

/** The log's batches from the model's cursor, decoded ahead by the pool when there is one. */
function batchesOf(log: EventLog, model: ReadModel, signal: AbortSignal | undefined, pool: DecodePool | undefined): AsyncIterable<AheadItem> {
  const open = (onGap: (gap: LogGap) => void) => log.readBatches(model.cursor, { ...(signal ? { signal } : {}), onGap });
  if (pool) return decodeAhead(open, pool, 2 * DECODE_DEPTH_PER_THREAD);
  return inline(open);
}

const DECODE_DEPTH_PER_THREAD = 2;

async function* inline(open: (onGap: (gap: LogGap) => void) => AsyncIterable<readonly LogRecord[]>): AsyncIterable<AheadItem> {
  const gaps: LogGap[] = [];
  for await (const records of open((gap) => gaps.push(gap))) {
    // A gap reported while this batch was being read lies before its records.
    while (gaps.length > 0) yield { kind: 'gap', gap: gaps.shift() as LogGap };
    yield { kind: 'batch', records, inputs: undefined };
  }
  while (gaps.length > 0) yield { kind: 'gap', gap: gaps.shift() as LogGap };
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
