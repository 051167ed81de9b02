// Makes sure the key topic exists with settings that erase a destroyed key within the bound and
// keep every live key (key-topic-settings.ts decides), as topic.ts does for the event topic: it is
// created when missing with the event topic's partition count and replication factor, and an
// existing one that would not erase in time, or would lose keys, is refused with one line naming
// the setting.
import kafkajs, { type Admin } from 'kafkajs';
import type { KafkaConfig } from '../../config.js';
import { checkKeyTopicConfig, CHECKED_KEY_TOPIC_CONFIG, KAFKA_CLEANER_DEFAULTS, keyTopicCreationConfig, type CleanerSettings, type KeyTopicCheck } from './key-topic-settings.js';
import { offsetsServed, TopicSettingsError } from './topic.js';

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

export async function ensureKeyTopic(admin: Admin, config: KafkaConfig, create = true): Promise<KeyTopicFacts> {
  const topic = config.keyTopic;
  if (!(await admin.listTopics()).includes(topic)) {
    if (!create) throw new KeyTopicMissingError(topic);
    await admin.createTopics({
      waitForLeaders: true,
      topics: [
        {
          topic,
          numPartitions: config.partitions,
          replicationFactor: config.replicationFactor,
          configEntries: Object.entries(keyTopicCreationConfig(config.keyErasureBoundMs, config.replicationFactor)).map(([name, value]) => ({ name, value })),
        },
      ],
    });
  }
  const described = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: CHECKED_KEY_TOPIC_CONFIG }] });
  const settings = new Map((described.resources[0]?.configEntries ?? []).map((entry) => [entry.configName, entry.configValue]));
  await offsetsServed(admin, topic);
  const partitions = (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0]?.partitions ?? [];
  if (partitions.length === 0) throw new TopicSettingsError(`key topic ${topic} has no partitions`);
  const replicas = new Set(partitions.flatMap((partition) => partition.replicas));
  const { cleaner, warning } = await readCleanerSettings(admin, [...replicas]);
  const check = checkKeyTopicConfig(topic, settings, Math.max(...partitions.map((partition) => partition.replicas.length)), config.keyErasureBoundMs, cleaner);
  return { ...check, partitions: partitions.length, warnings: warning === undefined ? check.warnings : [...check.warnings, warning] };
}

/**
 * The log cleaner of the brokers that hold the topic: every one must run it, and the slowest
 * back-off counts. Reading broker settings may be denied (ACLs): then Kafka's defaults are assumed,
 * with a warning.
 */
export async function readCleanerSettings(admin: Admin, brokerIds: readonly number[]): Promise<{ cleaner: CleanerSettings; warning?: string }> {
  try {
    const described = await admin.describeConfigs({
      includeSynonyms: false,
      resources: brokerIds.map((id) => ({ type: ConfigResourceTypes.BROKER, name: String(id), configNames: ['log.cleaner.enable', 'log.cleaner.backoff.ms'] })),
    });
    let cleaner = { enabled: true, backoffMs: 0 };
    for (const { configEntries } of described.resources) {
      const value = (name: string) => configEntries.find((entry) => entry.configName === name)?.configValue;
      cleaner = {
        enabled: cleaner.enabled && value('log.cleaner.enable') !== 'false',
        backoffMs: Math.max(cleaner.backoffMs, Number(value('log.cleaner.backoff.ms') ?? KAFKA_CLEANER_DEFAULTS.backoffMs)),
      };
    }
    return { cleaner };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { cleaner: KAFKA_CLEANER_DEFAULTS, warning: `cannot read the brokers' log cleaner settings (${reason}): assuming log.cleaner.enable=true and log.cleaner.backoff.ms=${KAFKA_CLEANER_DEFAULTS.backoffMs}` };
  }
}
