// Deterministic histories for `make bench-start`: report k (from 0) has id firstId + k, a name of
// about 24 characters that depends on k only, and tag "finance", so two histories that differ in
// their first id differ in nothing else. Written with the project's own writer (openFileLog().append)
// and envelope/codec code, in large batches (one fsync per batch), so each is the file a server
// would have written, in whatever on-disk format the writer uses today.
import { pino } from 'pino';
import { encodeEvent } from '../../projections/codec.js';
import { openFileLog } from '../../src/log/file/file-log.js';
import type { LogMessage } from '../../src/log/event-log.js';
import { reportCreated, reportDeleted, type EnvelopeContext } from '../../src/reports/envelope.js';

const BATCH = 10_000;
const EPOCH_MS = Date.UTC(2026, 0, 1);

export interface HistoryShape {
  /** The id of report 0: 1,000 for small ids, 7×10^18 for snowflake-sized ones. */
  readonly firstId: bigint;
  /** Reports 0 .. reports - 1. */
  readonly reports: number;
  /** Whether the reports with k even are created (true unless set); those with k odd always are. */
  readonly createEven?: boolean;
  /** Whether the reports with k even are deleted after every report is created. */
  readonly deleteEven?: boolean;
  /**
   * Write reports fromReport .. reports - 1 only (0 unless set), onto a log that holds the first
   * fromReport already (as this function wrote them; creates only).
   */
  readonly fromReport?: number;
}

/** Event i's CloudEvent id: a UUID-shaped string that is the same on every run. */
function eventId(i: number): string {
  return `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
}

function context(i: number): EnvelopeContext {
  return { source: 'urn:report-store', newId: () => eventId(i), time: () => new Date(EPOCH_MS + i).toISOString() };
}

/** The history's events, in order, as [report k, created or deleted]. */
function* steps({ reports, createEven = true, deleteEven = false, fromReport = 0 }: HistoryShape): Generator<[number, 'create' | 'delete']> {
  for (let k = fromReport; k < reports; k += 1) if (createEven || k % 2 === 1) yield [k, 'create'];
  if (deleteEven) for (let k = 0; k < reports; k += 2) yield [k, 'delete'];
}

/** Events the history holds. */
export function historyEvents(shape: HistoryShape): number {
  const even = Math.ceil(shape.reports / 2);
  return shape.reports - (shape.createEven === false ? even : 0) + (shape.deleteEven === true ? even : 0);
}

export async function writeHistory(dir: string, shape: HistoryShape, onProgress: (written: number) => void = () => undefined): Promise<void> {
  const log = await openFileLog({ dir, logger: pino({ level: 'silent' }) });
  try {
    let batch: LogMessage[] = [];
    // Event i of the history (its id and time) is report i's create while only creates are written.
    let written = shape.fromReport ?? 0;
    for (const [k, step] of steps(shape)) {
      const id = String(shape.firstId + BigInt(k));
      const at = context(written + batch.length);
      // Every report is created once and deleted at most once after: a create is decided on version 0, a delete on 1.
      const event = step === 'create' ? reportCreated(at, { id, name: `Quarterly report ${String(k).padStart(7, '0')}`, tag: 'finance' }, 0) : reportDeleted(at, { id }, 1);
      batch.push({ key: event.subject, value: encodeEvent(event) });
      if (batch.length < BATCH) continue;
      await log.append(batch);
      written += batch.length;
      batch = [];
      onProgress(written);
    }
    if (batch.length > 0) await log.append(batch);
  } finally {
    await log.close();
  }
}
