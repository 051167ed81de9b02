// The head reads of a client whose only connection is to a leader that is then paused: a topic of
// one partition, led by the one broker the client was given. kafkajs refreshes its view of the
// leaders through a connected broker it picks, one refresh at a time: here the paused one, every
// time, so its view (and every head read through it) kept naming the paused broker for as long as the
// pause lasted. The head reads ask every broker of the topic who leads (leaders-view.ts) and must
// find the successor once it is elected.
import kafkajs from 'kafkajs';
import type { KafkaCluster } from '../helpers/kafka-cluster.js';
import { PartitionHeads } from '../../src/log/kafka/partition-heads.js';

export interface PausedSeedRun {
  readonly pausedNode: number;
  readonly newLeader: number;
  /** Milliseconds from the election to the first head read answered (undefined: none within `watchMs`). */
  readonly answeredAfterMs: number | undefined;
}

const POLL_MS = 250;
/** A read not answered within this is counted as unanswered (the service's probe allows 2 s). */
const READ_MS = 1000;

async function within<T>(ms: number, promise: Promise<T>): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  promise.catch(() => undefined);
  try {
    return await Promise.race([promise.catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}

export async function headsAfterPausedSeed(
  cluster: KafkaCluster,
  { topic, watchMs }: { topic: string; watchMs: number },
): Promise<PausedSeedRun> {
  await cluster.withAdmin((admin) =>
    admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 3 }], waitForLeaders: true }),
  );
  const pausedNode = (await cluster.leaders(topic)).get(0) ?? -1;
  const seed = cluster.nodes.find((node) => node.id === pausedNode);
  if (seed === undefined) throw new Error(`partition 0 of ${topic} has no leader`);
  const kafka = new kafkajs.Kafka({
    clientId: 'paused-seed-heads',
    brokers: [seed.address],
    logLevel: kafkajs.logLevel.NOTHING,
    connectionTimeout: 3000,
    requestTimeout: 10_000,
  });
  const heads = new PartitionHeads({ kafka, topic, partitions: 1 });
  try {
    await heads.allHeads();
    cluster.pause(pausedNode);
    try {
      let newLeader = -1;
      while (newLeader < 0) {
        const leader = (await cluster.leaders(topic)).get(0) ?? -1;
        if (leader >= 0 && leader !== pausedNode) newLeader = leader;
        else await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
      const electedMs = Date.now();
      while (Date.now() - electedMs < watchMs) {
        if ((await within(READ_MS, heads.allHeads())) !== undefined)
          return { pausedNode, newLeader, answeredAfterMs: Date.now() - electedMs };
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
      return { pausedNode, newLeader, answeredAfterMs: undefined };
    } finally {
      cluster.resume(pausedNode);
    }
  } finally {
    await heads.close();
  }
}
