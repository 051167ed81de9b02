// What the key topic's settings must be for a destroyed key to leave the broker's files within
// the bound (REPORTS_KEY_ERASURE_BOUND_MS), and the check that refuses a key topic whose settings
// would keep one longer, lose live keys, or never compact at all. Pure: key-topic.ts reads the
// settings, this decides.
//
// A destroyed key is a tombstone. Kafka removes the key's record when its log cleaner cleans the
// segment that holds the tombstone, which it never does to the active segment; a segment rolls
// only when a record is appended after it is `min(segment.ms, max.compaction.lag.ms)` old, so the
// store appends a roll record that long after the last tombstone (erasure-roll.ts). The cleaner
// must clean a rolled segment once its first record is `max.compaction.lag.ms` old (sooner when
// `min.cleanable.dirty.ratio` is reached), finds it within `log.cleaner.backoff.ms` (a broker
// setting), and the files it replaces are deleted `file.delete.delay.ms` later.
import { minInsyncReplicasFor, TopicSettingsError, unreachableMinInsync } from './topic.js';

/** How late after its due time a roll record may be appended: a margin over the roll time, and a spread so that instances do not all write one. */
export const ROLL_MARGIN_MS = 1000;
export const ROLL_SPREAD_MS = 1000;

/** The brokers' log cleaner, as far as the erasure depends on it. */
export interface CleanerSettings {
  /** log.cleaner.enable on every broker holding a replica. */
  readonly enabled: boolean;
  /** The longest log.cleaner.backoff.ms among them: how long an idle cleaner sleeps before it looks again. */
  readonly backoffMs: number;
}

/** Kafka's defaults, assumed when the brokers' settings cannot be read. */
export const KAFKA_CLEANER_DEFAULTS: CleanerSettings = { enabled: true, backoffMs: 15_000 };

/** The settings of the key topic that bound the erasure, in milliseconds. */
export interface CompactionTiming {
  readonly segmentMs: number;
  readonly maxCompactionLagMs: number;
  readonly minCompactionLagMs: number;
  readonly fileDeleteDelayMs: number;
}

/** Kafka's topic defaults for them (max.compaction.lag.ms: Long.MAX_VALUE, never forced). */
const TIMING_DEFAULTS: Readonly<Record<string, string>> = {
  'segment.ms': '604800000',
  'max.compaction.lag.ms': '9223372036854775807',
  'min.compaction.lag.ms': '0',
  'file.delete.delay.ms': '60000',
};

/** The settings read and checked. */
export const CHECKED_KEY_TOPIC_CONFIG = [
  'cleanup.policy',
  'retention.ms',
  'retention.bytes',
  'unclean.leader.election.enable',
  'min.insync.replicas',
  'max.message.bytes',
  'delete.retention.ms',
  ...Object.keys(TIMING_DEFAULTS),
];

/**
 * A new key topic's settings: half the bound for the timing, the rest for the cleaner's own work.
 * `delete.retention.ms` keeps the tombstone itself (the id alone) a while, so that an instance
 * reading the topic from the start sees the tombstone of every key whose record it read.
 */
export function keyTopicCreationConfig(boundMs: number, replicationFactor: number): Record<string, string> {
  const config: Record<string, string> = {
    'cleanup.policy': 'compact',
    'retention.ms': '-1',
    'retention.bytes': '-1',
    'max.compaction.lag.ms': String(Math.floor(boundMs / 2)),
    'segment.ms': String(Math.floor(boundMs / 4)),
    'min.compaction.lag.ms': '0',
    'min.cleanable.dirty.ratio': '0.01',
    'delete.retention.ms': String(Math.min(3_600_000, Math.floor(boundMs / 4))),
    'file.delete.delay.ms': String(Math.min(60_000, Math.floor(boundMs / 20))),
    'unclean.leader.election.enable': 'false',
  };
  // -1 leaves the replication factor to the broker; min.insync.replicas then stays the broker's too.
  if (replicationFactor >= 2) config['min.insync.replicas'] = String(minInsyncReplicasFor(replicationFactor));
  return config;
}

/** After a key's tombstone is appended, its secret is in none of the topic's files after at most this (plus the cleaning's own time). */
export function erasureWithinMs(timing: CompactionTiming, cleaner: CleanerSettings): number {
  const rolled = rollAfterMs(timing) + ROLL_MARGIN_MS + ROLL_SPREAD_MS;
  return (
    Math.max(rolled, timing.maxCompactionLagMs, timing.minCompactionLagMs) +
    cleaner.backoffMs +
    timing.fileDeleteDelayMs
  );
}

/** How old a compacted topic's active segment must be for an append to roll it. */
export function rollAfterMs({ segmentMs, maxCompactionLagMs }: CompactionTiming): number {
  return Math.min(segmentMs, maxCompactionLagMs);
}

export interface KeyTopicCheck {
  readonly maxMessageBytes: number;
  readonly minInsyncReplicas: number;
  readonly timing: CompactionTiming;
  readonly erasureWithinMs: number;
  readonly warnings: readonly string[];
}

