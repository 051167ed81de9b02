// Folds a history into a ReadModel with applyRecord: the core of `reports replay`, `reports
// snapshot` and the digest comparison of `reports migrate`.
import { createHash } from 'node:crypto';
import { canonicalState } from '../projections/canonical.js';
import type { ReportsView } from '../projections/reports.js';
import { cursorReached, type Cursor, type EventLog, type LogPosition } from './log/event-log.js';
import { applyRecord, passGap, type ReadModel } from './read-model/read-model.js';
import { ReportTable } from './read-model/report-table.js';

export interface FoldOptions {
  /** Stop before this cursor (exclusive, per partition); default: the head seen at start. */
  readonly to?: Cursor;
  readonly signal?: AbortSignal;
  /** Called after every batch of records, for progress. */
  readonly onProgress?: (model: ReadModel) => void;
}

export interface FoldReport {
  /** The first record that is not a valid event, and why. */
  readonly firstInvalid?: { readonly position: LogPosition; readonly reason: string };
}

function before(position: LogPosition, to: Cursor | undefined): boolean {
  if (to === undefined) return true;
  const limit = to.get(position.partition);
  return limit === undefined || position.offset < limit;
}

/** Folds the log into `model` from its cursor to `to` (or the head). */
export async function foldLog(log: EventLog, model: ReadModel, { to, signal, onProgress }: FoldOptions = {}): Promise<FoldReport> {
  let firstInvalid: FoldReport['firstInvalid'];
  if (to !== undefined && cursorReached(model.cursor, to)) return {};
  const onGap = (gap: Parameters<typeof passGap>[1]) => passGap(model, gap);
  batches: for await (const batch of log.readBatches(model.cursor, { ...(signal ? { signal } : {}), onGap })) {
    for (const record of batch) {
      // Kafka partitions are read together: skip what lies beyond `to` here, stop once all are done.
      if (!before(record.position, to)) continue;
      const applied = applyRecord(model, record);
      if (applied.kind === 'invalid') firstInvalid ??= { position: record.position, reason: applied.reason };
      if (to !== undefined && cursorReached(model.cursor, to)) {
        onProgress?.(model);
        break batches;
      }
    }
    onProgress?.(model);
  }
  return firstInvalid ? { firstInvalid } : {};
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
