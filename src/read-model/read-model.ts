// The read model and the one function that folds a log record into it. The server's projector,
// `reports replay`, `reports verify`, `reports snapshot` and snapshots all hold a ReadModel and
// feed it through applyRecord, so "decode -> idempotency fold -> report fold -> cursor -> counts"
// exists once. The event rules themselves are the pure code of projections/.
import { evolveIdempotency, type IdempotencyState, type KeyedRequest } from '../../projections/idempotency.js';
import { apply, evolution, isSealedReport, type Evolution, type FoldEvent } from '../../projections/reports.js';
import { isSealed } from '../../projections/events.js';
import type { Cursor, LogGap, LogPosition, LogRecord } from '../log/event-log.js';
import { decodeForFold, type FoldInput } from './fold-decode.js';
import { ReportTable } from './report-table.js';

export interface FoldCounts {
  /** Records folded, valid or not (from the start of the history, snapshots included). */
  records: number;
  /** Valid events that changed nothing (a create of an existing id, a delete of an absent one). */
  voidEvents: number;
  /** Records skipped because they are not valid report events. */
  invalid: number;
}

export interface ReadModel {
  readonly reports: ReportTable;
  /**
   * The key of the newest sealed create folded (void or not): the key store must hold it (or have
   * destroyed it); one that was never in it means keys.db was lost, cut or replaced.
   */
  newestKey?: string;
  /** Idempotency keys seen in the events, with what their first request did. */
  readonly keys: IdempotencyState;
  /** Next offset to fold, per partition. */
  readonly cursor: Map<number, number>;
  readonly counts: FoldCounts;
}

export interface ReadModelStart {
  readonly reports?: ReportTable;
  readonly newestKey?: string;
  readonly keys?: IdempotencyState;
  readonly cursor?: Cursor;
  readonly counts?: Partial<FoldCounts>;
}

export function createReadModel(start: ReadModelStart = {}): ReadModel {
  return {
    ...(start.newestKey === undefined ? {} : { newestKey: start.newestKey }),
    reports: start.reports ?? new ReportTable(),
    keys: start.keys ?? new Map<string, KeyedRequest>(),
    cursor: new Map(start.cursor ?? []),
    counts: {
      records: start.counts?.records ?? 0,
      voidEvents: start.counts?.voidEvents ?? 0,
      invalid: start.counts?.invalid ?? 0,
    },
  };
}

/** What folding one record did: the event's evolution, or why the record was skipped. */
export type Applied = Evolution | { readonly kind: 'invalid'; readonly reason: string };

/**
 * Folds one record: decodes and checks it (an invalid record is skipped and counted), records its
 * idempotency key, applies the event, moves the cursor past it. `decoded` is the record's event
 * when the caller has it already (this process encoded it, or decoded and checked it), which
 * spares decoding it again.
 */
export function applyRecord(model: ReadModel, record: LogRecord, decoded?: FoldEvent, erased?: ErasedKey): Applied {
  if (decoded !== undefined) return applyEvent(model, record.position, decoded, erased);
  return applyInput(model, record.position, decodeForFold(record.value), erased);
}

/**
 * What an event ends, to be erased whoever wrote it (another instance, or a write answered 503 that
 * landed late): a report deleted (its id, the version the delete took it to, and its content's key
 * when sealed), or a sealed create that was void (its key; not a second copy of the create that
 * made the live report, whose key is that report's). The projector of a running server asks
 * for that.
 */
export type Ended =
  | { readonly kind: 'deleted'; readonly reportId: string; readonly version: number; readonly key?: string }
  | { readonly kind: 'void'; readonly key: string };
export type ErasedKey = (ended: Ended) => void;

/** Folds a record at `position` that was decoded elsewhere (by a thread of a sharded fold). */
export function applyInput(model: ReadModel, position: LogPosition, input: FoldInput, erased?: ErasedKey): Applied {
  if (input.ok) return applyEvent(model, position, input.event, erased);
  model.counts.invalid += 1;
  advance(model, position);
  return { kind: 'invalid', reason: input.reason };
}

function applyEvent(model: ReadModel, position: LogPosition, event: FoldEvent, erased?: ErasedKey): Evolution {
  const change = evolution(model.reports, event);
  if (erased !== undefined) tellErased(model, event, change, erased);
  if (event.type === 'ReportCreated' && isSealed(event.data)) model.newestKey = event.data.sealed.key;
  // The key records what the event did, judged on the reports before it is applied.
  if (event.data.idempotencyKey !== undefined) evolveIdempotency(model.keys, model.reports, event, change);
  apply(model.reports, change);
  if (change.kind === 'void') model.counts.voidEvents += 1;
  advance(model, position);
  return change;
}

function tellErased(model: ReadModel, event: FoldEvent, change: Evolution, erased: ErasedKey): void {
  if (change.kind === 'deleted') {
    const ended = model.reports.get(change.id);
    const deletion = { kind: 'deleted' as const, reportId: change.id, version: model.reports.version(change.id) + 1 };
    erased(ended !== undefined && isSealedReport(ended) ? { ...deletion, key: ended.sealed.key } : deletion);
  } else if (
    change.kind === 'void' &&
    change.reason !== 'copy' &&
    event.type === 'ReportCreated' &&
    isSealed(event.data)
  ) {
    erased({ kind: 'void', key: event.data.sealed.key });
  }
}

function advance(model: ReadModel, { partition, offset }: LogPosition): void {
  model.counts.records += 1;
  model.cursor.set(partition, offset + 1);
}

/** Offsets that hold no record (Kafka transaction markers, aborted records) count as consumed. Whether the cursor moved. */
export function passGap(model: ReadModel, { partition, next }: LogGap): boolean {
  if (next <= (model.cursor.get(partition) ?? 0)) return false;
  model.cursor.set(partition, next);
  return true;
}
