// Sizes of records as Kafka counts them against the topic's max.message.bytes, which bounds a
// whole record batch (all records of one partition in one produce request), not one record.
import { CLOUDEVENTS_CONTENT_TYPE } from '../../../projections/events.js';
import { payloadBytes, type LogMessage } from '../event-log.js';

/** Batch header (61 bytes) plus one record's framing and its content-type header, with room to spare. */
export const BATCH_OVERHEAD_BYTES = 61 + 64 + 'content-type'.length + CLOUDEVENTS_CONTENT_TYPE.length;
/** Framing and header of one more record in a batch (varints at their widest), with room to spare. */
const RECORD_OVERHEAD_BYTES = 64 + 'content-type'.length + CLOUDEVENTS_CONTENT_TYPE.length;

/** The largest key + value that fits in a batch of one under `maxMessageBytes`. */
export function maxRecordBytes(maxMessageBytes: number): number {
  return maxMessageBytes - BATCH_OVERHEAD_BYTES;
}

/**
 * Splits appends (each a list of messages that must travel together) into groups whose bytes fit
 * in one batch per partition; a group is one produce request. Order is kept.
 */
export function groupBySize(
  appends: readonly (readonly LogMessage[])[],
  maxMessageBytes: number,
): (readonly LogMessage[])[][] {
  const groups: (readonly LogMessage[])[][] = [];
  let current: (readonly LogMessage[])[] = [];
  let bytes = BATCH_OVERHEAD_BYTES;
  for (const append of appends) {
    const size = append.reduce((sum, message) => sum + payloadBytes(message) + RECORD_OVERHEAD_BYTES, 0);
    if (current.length > 0 && bytes + size > maxMessageBytes) {
      groups.push(current);
      current = [];
      bytes = BATCH_OVERHEAD_BYTES;
    }
    current.push(append);
    bytes += size;
  }
  if (current.length > 0) groups.push(current);
  return groups;
}
