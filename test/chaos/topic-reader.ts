// Reads a whole topic, every partition up to its high watermark, with a kafkajs consumer of its
// own: the history the checker judges, as a downstream consumer would see it.
import { randomUUID } from 'node:crypto';
import kafkajs from 'kafkajs';
import { withTimeout } from '../helpers/async.js';
import type { TopicRecord } from './history.js';

export interface TopicContents {
  readonly records: TopicRecord[];
  /** The end offsets the read stopped at, `P:O,...` in partition order. */
  readonly end: string;
  readonly partitions: number;
}

/**
 * The topic's offsets, asked again while the answer is a retriable error: once a cluster is whole
 * again, its metadata may still name a partition's old leader for a moment (the long `make chaos`
 * ended once on "This server is not the leader for that topic-partition" here, which kafkajs's
 * admin does not retry itself).
 */
export async function topicOffsets(
  admin: kafkajs.Admin,
  topic: string,
  timeoutMs = 30_000,
): Promise<Awaited<ReturnType<kafkajs.Admin['fetchTopicOffsets']>>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await admin.fetchTopicOffsets(topic);
    } catch (error) {
      const retriable = (error as { retriable?: unknown }).retriable === true;
      if (!retriable || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

export async function readTopic(brokers: string, topic: string, timeoutMs = 60_000): Promise<TopicContents> {
  const kafka = new kafkajs.Kafka({
    clientId: 'chaos-checker',
    brokers: brokers.split(','),
    logLevel: kafkajs.logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  const offsets = await topicOffsets(admin, topic).finally(() => admin.disconnect());
  const high = new Map(offsets.map(({ partition, high }) => [partition, Number(high)]));
  const end = [...high]
    .sort(([a], [b]) => a - b)
    .map(([partition, offset]) => `${partition}:${offset}`)
    .join(',');
  const records: TopicRecord[] = [];
  const left = new Set([...high].filter(([, offset]) => offset > 0).map(([partition]) => partition));
  if (left.size === 0) return { records, end, partitions: high.size };
  // A short fetch wait: disconnect() waits for the fetch under way, which with kafkajs's default
  // (5 s) sat at the topic's end for the whole wait and added 5 s to every run.
  const consumer = kafka.consumer({ groupId: `chaos-checker-${randomUUID()}`, maxWaitTimeInMs: 100 });
  let done: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => {
    done = resolve;
  });
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachMessage: ({ partition, message }) => {
        const offset = Number(message.offset);
        if (offset < (high.get(partition) ?? 0))
          records.push({
            partition,
            offset,
            timestampMs: Number(message.timestamp),
            value: message.value ?? Buffer.alloc(0),
          });
        if (offset + 1 >= (high.get(partition) ?? 0)) left.delete(partition);
        if (left.size === 0) done();
        return Promise.resolve();
      },
    });
    await withTimeout(finished, timeoutMs, `the checker to read ${topic} to its end (${end})`);
  } finally {
    await consumer.disconnect();
  }
  records.sort((a, b) => a.partition - b.partition || a.offset - b.offset);
  return { records, end, partitions: high.size };
}
