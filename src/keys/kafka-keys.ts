// The Kafka key store once its parts are made (kafka-key-parts.ts): keys minted here, written
// through the lanes and applied to memory once acknowledged, read from memory (key-memory.ts) kept
// up to date by the follower, roll records scheduled after every batch it reads, and the close that
// undoes it all. kafka-key-store.ts opens it and reads the topic up to its head before handing it out.
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { CONTENT_KEY_BYTES } from '../../projections/sealing.js';
import { LogUnavailableError, type LogRecord } from '../log/event-log.js';
import { ROLL_MARGIN_MS, ROLL_SPREAD_MS, rollAfterMs } from '../log/kafka/key-topic-settings.js';
import { partitionOfKey } from '../log/kafka/key-partition.js';
import { settleWithin } from '../log/settle-within.js';
import { DISCONNECT_MS } from '../log/kafka/disconnect.js';
import type { KeyFollower } from './key-follower.js';
import { checkContentKey, CONTENT_DIGEST_BYTES, isHoldableKeyId } from './key-record.js';
import { KeyMemory } from './key-memory.js';
import { RollRecords } from './roll-records.js';
import { mintKeyId, partitionOfKeyId } from './kafka-key-ids.js';
import type { KafkaKeysParts } from './kafka-key-parts.js';
import type { KafkaKeyStore, KafkaKeyStoreStats } from './kafka-key-store-types.js';
import {
  keyIdText,
  type ContentKey,
  type KeyId,
  type KeyLookup,
  type LookupOptions,
  type KeyWriteOptions,
  type MintOptions,
} from './key-store.js';
import { messagesOf, putWrite, type KeyWrite } from './key-writes.js';
import { SegmentRolls } from './segment-rolls.js';

/** How long a start may take to read the key topic up to its head. */
const START_CATCH_UP_MS = 120_000;

export class KafkaKeys implements KafkaKeyStore {
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
    // An id no key store can hold (another producer's event may name one, and every instance then
    // asks for its destruction when the fold voids it) was never put: nothing to destroy. Refused,
    // it failed every erasure sent with it, and the background's retries carry them all together.
    const held = ids.filter(isHoldableKeyId);
    if (held.length > 0) await this.write({ kind: 'destroy', idTexts: held.map(keyIdText) }, timeoutMs);
  }

  writeGroupOf(id: KeyId): number {
    // An id no store holds is never written (destroy): a group of its own, confirmed at once.
    return isHoldableKeyId(id) ? this.partitionOf(keyIdText(id)) : -1;
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
    // No check of the topic list starts from here on (the writes failing as the store closes).
    const watchClosed = this.parts.topicWatch.close();
    // A send stuck while the broker is away must not hold the shutdown forever.
    await settleWithin(this.parts.writeTimeoutMs, this.parts.lanes.idle());
    this.parts.deadlines.clear();
    await settleWithin(DISCONNECT_MS, this.parts.producer.disconnect());
    await settleWithin(DISCONNECT_MS, watchClosed);
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
    let offsets: number[];
    try {
      offsets = await this.parts.lanes.write(
        messagesOf(write, (idText) => this.partitionOf(idText)),
        timeoutMs,
      );
    } catch (error) {
      this.parts.topicWatch.failed();
      throw error;
    }
    this.parts.topicWatch.written();
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
