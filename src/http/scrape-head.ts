// The log's head as /metrics reads it. Several gauges need it; one scrape asks the log (on Kafka,
// requests to the partitions' leaders) only once. A head that fails or is late (HEAD_WAIT_MS)
// leaves those gauges without a value (NaN) and the scrape goes on: a paused or down broker once
// held a scrape for the Kafka client's time-out (10 s), then failed it with a 500, hiding every
// series an operator needs in an outage (the broker outages, the log's availability). One head is
// read at a time: scrapes while it is late wait for the same read.
import type { Cursor, EventLog } from '../log/event-log.js';
import { valueWithin } from '../log/settle-within.js';

/** How long a scrape waits for the log's head before its gauges go without it. */
export const HEAD_WAIT_MS = 1000;

/** A head asked this long ago is given again (one scrape, several gauges). */
const HEAD_REUSE_MS = 250;

export function scrapeHead(log: Pick<EventLog, 'head'>, waitMs = HEAD_WAIT_MS): () => Promise<Cursor | undefined> {
  let asked: { atMs: number; head: Promise<Cursor | undefined> } | undefined;
  let reading: Promise<Cursor> | undefined;
  // Its age on the monotonic clock: a wall clock set back an hour would keep one head for that hour.
  return () => {
    const nowMs = performance.now();
    if (asked === undefined || nowMs - asked.atMs > HEAD_REUSE_MS) {
      reading ??= log.head().finally(() => (reading = undefined));
      asked = { atMs: nowMs, head: valueWithin(waitMs, reading) };
    }
    return asked.head;
  };
}
