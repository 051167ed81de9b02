// Follows a Kafka topic from a cursor as an async iterable. Every instance folds every partition
// itself, so each follow uses a consumer group of its own (one member, all partitions, nothing
// committed) and seeks each partition to the cursor.
import { randomUUID } from 'node:crypto';
import type { Kafka, KafkaMessage } from 'kafkajs';
import type { Cursor, LogRecord } from './event-log.js';
import { DISCONNECT_MS, settleWithin } from './settle-within.js';

interface Channel {
  push(records: LogRecord[]): Promise<void>;
  fail(error: unknown): void;
}

export interface FollowOptions {
  readonly kafka: Kafka;
  readonly topic: string;
  readonly partitions: number;
  readonly groupPrefix: string;
  readonly from: Cursor;
  readonly signal?: AbortSignal;
}

function toRecord(partition: number, message: KafkaMessage): LogRecord {
  return {
    key: message.key?.toString('utf8') ?? '',
    value: message.value ?? Buffer.alloc(0),
    timestampMs: Number(message.timestamp),
    position: { partition, offset: Number(message.offset) },
  };
}

export async function* followTopic({ kafka, topic, partitions, groupPrefix, from, signal }: FollowOptions): AsyncIterable<LogRecord> {
  const pending: LogRecord[][] = [];
  let failure: unknown;
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
    retry: { retries: 5, restartOnFailure: async () => false },
  });
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    if (!payload.restart) channel.fail(payload.error);
  });
  const onAbort = () => notify();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
        const expected = next.get(batch.partition) ?? 0;
        // Messages before the cursor can arrive before the seek below takes effect: skip them.
        const records = batch.messages.filter((m) => Number(m.offset) >= expected).map((m) => toRecord(batch.partition, m));
        if (records.length > 0 && isRunning() && !isStale()) {
          await channel.push(records);
          const last = records[records.length - 1] as LogRecord;
          next.set(batch.partition, last.position.offset + 1);
        }
        const lastOffset = batch.messages[batch.messages.length - 1]?.offset;
        if (lastOffset !== undefined) resolveOffset(lastOffset);
        await heartbeat();
      },
    });
    for (let partition = 0; partition < partitions; partition += 1) {
      consumer.seek({ topic, partition, offset: String(next.get(partition) ?? 0) });
    }
    while (!signal?.aborted) {
      const records = pending.shift();
      if (records) {
        for (const record of records) yield record;
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
