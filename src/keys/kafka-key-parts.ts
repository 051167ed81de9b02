// What a Kafka key store is made of (kafka-keys.ts), made in the order the start has always made
// them: the fast client, the idempotent producer counting its requests, the partitions' heads, the
// write lanes, and how to start the follower (the store starts it, with its own handlers).
import type { Producer } from 'kafkajs';
import type { Logger } from 'pino';
import type { KafkaConfig } from '../config.js';
import { Deadlines } from '../deadlines.js';
import type { BrokerReachability } from '../log/kafka/brokers.js';
import type { KeyTopicFacts } from '../log/kafka/key-topic.js';
import { PartitionHeads } from '../log/kafka/partition-heads.js';
import { createFastClient, createProducer } from '../log/kafka/producer.js';
import type { RenewingProducer } from '../log/kafka/renewing-producer.js';
import { KeyFollower } from './key-follower.js';
import { KeyLanes } from './key-lanes.js';
import { KeyTopicWatch } from './key-topic-watch.js';
import { createKafkaClient } from '../log/kafka/client.js';
import { settleWithin } from '../log/settle-within.js';
import { DISCONNECT_MS } from '../log/kafka/disconnect.js';

export interface KafkaKeysParts {
  readonly config: KafkaConfig;
  readonly log: Logger;
  readonly writeTimeoutMs: number;
  readonly random: (bytes: number) => Buffer;
  readonly facts: KeyTopicFacts;
  readonly producer: RenewingProducer<Producer>;
  /** What the store counts (for /metrics); the producers' requests are counted as they are made. */
  readonly counts: { erasures: number; produceRequests: number; rollRecords: number };
  /** The writes, in one lane per partition, sent by `producer`. */
  readonly lanes: KeyLanes;
  /** The writes' timeouts (cleared at close). */
  readonly deadlines: Deadlines;
  readonly follow: (
    handlers: Pick<ConstructorParameters<typeof KeyFollower>[0], 'apply' | 'applied' | 'failed'>,
  ) => KeyFollower;
  /** Which brokers this store's clients find unreachable (for /metrics). */
  readonly brokers: BrokerReachability;
  /** Told of failed writes: names a key topic deleted under the running server. */
  readonly topicWatch: KeyTopicWatch;
}

export interface KafkaKeysPartsOptions {
  readonly config: KafkaConfig;
  readonly log: Logger;
  readonly writeTimeoutMs: number;
  readonly maxPendingWrites: number | undefined;
  readonly random: (bytes: number) => Buffer;
  /** The key topic as found at start (kafka-key-topic-facts.ts). */
  readonly facts: KeyTopicFacts;
  readonly brokers: BrokerReachability;
}

export function createKafkaKeysParts({
  config,
  log,
  writeTimeoutMs,
  maxPendingWrites,
  random,
  facts,
  brokers,
}: KafkaKeysPartsOptions): KafkaKeysParts {
  const fastClient = createFastClient(config, log, brokers, writeTimeoutMs);
  const counts = { erasures: 0, produceRequests: 0, rollRecords: 0 };
  const prepare = watchedAndCounted(brokers, counts);
  const { producer, produceTimeoutMs } = createProducer(fastClient, writeTimeoutMs, { prepare, logger: log });
  const heads = new PartitionHeads({
    kafka: fastClient,
    topic: config.keyTopic,
    partitions: facts.partitions,
    brokers,
    minInsyncReplicas: facts.minInsyncReplicas,
    ...(maxPendingWrites === undefined ? {} : { maxPending: maxPendingWrites }),
  });
  const follow: KafkaKeysParts['follow'] = (handlers) =>
    new KeyFollower({
      kafka: fastClient,
      topic: config.keyTopic,
      partitions: facts.partitions,
      brokers,
      heads,
      ...handlers,
    });
  const deadlines = new Deadlines();
  const { partitions, maxMessageBytes } = facts;
  const lanes = new KeyLanes({
    send: (record) => producer.send(record),
    topic: config.keyTopic,
    partitions,
    produceTimeoutMs,
    maxMessageBytes,
    maxPendingPerLane: maxPendingWrites,
    leaderOf: (partition) => heads.leaderOf(partition),
    deadlines,
  });
  const topicWatch = new KeyTopicWatch({
    topic: config.keyTopic,
    exists: () => keyTopicListed(config, log),
    logger: log,
  });
  return {
    config,
    log,
    writeTimeoutMs,
    random,
    facts,
    producer,
    lanes,
    deadlines,
    follow,
    counts,
    brokers,
    topicWatch,
  };
}

/**
 * Whether the cluster lists the key topic, on an admin client of its own made for the one question
 * (one retry, short time-outs: a probe while the brokers are away fails in seconds, not minutes).
 */
async function keyTopicListed(config: KafkaConfig, log: Logger): Promise<boolean> {
  const admin = createKafkaClient(config, log, { requestTimeoutMs: 5000, retries: 1 }).admin();
  try {
    await admin.connect();
    return (await admin.listTopics()).includes(config.keyTopic);
  } finally {
    await settleWithin(DISCONNECT_MS, admin.disconnect());
  }
}

/** Readies each producer made (the first and every renewal): its brokers watched, its produce requests counted. */
function watchedAndCounted(brokers: BrokerReachability, counts: KafkaKeysParts['counts']): (created: Producer) => void {
  return (created) => {
    brokers.watch(created);
    created.on(created.events.REQUEST, ({ payload }) => {
      if (payload.apiName === 'Produce') counts.produceRequests += 1;
    });
  };
}
