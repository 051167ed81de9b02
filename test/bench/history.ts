// Deterministic histories for `make bench-start`: report k (from 0) has id firstId + k, a name of
// about 24 characters that depends on k only, and tag "finance", so two histories that differ in
// their first id differ in nothing else (but their random content keys: sealed, as the server writes). Written with the project's own writer (openFileLog().append)
// and envelope/codec code, in large batches (one fsync per batch), so each is the file a server
// would have written, in whatever on-disk format the writer uses today.
import { pino } from 'pino';
import { encodeEvent } from '../../projections/codec.js';
import { openFileLog } from '../../src/log/file/file-log.js';
import type { LogMessage } from '../../src/log/event-log.js';
import { reportCreated, reportDeleted, type EnvelopeContext } from '../../src/reports/envelope.js';
import { contentDigest, sealContent } from '../../projections/sealing.js';
import { openFileKeyStore } from '../../src/keys/file-key-store.js';
import { keyIdText, type ContentKey } from '../../src/keys/key-store.js';

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
  /** Names and tags in the clear, as versions before erasure wrote them (sealed, with keys.db beside the log, unless set). */
  readonly plain?: boolean;
}

/** Event i's CloudEvent id: a UUID-shaped string that is the same on every run. */
function eventId(i: number): string {
  return `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
}

function context(i: number): EnvelopeContext {
  return { source: 'urn:report-store', newId: () => eventId(i), time: () => new Date(EPOCH_MS + i).toISOString() };
}

/** The history's events, in order, as [report k, created or deleted]. */
function* steps({
  reports,
  createEven = true,
  deleteEven = false,
  fromReport = 0,
}: HistoryShape): Generator<[number, 'create' | 'delete']> {
  for (let k = fromReport; k < reports; k += 1) if (createEven || k % 2 === 1) yield [k, 'create'];
  if (deleteEven) for (let k = 0; k < reports; k += 2) yield [k, 'delete'];
}

/** Events the history holds. */
export function historyEvents(shape: HistoryShape): number {
  const even = Math.ceil(shape.reports / 2);
  return shape.reports - (shape.createEven === false ? even : 0) + (shape.deleteEven === true ? even : 0);
}

export async function writeHistory(
  dir: string,
  shape: HistoryShape,
  onProgress: (written: number) => void = () => undefined,
): Promise<void> {
  const logger = pino({ level: 'silent' });
  const log = await openFileLog({ dir, logger });
  // As the server writes them: each create's name and tag sealed under a key of its own in keys.db,
  // put before the batch that uses it; a deleted report's key destroyed.
  const keys = shape.plain === true ? undefined : await openFileKeyStore({ dir, logger, create: true });
  const keyOf = new Map<number, ContentKey>();
  try {
    let batch: LogMessage[] = [];
    let minted: ContentKey[] = [];
    let destroyed: ContentKey[] = [];
    // Event i of the history (its id and time) is report i's create while only creates are written.
    let written = shape.fromReport ?? 0;
    const flush = async () => {
      await keys?.put(minted);
      await log.append(batch);
      await keys?.destroy(destroyed.map((key) => key.id));
      written += batch.length;
      [batch, minted, destroyed] = [[], [], []];
      onProgress(written);
    };
    for (const [k, step] of steps(shape)) {
      const id = String(shape.firstId + BigInt(k));
      const at = context(written + batch.length);
      const report = { name: `Quarterly report ${String(k).padStart(7, '0')}`, tag: 'finance' };
      // Every report is created once and deleted at most once after: a create is decided on version 0, a delete on 1.
      let event;
      if (step === 'delete') {
        event = reportDeleted(at, { id }, 1);
        const key = keyOf.get(k);
        if (key !== undefined) destroyed.push(key);
      } else if (keys === undefined) {
        event = reportCreated(at, { id, ...report }, 0);
      } else {
        const key = keys.mint(contentDigest(report));
        minted.push(key);
        if (shape.deleteEven === true && k % 2 === 0) keyOf.set(k, key);
        event = reportCreated(
          at,
          { id, sealed: sealContent(report, keyIdText(key.id), key.secret, { id, expectedversion: 0 }) },
          0,
        );
      }
      batch.push({ key: event.subject, value: encodeEvent(event) });
      if (batch.length >= BATCH) await flush();
    }
    if (batch.length > 0) await flush();
  } finally {
    await keys?.close();
    await log.close();
  }
}
