// The key topic as a tool reads it (tool-keys.ts): followed into memory as a key store follows it
// (key-follower.ts, key-memory.ts), for as long as the tool runs, but with no producer: a tool never
// writes to the key topic (not even the roll records a store writes after a tombstone), and a
// principal allowed only to read the topic can run it. The topic is checked as a store checks it,
// and never created: a topic written before erasure has no key topic, and holds no key until a
// server creates it, which a later lookup then finds.
import type { Logger } from 'pino';
import type { KafkaConfig } from '../config.js';
import { BrokerReachability } from '../log/kafka/brokers.js';
import { createKafkaClient, describeStartError } from '../log/kafka/client.js';
import { ensureKeyTopic, KeyTopicMissingError, type KeyTopicFacts } from '../log/kafka/key-topic.js';
import { PartitionHeads } from '../log/kafka/partition-heads.js';
import { createFastClient } from '../log/kafka/producer.js';
import { settleWithin } from '../log/settle-within.js';
import { DISCONNECT_MS } from '../log/kafka/disconnect.js';
import { partitionOfKeyId } from './kafka-key-ids.js';
import { KeyFollower } from './key-follower.js';
import { KeyMemory } from './key-memory.js';
import { keyIdText, NO_KEYS, type ContentKey, type KeyId, type KeyLookup } from './key-store.js';
import type { ToolKeys } from './tool-keys.js';

/** How long a tool waits for the key topic to answer. */
const TOOL_READ_TIMEOUT_MS = 30_000;

export interface KafkaToolKeysOptions {
  readonly config: KafkaConfig;
  readonly logger: Logger;
  /** Bounds each catch-up with the key topic's heads. */
  readonly writeTimeoutMs?: number;
}

interface KeyReader {
  lookup(): Promise<KeyLookup>;
  get(id: KeyId): Promise<ContentKey | undefined>;
  close(): Promise<void>;
}

/** The key topic's facts, checked as a store checks them; undefined when there is no key topic. */
async function keyTopicFacts(
  config: KafkaConfig,
  logger: Logger,
  brokers: BrokerReachability,
): Promise<KeyTopicFacts | undefined> {
  const admin = createKafkaClient(config, logger, { brokers }).admin();
  try {
    await admin.connect();
    return await ensureKeyTopic(admin, config, false);
  } catch (error) {
    if (error instanceof KeyTopicMissingError) return undefined;
    throw describeStartError(error, config);
  } finally {
    await settleWithin(DISCONNECT_MS, admin.disconnect());
  }
}

async function openKeyReader({
  config,
  logger,
  writeTimeoutMs = TOOL_READ_TIMEOUT_MS,
}: KafkaToolKeysOptions): Promise<KeyReader | undefined> {
  const log = logger.child({ component: 'keys', keyTopic: config.keyTopic });
  const brokers = new BrokerReachability(log);
  const facts = await keyTopicFacts(config, log, brokers);
  if (facts === undefined) return undefined;
  for (const warning of facts.warnings) log.warn(warning);
  const kafka = createFastClient(config, log, brokers, writeTimeoutMs);
  const partitionOf = (idText: string) => partitionOfKeyId(idText, facts.partitions);
  const memory = new KeyMemory(config.keyTopic, partitionOf);
  let failure: Error | undefined;
  const follower = new KeyFollower({
    kafka,
    topic: config.keyTopic,
    partitions: facts.partitions,
    brokers,
    heads: new PartitionHeads({
      kafka,
      topic: config.keyTopic,
      partitions: facts.partitions,
      brokers,
      minInsyncReplicas: facts.minInsyncReplicas,
    }),
    apply: (record) => {
      if (memory.apply(record) === 'unreadable')
        log.warn(
          { partition: record.position.partition, offset: record.position.offset },
          'skipped a record of the key topic that is not a key this version reads',
        );
    },
    applied: () => undefined,
    failed: (error) => {
      failure = error;
    },
  });
  const catchUp = async (partitions: readonly number[]) => {
    try {
      await follower.catchUp(partitions, writeTimeoutMs);
    } catch (error) {
      // A follower that stopped says why (a key outside its partition: the partition count changed).
      throw failure ?? error;
    }
  };
  const all = [...Array(facts.partitions).keys()];
  return {
    async lookup() {
      await catchUp(all);
      return { get: (id) => memory.get(keyIdText(id)) };
    },
    async get(id) {
      const idText = keyIdText(id);
      if (memory.get(idText) === undefined) await catchUp([partitionOf(idText)]);
      return memory.get(idText);
    },
    async close() {
      await follower.close();
      memory.clear();
    },
  };
}

export async function openKafkaToolKeys(options: KafkaToolKeysOptions): Promise<ToolKeys> {
  let reader: KeyReader | undefined;
  let closed = false;
  const open = async () => {
    reader ??= closed ? undefined : await openKeyReader(options);
    return reader;
  };
  await open();
  return {
    lookup: async () => (await (await open())?.lookup()) ?? NO_KEYS,
    get: async (id) => (await open())?.get(id),
    async close() {
      closed = true;
      await reader?.close();
    },
  };
}
