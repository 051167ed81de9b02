// Between the port's batches (`readBatches`, `followBatches`) and callers that take one record at a
// time (the CLI's printing, checking and copying; snapshot anchors): one helper for every log.
import type { Cursor, EventLog, LogRecord, ReadOptions } from './event-log.js';

/** One record at a time, from an iterable of batches. */
export async function* eachRecord(batches: AsyncIterable<readonly LogRecord[]>): AsyncIterable<LogRecord> {
  for await (const batch of batches) yield* batch;
}

/** Batches of one record, from an iterable of records (an adapter that reads record by record). */
export async function* singleRecordBatches(records: AsyncIterable<LogRecord>): AsyncIterable<readonly LogRecord[]> {
  for await (const record of records) yield [record];
}

/** The records from `from` up to the head seen when the read started, one at a time. */
export function readRecords(
  log: Pick<EventLog, 'readBatches'>,
  from: Cursor,
  options?: ReadOptions,
): AsyncIterable<LogRecord> {
  return eachRecord(log.readBatches(from, options));
}

/** The records from `from` and then every new one, one at a time, until the signal aborts. */
export function followRecords(
  log: Pick<EventLog, 'followBatches'>,
  from: Cursor,
  options?: ReadOptions,
): AsyncIterable<LogRecord> {
  return eachRecord(log.followBatches(from, options));
}
