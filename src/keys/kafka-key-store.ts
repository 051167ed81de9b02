// The Kafka adapter of the key store: content keys in a compacted key topic beside the event topic
// (key-record.ts for the records, log/kafka/key-topic-settings.ts for the topic and the erasure
// bound), each in its report's partition (kafka-key-ids.ts). A put or destroy resolves once the key
// or its tombstone is acknowledged by every in-sync replica (idempotent producer, acks=-1); writes
// go in one lane per partition, and those waiting together share one produce request
// (key-lanes.ts). Every instance follows the whole topic into memory (key-follower.ts) and answers
// from there, catching up with the partition's head first when a key is not there yet. Secrets and
// digests are never logged: lines name topics, partitions, offsets and counts only.
import { randomBytes } from 'node:crypto';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Producer } from 'kafkajs';
import type { Logger } from 'pino';
import { CONTENT_KEY_BYTES } from '../../projections/sealing.js';
import type { KafkaConfig } from '../config.js';
import { Deadlines } from '../deadlines.js';
import { LogUnavailableError, type LogRecord } from '../log/event-log.js';
import { BrokerReachability } from '../log/kafka/brokers.js';
import { createKafkaClient, describeStartError } from '../log/kafka/client.js';
import { ensureKeyTopic, type KeyTopicFacts } from '../log/kafka/key-topic.js';
import { ROLL_MARGIN_MS, ROLL_SPREAD_MS, rollAfterMs } from '../log/kafka/key-topic-settings.js';
import { partitionOfKey } from '../log/kafka/key-partition.js';
import { PartitionHeads } from '../log/kafka/partition-heads.js';
import { createFastClient, createProducer } from '../log/kafka/producer.js';
import type { RenewingProducer } from '../log/kafka/renewing-producer.js';
import { settleWithin } from '../log/settle-within.js';
import { DISCONNECT_MS } from '../log/kafka/disconnect.js';
import { KeyFollower } from './key-follower.js';
import { checkContentKey, checkKeyId, CONTENT_DIGEST_BYTES } from './key-record.js';
import { KeyMemory } from './key-memory.js';
import { RollRecords } from './roll-records.js';
import { mintKeyId, partitionOfKeyId } from './kafka-key-ids.js';
import {
  keyIdText,
  type ContentKey,
  type KeyId,
  type KeyLookup,
  type LookupOptions,
  type KeyStore,
  type KeyStoreStats,
  type KeyWriteOptions,
  type MintOptions,
} from './key-store.js';
import { KeyLanes } from './key-lanes.js';
import { messagesOf, putWrite, type KeyWrite } from './key-writes.js';
import { SegmentRolls } from './segment-rolls.js';

export interface KafkaKeyStoreOptions {
  readonly config: KafkaConfig;
  readonly logger: Logger;
  /** Bounds each produce request (as the event log's: see produceTiming), and a get's or lookup's catch-up. */
  readonly writeTimeoutMs: number;
  /** Writes allowed to wait for a partition's next produce request (REPORTS_MAX_PENDING_APPENDS); one more is refused with LogOverloadedError. */
  readonly maxPendingWrites?: number;
  /** Random bytes: key ids and secrets, and this instance's spread of roll records. */
  readonly random?: (bytes: number) => Buffer;
  /** Create the key topic when it is missing (the server); a tool that only reads does not. */
  readonly createTopic?: boolean;
}

export interface KafkaKeyStoreStats extends KeyStoreStats {
  /** Keys held in memory. */
  readonly keys: number;
  /** Produce requests sent to the brokers (retries included). */
  readonly produceRequests: number;
  /** Roll records written (segment-rolls.ts). */
  readonly rollRecords: number;
}

export interface KafkaKeyStore extends KeyStore {
  stats(): KafkaKeyStoreStats;
  /** The ids of the keys held in memory now, as text. */
  heldIds(): IterableIterator<string>;
  /** How long after a destroy its secret may still be in the topic's files, by the topic's settings. */
  readonly erasureWithinMs: number;
}

