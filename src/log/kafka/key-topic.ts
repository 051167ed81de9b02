// Makes sure the key topic exists with settings that erase a destroyed key within the bound and
// keep every live key (key-topic-settings.ts decides), as topic.ts does for the event topic: it is
// created when missing with the event topic's partitions and replicas, and an existing one that
// would not erase in time, or would lose keys, is refused with one line naming the setting.
//
// A report's key goes to the key topic's partition of the same number as the report's events
// (kafka-key-ids.ts), and that partition has the same replicas in the same order: the same
// preferred leader, so a broker that stops answering holds the key writes of the reports whose
// events it holds anyway, and no others. The event topic is created first when it is missing. An
// existing key topic is used as it is, with a warning when its partitions differ from the event
// topic's.
import kafkajs, { type Admin, type PartitionMetadata } from 'kafkajs';
import type { KafkaConfig } from '../../config.js';
import {
  checkKeyTopicConfig,
  CHECKED_KEY_TOPIC_CONFIG,
  KAFKA_CLEANER_DEFAULTS,
  keyTopicCreationConfig,
  type CleanerSettings,
  type KeyTopicCheck,
} from './key-topic-settings.js';
import { createTopicsSettled, ensureTopic, offsetsServed, TopicSettingsError, whileTopicIsNew } from './topic.js';

const { ConfigResourceTypes } = kafkajs;

export interface KeyTopicFacts extends KeyTopicCheck {
  readonly partitions: number;
}

/** The key topic is not there, and a tool that only reads does not create it. */
export class KeyTopicMissingError extends Error {
  constructor(readonly topic: string) {
    super(`key topic ${topic} does not exist (REPORTS_KEY_TOPIC)`);
    this.name = 'KeyTopicMissingError';
  }
}

/**
 * The key topic is missing while the event topic holds creates sealed under its keys: created empty,
 * it would read as every report erased, so the start stops (as it does for a missing keys.db).
 */
export class KeyTopicLostError extends TopicSettingsError {
  constructor(topic: string, eventTopic: string, firstSealed: string) {
    super(
      `key topic ${topic} does not exist, but ${eventTopic} holds creates sealed under its keys (the first at ${firstSealed}): refusing to create it empty, which would read as every report erased. Restore the key topic; to go on without its keys (the content of every report sealed under them is lost), create it by hand as docs/kafka.md ("A missing key topic") says`,
    );
    this.name = 'KeyTopicLostError';
  }
}

/**
 * Checks the key topic, creating it when missing and `create`; `firstSealed` (the server's start)
 * finds the first sealed create of the event topic, and one there stops the creation (KeyTopicLostError).
 */
export async function ensureKeyTopic(
  admin: Admin,
  config: KafkaConfig,
  create = true,
  firstSealed?: () => Promise<string | undefined>,
): Promise<KeyTopicFacts> {
  const topic = config.keyTopic;
  const topics = await admin.listTopics();
  if (!topics.includes(topic)) {
    if (!create) throw new KeyTopicMissingError(topic);
    if (topics.includes(config.topic) && firstSealed !== undefined) {
      const found = await firstSealed();
      // Another instance may have created it meanwhile and sealed a create (several upgrading a
      // history written before sealing at once): then it is there, and checked like every existing one.
      if (found !== undefined && !(await admin.listTopics()).includes(topic))
        throw new KeyTopicLostError(topic, config.topic, found);
    }
    if (!topics.includes(config.topic)) await ensureTopic(admin, config, true);
    const events = await partitionsOf(admin, config.topic);
    await createTopicsSettled(admin, {
      topics: [
        {
          topic,
          replicaAssignment: events.map(({ partitionId, replicas }) => ({ partition: partitionId, replicas })),
          configEntries: Object.entries(keyTopicCreationConfig(config.keyErasureBoundMs, config.replicationFactor)).map(
            ([name, value]) => ({ name, value }),
          ),
        },
      ],
    });
  }
  // As for the event topic (topic.ts): offsets first, then what a broker may not know yet asked again.
  await offsetsServed(admin, topic);
  const described = await whileTopicIsNew(() =>
    admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: CHECKED_KEY_TOPIC_CONFIG }],
    }),
  );
  const settings = new Map(
    (described.resources[0]?.configEntries ?? []).map((entry) => [entry.configName, entry.configValue]),
  );
  const partitions = await whileTopicIsNew(() => partitionsOf(admin, topic));
  if (partitions.length === 0) throw new TopicSettingsError(`key topic ${topic} has no partitions`);
  const replicas = new Set(partitions.flatMap((partition) => partition.replicas));
  const { cleaner, warning } = await readCleanerSettings(admin, [...replicas]);
  const check = checkKeyTopicConfig(
    topic,
    settings,
    Math.max(...partitions.map((partition) => partition.replicas.length)),
    config.keyErasureBoundMs,
    cleaner,
    create,
  );
  // A tool may read a key topic whose event topic is gone: nothing to compare with then.
  const mismatch = topics.includes(config.topic)
    ? assignmentMismatch(topic, partitions, config.topic, await partitionsOf(admin, config.topic))
    : undefined;
  const warnings = [...check.warnings, ...[warning, mismatch].filter((line) => line !== undefined)];
  return { ...check, partitions: partitions.length, warnings };
}

