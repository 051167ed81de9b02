// Follows a Kafka topic from a cursor as an async iterable. Every instance folds every partition
// itself, so each follow uses a consumer group of its own (one member, all partitions, nothing
// committed) and seeks each partition to the cursor.
import { randomUUID } from 'node:crypto';
import type { Kafka, KafkaMessage } from 'kafkajs';
import type { Cursor, LogGap, LogRecord } from './event-log.js';
import type { BrokerReachability } from './kafka-brokers.js';
import { DISCONNECT_MS, settleWithin } from './settle-within.js';
import { pause } from '../pause.js';

export type FollowItem = LogRecord | LogGap;

export function isGap(item: FollowItem): item is LogGap {
  return 'next' in item;
}

interface Channel {
  push(items: FollowItem[]): Promise<void>;
  /** A gap found outside eachBatch (a batch of control or aborted records only): no back-pressure. */
  skip(gap: LogGap): void;
  fail(error: Error): void;
}

export interface FollowOptions {
  readonly kafka: Kafka;
  readonly topic: string;
  readonly partitions: number;
  readonly groupPrefix: string;
  readonly from: Cursor;
  readonly signal?: AbortSignal;
  /** Told which brokers the consumer's requests reach and which time out. */
  readonly brokers?: BrokerReachability;
}

function toRecord(partition: number, message: KafkaMessage): LogRecord {
  return {
    key: message.key?.toString('utf8') ?? '',
    value: message.value ?? Buffer.alloc(0),
    timestampMs: Number(message.timestamp),
    position: { partition, offset: Number(message.offset) },
  };
}

/**
 * Under load a fetch is not started sooner than this after the previous one. Fetching as soon as
 * a record was there cost a fetch request and response per produce request, and made following
 * (this process's own records included, which the projector has folded already at the hand-off
 * and skips) as dear as writing. The wait is taken only after a fetch that brought records: an
 * idle follower long-polls and sees a record from another instance at once, a busy one at most
 * this much later.
 */
const FETCH_INTERVAL_MS = 20;

/**
 * Yields the records from `from` on, and a gap where offsets hold nothing the consumer delivers,
 * as the consumer fetches them: the items of one fetched batch together.
 */
export async function* followTopicBatches({ kafka, topic, partitions, groupPrefix, from, signal, brokers }: FollowOptions): AsyncIterable<readonly FollowItem[]> {
  const pending: FollowItem[][] = [];
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  let release: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  const channel: Channel = {
    push: (records) =>
      new Promise((resolve) => {
        pending.push(records);
        // Back-pressure: the consumer waits until the iterator has taken this batch.
        release = resolve;
        notify();
      }),
    skip: (gap) => {
      pending.push([gap]);
      notify();
    },
    fail: (error) => {
      failure = error;
      notify();
    },
  };
  const next = new Map(from);
  // On a crash the consumer is not restarted in its group: rejoining would wait for the session of
  // its old member to expire (after a broker restart, tens of seconds). The iterator fails instead,
  // and the caller follows again from its cursor with a fresh group, which joins at once.
  const consumer = kafka.consumer({
    groupId: `${groupPrefix}-${randomUUID()}`,
    maxWaitTimeInMs: 250,
    sessionTimeout: 10_000,
    retry: { retries: 5, restartOnFailure: () => Promise.resolve(false) },
  });
  brokers?.watch(consumer);
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    if (!payload.restart) channel.fail(payload.error);
  });
  // A batch of transaction markers or aborted records only never reaches eachBatch (read_committed,
  // the consumer's default, filters them); its offsets are passed here. Only from where we stand.
  consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
    const expected = next.get(payload.partition) ?? 0;
    const passed = Number(payload.lastOffset) + 1;
    if (payload.batchSize > 0 || payload.firstOffset === null || Number(payload.firstOffset) > expected || passed <= expected) return;
    next.set(payload.partition, passed);
    channel.skip({ partition: payload.partition, next: passed });
  });
  let fetchStartedMs = 0;
  consumer.on(consumer.events.FETCH_START, () => {
    fetchStartedMs = performance.now();
  });
  const onAbort = () => notify();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      eachBatch: async (payload) => {
        const { batch } = payload;
        const expected = next.get(batch.partition) ?? 0;
        // Messages before the cursor can arrive before the seek below takes effect: skip them.
        const records = batch.messages.filter((m) => Number(m.offset) >= expected).map((m) => toRecord(batch.partition, m));
        if (records.length > 0 && payload.isRunning() && !payload.isStale()) {
          // Markers and aborted records after the last record are passed as a gap.
          const last = (records[records.length - 1] as LogRecord).position.offset + 1;
          const passed = Math.max(Number(batch.lastOffset()) + 1, last);
          await channel.push(passed > last ? [...records, { partition: batch.partition, next: passed }] : records);
          next.set(batch.partition, passed);
        }
        const lastOffset = batch.messages[batch.messages.length - 1]?.offset;
        if (lastOffset !== undefined) payload.resolveOffset(lastOffset);
        await payload.heartbeat();
        const wait = fetchStartedMs + FETCH_INTERVAL_MS - performance.now();
        if (records.length > 0 && wait > 0) await pause(wait, signal);
      },
    });
    for (let partition = 0; partition < partitions; partition += 1) {
      consumer.seek({ topic, partition, offset: String(next.get(partition) ?? 0) });
    }
    while (!signal?.aborted) {
      const items = pending.shift();
      if (items) {
        yield items;
        if (pending.length === 0) release?.();
        continue;
      }
      if (failure !== undefined) throw failure;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    release?.();
    await settleWithin(DISCONNECT_MS, consumer.disconnect());
  }
}

/** The records of each fetched batch together; a gap is passed to `onGap` in its place between them. */
export async function* recordRuns(batches: AsyncIterable<readonly FollowItem[]>, onGap?: (gap: LogGap) => void): AsyncIterable<readonly LogRecord[]> {
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
