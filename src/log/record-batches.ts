// Between the port's two ways of reading: one record at a time (`read`, `follow`) and several
// at a time (`readBatches`, `followBatches`).
import type { LogRecord } from './event-log.js';

/** One record at a time, from an iterable of batches. */
export async function* eachRecord(batches: AsyncIterable<readonly LogRecord[]>): AsyncIterable<LogRecord> {
  for await (const batch of batches) yield* batch;
}

/** Batches of one record, from an iterable of records (an adapter that reads record by record). */
export async function* singleRecordBatches(records: AsyncIterable<LogRecord>): AsyncIterable<readonly LogRecord[]> {
  for await (const record of records) yield [record];
}