const count = (partitions: number) => (partitions === 1 ? '1 partition' : `${partitions} partitions`);

/** The topic's partitions in partition order, with their replicas (the preferred leader first). */
async function partitionsOf(admin: Admin, topic: string): Promise<PartitionMetadata[]> {
  const partitions = (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0]?.partitions ?? [];
  return [...partitions].sort((a, b) => a.partitionId - b.partitionId);
}

/**
 * Pure: a warning when the key topic's partitions are not the event topic's (count, replicas in
 * order), which costs the isolation of brokers' failures, not correctness.
 */
export function assignmentMismatch(
  keyTopic: string,
  keyPartitions: readonly PartitionMetadata[],
  eventTopic: string,
  eventPartitions: readonly PartitionMetadata[],
): string | undefined {
  const cost =
    'so a broker that stops answering may hold the key writes, and so the creates and deletes, of reports on partitions it does not lead';
  if (keyPartitions.length !== eventPartitions.length) {
    return `key topic ${keyTopic} has ${count(keyPartitions.length)} and topic ${eventTopic} ${count(eventPartitions.length)}: a report's key is not in its report's partition, ${cost}; reports migrate --to-topic copies both to topics that match`;
  }
  const replicasOf = new Map(eventPartitions.map(({ partitionId, replicas }) => [partitionId, replicas.join(',')]));
  const differing = keyPartitions.filter(
    ({ partitionId, replicas }) => replicasOf.get(partitionId) !== replicas.join(','),
  );
  const first = differing[0];
  if (first === undefined) return undefined;
  return (
    `key topic ${keyTopic} has other replicas than topic ${eventTopic} in ${differing.length} of its ${keyPartitions.length} partitions ` +
    `(partition ${first.partitionId}: ${first.replicas.join(',')} against ${replicasOf.get(first.partitionId) ?? 'none'}), ${cost}; ` +
    `reassign the key topic's partitions to the event topic's replicas in the same order (kafka-reassign-partitions)`
  );
}

/**
 * The log cleaner of the brokers that hold the topic: every one must run it, and the slowest
 * back-off counts. Reading broker settings may be denied (ACLs): then Kafka's defaults are assumed,
 * with a warning.
 */
export async function readCleanerSettings(
  admin: Admin,
  brokerIds: readonly number[],
): Promise<{ cleaner: CleanerSettings; warning?: string }> {
  try {
    const described = await admin.describeConfigs({
      includeSynonyms: false,
      resources: brokerIds.map((id) => ({
        type: ConfigResourceTypes.BROKER,
        name: String(id),
        configNames: ['log.cleaner.enable', 'log.cleaner.backoff.ms'],
      })),
    });
    let cleaner = { enabled: true, backoffMs: 0 };
    for (const { configEntries } of described.resources) {
      const value = (name: string) => configEntries.find((entry) => entry.configName === name)?.configValue;
      cleaner = {
        enabled: cleaner.enabled && value('log.cleaner.enable') !== 'false',
        backoffMs: Math.max(
          cleaner.backoffMs,
          Number(value('log.cleaner.backoff.ms') ?? KAFKA_CLEANER_DEFAULTS.backoffMs),
        ),
      };
    }
    return { cleaner };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return {
      cleaner: KAFKA_CLEANER_DEFAULTS,
      warning: `cannot read the brokers' log cleaner settings (${reason}): assuming log.cleaner.enable=true and log.cleaner.backoff.ms=${KAFKA_CLEANER_DEFAULTS.backoffMs}`,
    };
  }
}
