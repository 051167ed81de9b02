// One partition followed by fetching from its leader, in a loop of its own. Committed records only
// (read_committed): records of aborted transactions and transaction markers are passed as a gap.
// A failed fetch (a leader that moved, stopped answering or went away) makes the loop ask the
// cluster where the leader is now and try again, without touching the other partitions' loops.
import type { Broker, Cluster, KafkaMessage } from 'kafkajs';
import Batch from 'kafkajs/src/consumer/batch.js';
import { pause } from '../../pause.js';
import type { Cursor, LogGap, LogRecord } from '../event-log.js';
import type { LeadersView } from './leaders-view.js';

export type FollowItem = LogRecord | LogGap;

/** kafkajs' isolation level for committed records only. */
const READ_COMMITTED = 1;
/** How long the leader holds a fetch that finds nothing new (a long poll: a record is seen at once). */
const MAX_WAIT_MS = 250;
const MAX_BYTES = 4 * 1024 * 1024;
/**
 * Under load a fetch is not started sooner than this after the previous one. Fetching as soon as
 * a record was there cost a fetch request and response per produce request, and made following
 * (this process's own records included, which the projector has folded already at the hand-off)
 * as dear as writing. The wait is taken only after a fetch that brought records: an idle loop
 * long-polls and sees a record from another instance at once, a busy one at most this much later.
 */
const FETCH_INTERVAL_MS = 20;
const MAX_BACKOFF_MS = 2000;

/** The part of a kafkajs Fetch answer read here. */
interface FetchAnswer {
  readonly responses: ReadonlyArray<{ readonly partitions: ReadonlyArray<{ readonly partition: number }> }>;
}

export interface PartitionFetchOptions {
  readonly cluster: Cluster;
  /** Who leads, shared by the topic's fetch loops: kafkajs' own view waited on a paused broker it picked (leaders-view.ts). */
  readonly leaders: LeadersView;
  readonly topic: string;
  readonly partition: number;
  /** Where to start, re-read before every fetch: when it is the follower's live cursor, records it has passed meanwhile are not fetched again. */
  readonly from: Cursor;
  readonly push: (items: readonly FollowItem[]) => Promise<void>;
  /** A failure no retry will change (the offsets are gone: the topic was deleted and created again). */
  readonly fail: (error: Error) => void;
  readonly signal: AbortSignal;
}

export async function followPartition({
  cluster,
  leaders,
  topic,
  partition,
  from,
  push,
  fail,
  signal,
}: PartitionFetchOptions): Promise<void> {
  let next = from.get(partition) ?? 0;
  let failures = 0;
  while (!signal.aborted) {
    next = Math.max(next, from.get(partition) ?? 0);
    const started = performance.now();
    try {
      const broker = await leaderOf(cluster, leaders, topic, partition);
      const answer = (await broker.fetch({
        isolationLevel: READ_COMMITTED,
        maxWaitTime: MAX_WAIT_MS,
        maxBytes: MAX_BYTES,
        topics: [{ topic, partitions: [{ partition, fetchOffset: String(next), maxBytes: MAX_BYTES }] }],
      })) as FetchAnswer;
      failures = 0;
      const data = answer.responses[0]?.partitions.find((entry) => entry.partition === partition);
      if (data === undefined || signal.aborted) continue;
      const items = followItems(new Batch(topic, String(next), data), partition, next);
      if (items.length === 0) continue;
      await push(items);
      next = passedBy(items);
      if (items.some((item) => !('next' in item)))
        await pause(FETCH_INTERVAL_MS - (performance.now() - started), signal);
    } catch (error) {
      if (signal.aborted) return;
      if (isPermanent(error)) return fail(error as Error);
      failures += 1;
      // The leader moved, stopped answering or went away: ask where it is now, then try again.
      await leaders.outdated(cluster).catch(() => undefined);
      await pause(Math.min(MAX_BACKOFF_MS, 50 * 2 ** Math.min(failures, 6)), signal);
    }
  }
}

async function leaderOf(cluster: Cluster, leaders: LeadersView, topic: string, partition: number): Promise<Broker> {
  const leader = (await leaders.current(cluster)).get(partition)?.leader ?? -1;
  if (leader < 0) throw new Error(`partition ${partition} of ${topic} has no leader now`);
  return cluster.findBroker({ nodeId: String(leader) });
}

/** The records of a fetched batch, and a gap for the offsets after them that hold nothing the reader gets. */
export function followItems(
  batch: { readonly messages: readonly KafkaMessage[]; readonly messagesWithinOffset: readonly KafkaMessage[] },
  partition: number,
  next: number,
): FollowItem[] {
  const fetched = batch.messagesWithinOffset;
  if (fetched.length === 0) return [];
  const records = batch.messages.map((message) => toRecord(partition, message));
  // Markers and aborted records among the fetched ones leave the offsets after the last record to pass.
  const passed = Number((fetched[fetched.length - 1] as KafkaMessage).offset) + 1;
  const last = records.length > 0 ? (records[records.length - 1] as LogRecord).position.offset + 1 : next;
  return passed > last ? [...records, { partition, next: passed }] : records;
}

function passedBy(items: readonly FollowItem[]): number {
  const last = items[items.length - 1] as FollowItem;
  return 'next' in last ? last.next : last.position.offset + 1;
}

function toRecord(partition: number, message: KafkaMessage): LogRecord {
  return {
    key: message.key?.toString('utf8') ?? '',
    value: message.value ?? Buffer.alloc(0),
    timestampMs: Number(message.timestamp),
    position: { partition, offset: Number(message.offset) },
  };
}

/** Offsets that are gone cannot be fetched again by retrying; everything else (leaders, connections, time-outs) can. */
function isPermanent(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'type' in error && error.type === 'OFFSET_OUT_OF_RANGE';
}
