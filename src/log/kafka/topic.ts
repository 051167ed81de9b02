// Makes sure the topic exists with settings that keep history forever. A topic with finite
// retention or compaction would silently lose events, so a start against one is refused; so is
// one that allows unclean leader election (an out-of-sync replica could become leader and drop
// acknowledged records). acks=-1 only waits for the replicas in sync at that moment: with
// min.insync.replicas=1 that can be the leader alone, so a topic with replicas gets a higher one.
import kafkajs, { type Admin, type ITopicConfig } from 'kafkajs';
import type { KafkaConfig } from '../../config.js';
import { maxRecordBytes } from './record-size.js';

const { ConfigResourceTypes } = kafkajs;

/** A report event with a short name and tag: a topic that cannot take this is useless. */
const SMALLEST_USEFUL_EVENT_BYTES = 1024;

export class TopicSettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TopicSettingsError';
  }
}

export const REQUIRED_TOPIC_CONFIG: Readonly<Record<string, string>> = {
  'retention.ms': '-1',
  'retention.bytes': '-1',
  'cleanup.policy': 'delete',
};

export interface TopicFacts {
  readonly partitions: number;
  /** The topic's effective max.message.bytes: the largest record batch the broker takes. */
  readonly maxMessageBytes: number;
  /** The topic's effective min.insync.replicas: with fewer replicas in sync, acks=all writes are refused. */
  readonly minInsyncReplicas: number;
  /** Things an operator should fix that do not stop the start (logged as warnings). */
  readonly warnings: readonly string[];
}

/** min.insync.replicas for a new topic: 2 from 3 replicas on, else one less than the replicas, at least 1. */
export function minInsyncReplicasFor(replicationFactor: number): number {
  return replicationFactor >= 3 ? 2 : Math.max(1, replicationFactor - 1);
}

const CHECKED_CONFIG = [
  ...Object.keys(REQUIRED_TOPIC_CONFIG),
  'max.message.bytes',
  'min.insync.replicas',
  'unclean.leader.election.enable',
];

/**
 * The event topic is missing while its key topic has been written: a history that was there is
 * gone. Created empty, it would answer 404 for every report, and a start's sweep would destroy the
 * keys as unused, so that the history restored could no longer be read: the start stops instead.
 */
export class EventTopicLostError extends TopicSettingsError {
  constructor(topic: string, keyTopic: string) {
    super(
      `topic ${topic} does not exist, but its key topic ${keyTopic} holds records: refusing to create it empty, which would destroy those keys as unused. Restore the event topic; to start anew under these names (a new store, or a migration run again), delete ${keyTopic} too`,
    );
    this.name = 'EventTopicLostError';
  }
}

/** Whether any partition of `topic` was ever written (its end offset past 0). */
async function everWritten(admin: Admin, topic: string): Promise<boolean> {
  const offsets = await admin.fetchTopicOffsets(topic);
  return offsets.some(({ high }) => Number(high) > 0);
}

/** Creates the topic when missing (unless `create` is false: tools that only read); checks and describes it. */
export async function ensureTopic(admin: Admin, config: KafkaConfig, create = true): Promise<TopicFacts> {
  const topics = await admin.listTopics();
  if (!topics.includes(config.topic) && !create)
    throw new TopicSettingsError(`topic ${config.topic} does not exist (REPORTS_TOPIC)`);
  if (!topics.includes(config.topic)) {
    if (topics.includes(config.keyTopic) && (await everWritten(admin, config.keyTopic)))
      throw new EventTopicLostError(config.topic, config.keyTopic);
    await createTopicsSettled(admin, {
      topics: [
        {
          topic: config.topic,
          numPartitions: config.partitions,
          replicationFactor: config.replicationFactor,
          configEntries: Object.entries(creationConfig(config.replicationFactor)).map(([name, value]) => ({
            name,
            value,
          })),
        },
      ],
    });
  }
  // Offsets first: they wait out a new topic's first moments, when a loaded broker still answers
  // "does not host this topic-partition" (a server once failed to start on that from describeConfigs).
  await offsetsServed(admin, config.topic);
  const settings = await whileTopicIsNew(() => topicConfig(admin, config.topic));
  const metadata =
    (await whileTopicIsNew(() => admin.fetchTopicMetadata({ topics: [config.topic] }))).topics[0]?.partitions ?? [];
  if (metadata.length === 0) throw new TopicSettingsError(`topic ${config.topic} has no partitions`);
  const replicationFactor = Math.max(...metadata.map((partition) => partition.replicas.length));
  return { partitions: metadata.length, ...checkTopicConfig(config.topic, settings, replicationFactor, create) };
}

function creationConfig(replicationFactor: number): Record<string, string> {
  // -1 leaves the replication factor to the broker; min.insync.replicas then stays the broker's too.
  if (replicationFactor < 2) return { ...REQUIRED_TOPIC_CONFIG };
  return { ...REQUIRED_TOPIC_CONFIG, 'min.insync.replicas': String(minInsyncReplicasFor(replicationFactor)) };
}

/**
 * Creates `topics` (those that exist already are left as they are) and returns once every one of
 * them serves its offsets. kafkajs's own wait for leaders asks the controller's metadata, and a
 * KRaft broker that has not applied the new topic yet answers "does not host this topic-partition":
 * kafkajs then fails the creation of a topic it did create (a loaded test run saw it). That answer
 * is waited out here instead.
 */
