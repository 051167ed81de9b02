// Makes sure the topic exists with settings that keep history forever. A topic with finite
// retention or compaction would silently lose events, so a start against one is refused.
import kafkajs, { type Admin } from 'kafkajs';
import type { KafkaConfig } from '../config.js';

const { ConfigResourceTypes } = kafkajs;

export class TopicSettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TopicSettingsError';
  }
}

export const REQUIRED_TOPIC_CONFIG: Readonly<Record<string, string>> = { 'retention.ms': '-1', 'retention.bytes': '-1', 'cleanup.policy': 'delete' };

/** Creates the topic when missing (unless `create` is false: tools that only read); returns its partition count. */
export async function ensureTopic(admin: Admin, config: KafkaConfig, create = true): Promise<number> {
  const topics = await admin.listTopics();
  if (!topics.includes(config.topic) && !create) throw new TopicSettingsError(`topic ${config.topic} does not exist (REPORTS_TOPIC)`);
  if (!topics.includes(config.topic)) {
    await admin.createTopics({
      waitForLeaders: true,
      topics: [
        {
          topic: config.topic,
          numPartitions: config.partitions,
          replicationFactor: config.replicationFactor,
          configEntries: Object.entries(REQUIRED_TOPIC_CONFIG).map(([name, value]) => ({ name, value })),
        },
      ],
    });
  }
  await checkTopicConfig(admin, config.topic);
  await offsetsServed(admin, config.topic);
  const metadata = await admin.fetchTopicMetadata({ topics: [config.topic] });
  const partitions = metadata.topics[0]?.partitions.length ?? 0;
  if (partitions === 0) throw new TopicSettingsError(`topic ${config.topic} has no partitions`);
  return partitions;
}

/** A new topic's leaders can take a moment to serve offsets ("not the leader"); wait for that. */
async function offsetsServed(admin: Admin, topic: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await admin.fetchTopicOffsets(topic);
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

async function checkTopicConfig(admin: Admin, topic: string): Promise<void> {
  const described = await admin.describeConfigs({
    includeSynonyms: false,
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: Object.keys(REQUIRED_TOPIC_CONFIG) }],
  });
  const entries = described.resources[0]?.configEntries ?? [];
  for (const [name, required] of Object.entries(REQUIRED_TOPIC_CONFIG)) {
    const actual = entries.find((entry) => entry.configName === name)?.configValue;
    if (actual !== required) {
      throw new TopicSettingsError(
        `topic ${topic} has ${name}=${actual ?? 'unset'}, but the event log needs ${name}=${required} to keep every event forever; ` +
          `change it (kafka-configs --alter --entity-type topics --entity-name ${topic} --add-config ${name}=${required}) or use another REPORTS_TOPIC`,
      );
    }
  }
}
