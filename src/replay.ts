// Folds a history with the projections/ code, counting what it sees: the core of `reports
// replay`, `reports snapshot` and the digest comparison of `reports migrate`.
import { createHash } from 'node:crypto';
import { canonicalState } from '../projections/canonical.js';
import { decodeEvent } from '../projections/codec.js';
import { evolveIdempotency, type IdempotencyState, type KeyedRequest } from '../projections/idempotency.js';
import { createState, evolve, type ReportsState } from '../projections/reports.js';
import { cursorReached, type Cursor, type EventLog, type LogPosition } from './log/event-log.js';

export interface Fold {
  readonly state: ReportsState;
  readonly keys: IdempotencyState;
  readonly cursor: Map<number, number>;
  events: number;
  voidEvents: number;
  invalid: number;
  firstInvalid?: { readonly position: LogPosition; readonly reason: string };
}

export function emptyFold(start?: { state: ReportsState; keys: IdempotencyState; cursor: Cursor; events: number }): Fold {
  return {
    state: start?.state ?? createState(),
    keys: start?.keys ?? new Map<string, KeyedRequest>(),
    cursor: new Map(start?.cursor ?? []),
    events: start?.events ?? 0,
    voidEvents: 0,
    invalid: 0,
  };
}

export interface FoldOptions {
  /** Stop before this cursor (exclusive, per partition); default: the head seen at start. */
  readonly to?: Cursor;
  readonly signal?: AbortSignal;
  /** Called after every record, for progress. */
  readonly onRecord?: (fold: Fold) => void;
}

function before(position: LogPosition, to: Cursor | undefined): boolean {
  if (to === undefined) return true;
  const limit = to.get(position.partition);
  return limit === undefined || position.offset < limit;
}

/** Folds the log into `fold` from its cursor to `to` (or the head). */
export async function foldLog(log: EventLog, fold: Fold, { to, signal, onRecord }: FoldOptions = {}): Promise<Fold> {
  if (to !== undefined && cursorReached(fold.cursor, to)) return fold;
  for await (const record of log.read(fold.cursor, signal ? { signal } : {})) {
    if (!before(record.position, to)) {
      // Kafka partitions are read together: skip what lies beyond `to` here, stop once all are done.
      if (to !== undefined && cursorReached(fold.cursor, to)) break;
      continue;
    }
    const decoded = decodeEvent(record.value);
    if (decoded.ok) {
      evolveIdempotency(fold.keys, fold.state, decoded.event);
      if (evolve(fold.state, decoded.event).kind === 'void') fold.voidEvents += 1;
    } else {
      fold.invalid += 1;
      fold.firstInvalid ??= { position: record.position, reason: decoded.reason };
    }
    fold.events += 1;
    fold.cursor.set(record.position.partition, record.position.offset + 1);
    onRecord?.(fold);
    if (to !== undefined && cursorReached(fold.cursor, to)) break;
  }
  return fold;
}

/** SHA-256 of the canonical read model: equal for equal states, whatever the log. */
export function stateDigest(state: ReadonlyMap<string, { name: string; tag?: string }>): string {
  return createHash('sha256').update(canonicalState(state)).digest('hex');
}