/** Refuses a key topic that would keep a destroyed key, lose a live one, or keep one longer than `boundMs`. */
export function checkKeyTopicConfig(
  topic: string,
  settings: ReadonlyMap<string, string>,
  replicationFactor: number,
  boundMs: number,
  cleaner: CleanerSettings,
  /** The caller writes keys (the server, a migration's target); a tool that only reads is warned where a writer is refused. */
  writes = true,
): KeyTopicCheck {
  const policy = (settings.get('cleanup.policy') ?? 'delete').split(',').map((entry) => entry.trim());
  if (!policy.includes('compact'))
    throw settingError(
      topic,
      'cleanup.policy',
      settings.get('cleanup.policy'),
      'compact',
      'so that a destroyed key is removed from its files',
    );
  // Kafka applies retention.* only with the delete policy: with it, they must keep every live key.
  for (const name of policy.includes('delete') ? ['retention.ms', 'retention.bytes'] : []) {
    if (settings.get(name) !== '-1')
      throw settingError(topic, name, settings.get(name), '-1', 'so that the keys of live reports never expire');
  }
  const unclean = settings.get('unclean.leader.election.enable');
  if (unclean === 'true')
    throw settingError(
      topic,
      'unclean.leader.election.enable',
      unclean,
      'false',
      'so that a replica missing acknowledged keys never becomes leader',
    );
  if (!cleaner.enabled) {
    throw new TopicSettingsError(
      `key topic ${topic}: a broker holding it has log.cleaner.enable=false, so destroyed keys are never removed from its files; set log.cleaner.enable=true on every broker or use another REPORTS_KEY_TOPIC`,
    );
  }
  const timing = timingOf(settings);
  const within = erasureWithinMs(timing, cleaner);
  if (within > boundMs) throw boundError(topic, settings, within, boundMs, replicationFactor, cleaner);
  const minInsyncReplicas = Number(settings.get('min.insync.replicas') ?? '1');
  const warnings: string[] = [];
  const unwritable = unreachableMinInsync(`key topic ${topic}`, topic, minInsyncReplicas, replicationFactor);
  if (unwritable !== undefined && writes) throw new TopicSettingsError(unwritable);
  if (unwritable !== undefined) warnings.push(unwritable);
  if (replicationFactor > 1 && minInsyncReplicas <= 1) {
    const wanted = minInsyncReplicasFor(replicationFactor);
    warnings.push(
      `key topic ${topic} has ${replicationFactor} replicas but min.insync.replicas=${minInsyncReplicas}: an acknowledged key may exist on the leader alone and be lost with it; ` +
        `set min.insync.replicas=${wanted} (kafka-configs --alter --entity-type topics --entity-name ${topic} --add-config min.insync.replicas=${wanted})`,
    );
  }
  return {
    maxMessageBytes: Number(settings.get('max.message.bytes') ?? '1048588'),
    minInsyncReplicas,
    timing,
    erasureWithinMs: within,
    warnings,
  };
}

function timingOf(settings: ReadonlyMap<string, string>): CompactionTiming {
  const ms = (name: string) => Number(settings.get(name) ?? TIMING_DEFAULTS[name]);
  return {
    segmentMs: ms('segment.ms'),
    maxCompactionLagMs: ms('max.compaction.lag.ms'),
    minCompactionLagMs: ms('min.compaction.lag.ms'),
    fileDeleteDelayMs: ms('file.delete.delay.ms'),
  };
}

/** Names the setting that takes the erasure past the bound: the first above what the service would create, else the brokers' back-off. */
function boundError(
  topic: string,
  settings: ReadonlyMap<string, string>,
  withinMs: number,
  boundMs: number,
  replicationFactor: number,
  cleaner: CleanerSettings,
): TopicSettingsError {
  const wanted = keyTopicCreationConfig(boundMs, replicationFactor);
  const keeps = `a destroyed key could stay in its files up to ${withinMs} ms, longer than REPORTS_KEY_ERASURE_BOUND_MS=${boundMs}`;
  for (const name of ['max.compaction.lag.ms', 'min.compaction.lag.ms', 'file.delete.delay.ms']) {
    const actual = settings.get(name) ?? TIMING_DEFAULTS[name] ?? '';
    const value = wanted[name] ?? '';
    if (Number(actual) > Number(value)) {
      return new TopicSettingsError(
        `key topic ${topic} has ${name}=${actual}: ${keeps}; set ${name}=${value} (kafka-configs --alter --entity-type topics --entity-name ${topic} --add-config ${name}=${value}), raise REPORTS_KEY_ERASURE_BOUND_MS or use another REPORTS_KEY_TOPIC`,
      );
    }
  }
  return new TopicSettingsError(
    `key topic ${topic}: the brokers' log.cleaner.backoff.ms=${cleaner.backoffMs} means ${keeps}; lower it (kafka-configs --alter --entity-type brokers --entity-default --add-config log.cleaner.backoff.ms=1000) or raise REPORTS_KEY_ERASURE_BOUND_MS`,
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
    `key topic ${topic} has ${name}=${actual ?? 'unset'}, but the key store needs ${name}=${required} ${why}; ` +
      `change it (kafka-configs --alter --entity-type topics --entity-name ${topic} --add-config ${name}=${required}) or use another REPORTS_KEY_TOPIC`,
  );
}
