// The Kafka adapter of the key store: content keys in a compacted key topic beside the event topic
// (key-record.ts for the records, log/kafka/key-topic-settings.ts for the topic and the erasure
// bound), each in its report's partition (kafka-key-ids.ts). A put or destroy resolves once the key
// or its tombstone is acknowledged by every in-sync replica (idempotent producer, acks=-1); writes
// go in one lane per partition, and those waiting together share one produce request
// (key-lanes.ts). Every instance follows the whole topic into memory (key-follower.ts) and answers
// from there, catching up with the partition's head first when a key is not there yet. Secrets and
// digests are never logged: lines name topics, partitions, offsets and counts only.
// The topic's check at start is kafka-key-topic-facts.ts's, the clients, producer and lanes
// kafka-key-parts.ts's, and the store itself kafka-keys.ts's; opening them in order is here.
import { createRandomSource } from './secret-source.js';
import { BrokerReachability } from '../log/kafka/brokers.js';
import { describeStartError } from '../log/kafka/client.js';
import { createKafkaKeysParts } from './kafka-key-parts.js';
import type { KafkaKeyStore, KafkaKeyStoreOptions } from './kafka-key-store-types.js';
import { keyTopicFactsAtStart } from './kafka-key-topic-facts.js';
import { KafkaKeys } from './kafka-keys.js';

export type { KafkaKeyStore, KafkaKeyStoreOptions, KafkaKeyStoreStats } from './kafka-key-store-types.js';

export async function openKafkaKeyStore({
  config,
  logger,
  writeTimeoutMs,
  maxPendingWrites,
  random = createRandomSource(),
  createTopic = true,
  firstSealed,
}: KafkaKeyStoreOptions): Promise<KafkaKeyStore> {
  const log = logger.child({ component: 'keys', keyTopic: config.keyTopic });
  const brokers = new BrokerReachability(log);
  const facts = await keyTopicFactsAtStart(config, log, brokers, createTopic, firstSealed);
  const parts = createKafkaKeysParts({ config, log, writeTimeoutMs, maxPendingWrites, random, facts, brokers });
  const store = new KafkaKeys(parts);
  try {
    await parts.producer.connect();
    await store.caughtUp();
  } catch (error) {
    await store.close();
    throw describeStartError(error, config);
  }
  log.info(
    { partitions: facts.partitions, keys: store.stats().keys, erasureWithinMs: facts.erasureWithinMs },
    'opened the Kafka key store',
  );
  return store;
}
