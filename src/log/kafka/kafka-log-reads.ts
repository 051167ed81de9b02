// The read side of the Kafka event log: the topic's head, a read up to the head seen at its start,
// and the follow, whose every record is checked to lie in its key's partition.
import type { KafkaLogParts } from './kafka-log-parts.js';
import { cursorReached, type Cursor, type LogRecord, type ReadOptions } from '../event-log.js';
import { followTopicBatches, isGap, type FollowItem } from './follow.js';
import { partitionOfKey } from './key-partition.js';
import { misplaced } from './partition-count.js';

type HeadParts = Pick<KafkaLogParts, 'heads' | 'health'>;
type FollowParts = Pick<KafkaLogParts, 'fastClient' | 'config' | 'partitions' | 'brokers' | 'health'>;

/** Every partition's head, from the leaders as the service's own view of them names them (partition-heads.ts). */
export async function topicHead({ heads, health }: HeadParts): Promise<Cursor> {
  try {
    return await heads.allHeads();
  } catch (error) {
    throw health.failed(error);
  }
}

/** The records up to the head seen at the start, one at a time (fetches deliver them so). */
export async function* recordsToHead(
  parts: HeadParts & FollowParts,
  from: Cursor,
  options: ReadOptions,
): AsyncIterable<LogRecord> {
  const end = await topicHead(parts);
  const cursor = new Map(from);
  if (cursorReached(cursor, end)) return;
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    for await (const item of items(parts, from, stop.signal)) {
      if (isGap(item)) {
        options.onGap?.(item);
        cursor.set(item.partition, item.next);
      } else {
        const { partition, offset } = item.position;
        if (offset >= (end.get(partition) ?? 0)) continue;
        yield item;
        cursor.set(partition, offset + 1);
      }
      if (cursorReached(cursor, end)) break;
    }
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    stop.abort();
  }
}

async function* items(parts: FollowParts, from: Cursor, signal: AbortSignal | undefined): AsyncIterable<FollowItem> {
  for await (const batch of itemBatches(parts, from, signal)) yield* batch;
}

/** Every record is checked to lie in the partition its key belongs to (else writes are refused). */
export async function* itemBatches(
  parts: FollowParts,
  from: Cursor,
  signal: AbortSignal | undefined,
): AsyncIterable<readonly FollowItem[]> {
  for await (const items of topicBatches(parts, from, signal)) {
    for (const item of items)
      if (!isGap(item))
        parts.health.refuseWrites(misplaced(parts.config.topic, item, partitionOfKey(item.key, parts.partitions)));
    yield items;
  }
}

function topicBatches(
  parts: FollowParts,
  from: Cursor,
  signal: AbortSignal | undefined,
): AsyncIterable<readonly FollowItem[]> {
  const { fastClient: kafka, config, partitions, brokers } = parts;
  return followTopicBatches({ kafka, topic: config.topic, partitions, brokers, from, ...(signal ? { signal } : {}) });
}