export async function openKafkaKeyStore({
  config,
  logger,
  writeTimeoutMs,
  maxPendingWrites,
  random = randomBytes,
  createTopic = true,
}: KafkaKeyStoreOptions): Promise<KafkaKeyStore> {
  const log = logger.child({ component: 'keys', keyTopic: config.keyTopic });
  const brokers = new BrokerReachability(log);
  const admin = createKafkaClient(config, log, { brokers }).admin();
  let facts: KeyTopicFacts;
  try {
    await admin.connect();
    facts = await ensureKeyTopic(admin, config, createTopic);
  } catch (error) {
    throw describeStartError(error, config);
  } finally {
    await settleWithin(DISCONNECT_MS, admin.disconnect());
  }
  for (const warning of facts.warnings) log.warn(warning);
  const fastClient = createFastClient(config, log, brokers, writeTimeoutMs);
  const counts = { erasures: 0, produceRequests: 0, rollRecords: 0 };
  const prepare = (created: Producer) => {
    brokers.watch(created);
    created.on(created.events.REQUEST, ({ payload }) => {
      if (payload.apiName === 'Produce') counts.produceRequests += 1;
    });
  };
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
  const store = new KafkaKeys({
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
  });
  try {
    await producer.connect();
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

/** How long a start may take to read the key topic up to its head. */
const START_CATCH_UP_MS = 120_000;

interface KafkaKeysParts {
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
}

class KafkaKeys implements KafkaKeyStore {
  readonly description: string;
  readonly erasureWithinMs: number;
  private readonly memory: KeyMemory;
  private readonly rolls: SegmentRolls;
  private readonly rollRecords: RollRecords;
  private readonly follower: KeyFollower;
  private followFailure: Error | undefined;
  private closed = false;

  constructor(private readonly parts: KafkaKeysParts) {
    const { config, facts, random } = parts;
    this.description = `kafka-keys:${config.keyTopic}@${config.brokers.join(',')}`;
    this.erasureWithinMs = facts.erasureWithinMs;
    this.memory = new KeyMemory(config.keyTopic, (idText) => this.partitionOf(idText));
    this.rolls = new SegmentRolls(
      rollAfterMs(facts.timing),
      ROLL_MARGIN_MS + Math.floor((random(2).readUInt16BE(0) / 0x10000) * ROLL_SPREAD_MS),
    );
    this.rollRecords = new RollRecords(
      this.rolls,
      (partitions) => this.write({ kind: 'roll', partitions }, parts.writeTimeoutMs),
      parts.log,
    );
    this.follower = parts.follow({
      apply: (record) => this.apply(record),
      applied: () => this.applied(),
      failed: (error) => this.stopped(error),
    });
  }

  mint(contentDigest: Buffer, { partitionKey }: MintOptions = {}): ContentKey {
    if (contentDigest.length !== CONTENT_DIGEST_BYTES)
      throw new RangeError(`a content digest is ${CONTENT_DIGEST_BYTES} bytes, got ${contentDigest.length}`);
    const { random, facts } = this.parts;
    // The report's event partition (same count, same partitioner), led by the same broker (key-topic.ts).
    const partition =
      partitionKey === undefined
        ? random(2).readUInt16BE(0) % facts.partitions
        : partitionOfKey(partitionKey, facts.partitions);
    return {
      id: mintKeyId(partition, random),
      secret: random(CONTENT_KEY_BYTES),
      contentDigest: Buffer.from(contentDigest),
    };
  }

  async put(keys: readonly ContentKey[], { timeoutMs }: KeyWriteOptions = {}): Promise<void> {
    this.checkOpen();
    keys.forEach(checkContentKey);
    if (keys.length > 0)
      await this.write(
        putWrite(keys, (key) => keyIdText(key.id)),
        timeoutMs,
      );
  }

  async destroy(ids: readonly KeyId[], { timeoutMs }: KeyWriteOptions = {}): Promise<void> {
    this.checkOpen();
    ids.forEach(checkKeyId);
    if (ids.length > 0) await this.write({ kind: 'destroy', idTexts: ids.map(keyIdText) }, timeoutMs);
  }

  async get(id: KeyId): Promise<ContentKey | undefined> {
    this.checkOpen();
    const idText = keyIdText(id);
    const held = this.memory.get(idText);
    if (held !== undefined) return held;
    // Another instance may have just put it: read up to its partition's head, then look again.
    await this.follower.catchUp([this.partitionOf(idText)], this.parts.writeTimeoutMs);
    return this.memory.get(idText);
  }

  async lookup({ fresh = true }: LookupOptions = {}): Promise<KeyLookup> {
    this.checkOpen();
    if (fresh) await this.follower.catchUp(this.allPartitions(), this.parts.writeTimeoutMs);
    return { get: (id) => this.memory.get(keyIdText(id)) };
  }

  stats(): KafkaKeyStoreStats {
    return { ...this.parts.counts, keys: this.memory.size };
  }

  brokerOutages(): number {
    return this.parts.brokers.outages;
  }

  heldIds(): IterableIterator<string> {
    return this.memory.ids();
  }

  /** Whether the key is in memory now, without reading the topic further (key-upkeep.ts). */
  heldInMemory(id: KeyId): boolean {
    return this.memory.has(keyIdText(id));
  }

  heldCount(): number {
    return this.memory.size;
  }

  /** The ids of the keys in memory now that `named` (ids as text) does not name (key-upkeep.ts sweepKeyTopic). */
  unnamedInMemory(named: Iterable<string>): Promise<string[]> {
    return this.memory.unnamed(named, () => yieldToEventLoop());
  }

  /** Reads every partition up to its head (the start); a follower that stopped says why (a refused topic). */
  async caughtUp(): Promise<void> {
    try {
      await this.follower.catchUp(this.allPartitions(), START_CATCH_UP_MS);
    } catch (error) {
      throw this.followFailure ?? error;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.rollRecords.stop();
    // A send stuck while the broker is away must not hold the shutdown forever.
    await settleWithin(this.parts.writeTimeoutMs, this.parts.lanes.idle());
    this.parts.deadlines.clear();
    await settleWithin(DISCONNECT_MS, this.parts.producer.disconnect());
    await this.follower.close();
    this.memory.clear();
  }

  private checkOpen(): void {
    if (this.closed) throw new LogUnavailableError('the key store is closed');
  }

  private allPartitions(): number[] {
    return [...Array(this.parts.facts.partitions).keys()];
  }

  private partitionOf(idText: string): number {
    return partitionOfKeyId(idText, this.parts.facts.partitions);
  }

  /** Writes to the lanes of the write's partitions; once all acknowledged, memory and the counts. */
  private async write(write: KeyWrite, timeoutMs: number | undefined): Promise<void> {
    const offsets = await this.parts.lanes.write(
      messagesOf(write, (idText) => this.partitionOf(idText)),
      timeoutMs,
    );
    this.memory.written([write], offsets, this.follower.position);
    if (write.kind === 'destroy') this.parts.counts.erasures += write.idTexts.length;
    if (write.kind === 'roll') this.parts.counts.rollRecords += write.partitions.length;
  }

  private apply(record: LogRecord): void {
    const { partition, offset } = record.position;
    const kind = this.memory.apply(record);
    this.rolls.seen(partition, record.timestampMs, kind === 'destroyed');
    if (kind === 'unreadable')
      this.parts.log.warn(
        { partition, offset },
        'skipped a record of the key topic that is not a key this version reads',
      );
  }

  /** After a fetched batch: fences the follower has passed go, and roll records are scheduled. */
  private applied(): void {
    this.memory.passed(this.follower.position);
    this.rollRecords.schedule();
  }

  private stopped(error: Error): void {
    this.followFailure = error;
    this.parts.log.error({ err: error }, 'stopped following the key topic: keys can no longer be read');
  }
}
