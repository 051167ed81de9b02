// A deterministic history for `make bench-start`: N ReportCreated events, ids 1..N, names of about
// 24 characters, tag "finance", written with the project's own writer (openFileLog().append) and
// envelope/codec code, in large batches (one fsync per batch), so it is the file a server would
// have written, in whatever on-disk format the writer uses today.
import { pino } from 'pino';
import { encodeEvent } from '../../projections/codec.js';
import { openFileLog } from '../../src/log/file-log.js';
import type { LogMessage } from '../../src/log/event-log.js';
import { reportCreated, type EnvelopeContext } from '../../src/reports/envelope.js';

const BATCH = 10_000;
const EPOCH_MS = Date.UTC(2026, 0, 1);

/** Event i's CloudEvent id: a UUID-shaped string that is the same on every run. */
function eventId(i: number): string {
  return `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
}

function message(i: number): LogMessage {
  const context: EnvelopeContext = { source: 'urn:report-store', newId: () => eventId(i), time: () => new Date(EPOCH_MS + i).toISOString() };
  const event = reportCreated(context, { id: String(i), name: `Quarterly report ${String(i).padStart(7, '0')}`, tag: 'finance' }, 0);
  return { key: event.subject, value: encodeEvent(event) };
}

export async function writeHistory(dir: string, events: number, onProgress: (written: number) => void = () => undefined): Promise<void> {
  const log = await openFileLog({ dir, logger: pino({ level: 'silent' }) });
  try {
    for (let first = 1; first <= events; first += BATCH) {
      const batch: LogMessage[] = [];
      for (let i = first; i < first + BATCH && i <= events; i += 1) batch.push(message(i));
      await log.append(batch);
      onProgress(first + batch.length - 1);
    }
  } finally {
    await log.close();
  }
}
