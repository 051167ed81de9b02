// Follows a Kafka topic from a cursor as an async iterable. Every instance folds every partition
// itself, without a consumer group: one fetch loop per partition asks that partition's leader
// (partition-fetch.ts). A consumer group made every partition wait on its group coordinator and on
// the slowest broker (kafkajs stops all its fetchers when one fetch fails), so a paused broker held
// the reading of every partition, and with it every write that waits for another instance's records.
import type { Kafka } from 'kafkajs';
import type { Cursor, LogGap, LogRecord } from '../event-log.js';
import type { BrokerReachability } from './brokers.js';
import { fetchGated } from './fetch-gate.js';
import { leadersViewOf } from './leaders-view.js';
import { groupFreeCluster } from './group-free-cluster.js';
import { ItemChannel } from './item-channel.js';
import { followPartition, type FollowItem } from './partition-fetch.js';
import { settleWithin } from '../settle-within.js';
import { DISCONNECT_MS } from './disconnect.js';

export type { FollowItem } from './partition-fetch.js';

export function isGap(item: FollowItem): item is LogGap {
  return 'next' in item;
}

export interface FollowOptions {
  readonly kafka: Kafka;
  readonly topic: string;
  readonly partitions: number;
  /** Where to start; when it is the follower's live cursor, records it passes meanwhile are not fetched again. */
  readonly from: Cursor;
  readonly signal?: AbortSignal;
  /** Told which brokers the fetches reach and which time out. */
  readonly brokers?: BrokerReachability;
}

/** Yields the records from `from` on, and a gap where offsets hold nothing the reader gets, a fetched batch at a time. */
export async function* followTopicBatches({
  kafka,
  topic,
  partitions,
  from,
  signal,
  brokers,
}: FollowOptions): AsyncIterable<readonly FollowItem[]> {
  if (signal?.aborted) return;
  // Gated: fetch loops starting together on one leader each opened a socket and closed only one (two left per read).
  const cluster = fetchGated(groupFreeCluster(kafka, brokers));
  const leaders = leadersViewOf(topic);
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  const channel = new ItemChannel<FollowItem>();
  let loops: Promise<void>[] = [];
  try {
    await cluster.connect();
    await cluster.addTargetTopic(topic);
    const fail = (error: Error) => channel.fail(error);
    loops = Array.from({ length: partitions }, (_, partition) =>
      followPartition({
        cluster,
        leaders,
        topic,
        partition,
        from,
        push: (items) => channel.push(items),
        fail,
        signal: stop.signal,
      }).catch(fail),
    );
    yield* channel.drain(stop.signal);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    stop.abort();
    leaders.close();
    await Promise.allSettled(loops);
    await settleWithin(DISCONNECT_MS, cluster.disconnect());
  }
}

/** The records of each fetched batch together; a gap is passed to `onGap` in its place between them. */
export async function* recordRuns(
  batches: AsyncIterable<readonly FollowItem[]>,
  onGap?: (gap: LogGap) => void,
): AsyncIterable<readonly LogRecord[]> {
  for await (const items of batches) {
    let records: LogRecord[] = [];
    for (const item of items) {
      if (!isGap(item)) {
        records.push(item);
        continue;
      }
      if (records.length > 0) yield records;
      records = [];
      onGap?.(item);
    }
    if (records.length > 0) yield records;
  }
}
