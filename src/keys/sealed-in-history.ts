// Whether a history refers to content keys: the position of its first sealed create. Asked before a
// missing key topic is created at start. Created empty under a topic of sealed creates, it would
// read as "every report erased" (each GET a 500, each create of those ids a 409) on this start and
// every later one; so the start stops instead, as it does for a missing keys.db.
import { isSealed } from '../../projections/events.js';
import type { EventLog } from '../log/event-log.js';
import { formatPosition } from '../log/positions.js';
import { readRecords } from '../log/record-batches.js';
import { decodeForFold } from '../read-model/fold-decode.js';

/** Where the first sealed create of `log` is ("partition:offset"); undefined when it has none (read up to its head). */
export async function firstSealedCreate(
  log: Pick<EventLog, 'readBatches'>,
  signal?: AbortSignal,
): Promise<string | undefined> {
  for await (const record of readRecords(log, new Map(), signal === undefined ? {} : { signal })) {
    const input = decodeForFold(record.value);
    if (input.ok && input.event.type === 'ReportCreated' && isSealed(input.event.data))
      return formatPosition(record.position, 'kafka');
  }
  return undefined;
}