export async function createTopicsSettled(
  admin: Admin,
  { topics, timeoutMs = 15_000 }: { readonly topics: ITopicConfig[]; readonly timeoutMs?: number },
): Promise<void> {
  try {
    await admin.createTopics({ waitForLeaders: true, topics });
  } catch (error) {
    if (!isUnknownTopic(error)) throw error;
  }
  for (const { topic } of topics) await offsetsServed(admin, topic, timeoutMs);
}

/** A new topic's leaders can take a moment to serve offsets ("not the leader"); wait for that. */
export async function offsetsServed(admin: Admin, topic: string, timeoutMs = 15_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    try {
      await admin.fetchTopicOffsets(topic);
      return;
    } catch (error) {
      if (performance.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** kafkajs's UNKNOWN_TOPIC_OR_PARTITION, also when its retries gave up on it (the error is then the cause). */
function isUnknownTopic(error: unknown): boolean {
  for (let at = error, depth = 0; at instanceof Error && depth < 5; at = at.cause, depth += 1)
    if ('type' in at && at.type === 'UNKNOWN_TOPIC_OR_PARTITION') return true;
  return false;
}

/**
 * `ask`, asked again while a broker answers that it does not know the topic yet (a broker other than
 * the one that served the offsets may not have applied the new topic's metadata), for up to `timeoutMs`.
 */
export async function whileTopicIsNew<T>(ask: () => Promise<T>, timeoutMs = 15_000): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    try {
      return await ask();
    } catch (error) {
      if (!isUnknownTopic(error) || performance.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

async function topicConfig(admin: Admin, topic: string): Promise<ReadonlyMap<string, string>> {
  const described = await admin.describeConfigs({
    includeSynonyms: false,
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: CHECKED_CONFIG }],
  });
  const entries = described.resources[0]?.configEntries ?? [];
  return new Map(entries.map((entry) => [entry.configName, entry.configValue]));
}

/** Pure: refuses settings that lose or may lose acknowledged events; returns the limits and warnings. */
/** `writes`: the caller writes to the topic (the server, a migration's target); a tool that only reads is warned where a writer is refused. */
export function checkTopicConfig(
  topic: string,
  settings: ReadonlyMap<string, string>,
  replicationFactor: number,
  writes = true,
): Omit<TopicFacts, 'partitions'> {
  for (const [name, required] of Object.entries(REQUIRED_TOPIC_CONFIG)) {
    const actual = settings.get(name);
    if (actual !== required) throw settingError(topic, name, actual, required, 'to keep every event forever');
  }
  const unclean = settings.get('unclean.leader.election.enable');
  if (unclean === 'true')
    throw settingError(
      topic,
      'unclean.leader.election.enable',
      unclean,
      'false',
      'so that a replica missing acknowledged events never becomes leader',
    );
  const warnings: string[] = [];
  const minInsync = Number(settings.get('min.insync.replicas') ?? '1');
  const unwritable = unreachableMinInsync(`topic ${topic}`, topic, minInsync, replicationFactor);
  if (unwritable !== undefined && writes) throw new TopicSettingsError(unwritable);
  if (unwritable !== undefined) warnings.push(unwritable);
  if (replicationFactor > 1 && minInsync <= 1) {
    warnings.push(
      `topic ${topic} has ${replicationFactor} replicas but min.insync.replicas=${minInsync}: an acknowledged event may exist on the leader alone and be lost with it; ` +
        `set min.insync.replicas=${minInsyncReplicasFor(replicationFactor)} (kafka-configs --alter --entity-type topics --entity-name ${topic} --add-config min.insync.replicas=${minInsyncReplicasFor(replicationFactor)})`,
    );
  }
  const maxMessageBytes = Number(settings.get('max.message.bytes') ?? '1048588');
  if (maxRecordBytes(maxMessageBytes) < SMALLEST_USEFUL_EVENT_BYTES) {
    throw new TopicSettingsError(
      `topic ${topic} has max.message.bytes=${maxMessageBytes}, too small for even a short report event (${SMALLEST_USEFUL_EVENT_BYTES} bytes); ` +
        `raise it (kafka-configs --alter --entity-type topics --entity-name ${topic} --add-config max.message.bytes=1048588) or use another REPORTS_TOPIC`,
    );
  }
  return { maxMessageBytes, minInsyncReplicas: minInsync, warnings };
}

/**
 * A topic that asks more replicas in sync than it has refuses every acks=all write for good
 * (NOT_ENOUGH_REPLICAS): a writer is refused at start, with the fix, rather than started to answer
 * 503 to every write; reading is not affected. (`what`: "topic t" or "key topic t".)
 */
export function unreachableMinInsync(
  what: string,
  topic: string,
  minInsync: number,
  replicationFactor: number,
): string | undefined {
  if (!(minInsync > replicationFactor)) return undefined;
  const wanted = minInsyncReplicasFor(replicationFactor);
  return (
    `${what} has ${replicationFactor} replica${replicationFactor === 1 ? '' : 's'} but min.insync.replicas=${minInsync}: Kafka would refuse every write to it (NOT_ENOUGH_REPLICAS); ` +
    `set min.insync.replicas=${wanted} (kafka-configs --alter --entity-type topics --entity-name ${topic} --add-config min.insync.replicas=${wanted}) or add replicas`
  );
}

function settingError(
  topic: string,
  name: string,
  actual: string | undefined,
  required: string,
  why: string,
): TopicSettingsError {
  return new TopicSettingsError(
    `topic ${topic} has ${name}=${actual ?? 'unset'}, but the event log needs ${name}=${required} ${why}; ` +
      `change it (kafka-configs --alter --entity-type topics --entity-name ${topic} --add-config ${name}=${required}) or use another REPORTS_TOPIC`,
  );
}
