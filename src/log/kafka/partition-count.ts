// The partition count is part of the topic's contract: a key's events must all sit in the
// partition its hash picks, or instances disagree on a report's order and on who won a race.
// A count that changed under the history is found two ways: the topic's metadata no longer says
// the count the instance started with, or a record sits in a partition its key does not hash to.
import { LogRefusingWritesError, type LogRecord } from '../event-log.js';

export const REPARTITION_HINT =
  'to repartition, stop every instance, copy the history to a new topic with the new count (reports migrate --to-topic NEW_TOPIC with REPORTS_TOPIC_PARTITIONS=N), then start the instances with REPORTS_TOPIC=NEW_TOPIC';

/** Pure: the problem with a count seen in the metadata, if any. */
export function countChanged(topic: string, started: number, now: number): LogRefusingWritesError | undefined {
  if (now === started) return undefined;
  return new LogRefusingWritesError(
    `the partition count of topic ${topic} changed from ${started} to ${now}; writes are refused until the history is repartitioned`,
  );
}

/** Pure: the problem with a record outside its key's partition, if any. */
export function misplaced(topic: string, record: LogRecord, expected: number): LogRefusingWritesError | undefined {
  if (record.position.partition === expected) return undefined;
  const { partition, offset } = record.position;
  return new LogRefusingWritesError(
    `record ${partition}:${offset} of topic ${topic} (key ${record.key}) belongs to partition ${expected}: the partition count changed after it was written; writes are refused until the history is repartitioned`,
  );
}
