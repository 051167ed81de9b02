// The Kafka adapter of the event log (kafkajs). Idempotent producer with acks=-1; appends go out
// in one lane per partition (partition-lanes.ts), and those waiting for a lane at the same moment
// in one produce request; the message key is the report id, so all events of one report share a
// partition and keep their order.
import type { Admin, Kafka, Message, Producer } from 'kafkajs';
import type { Logger } from 'pino';
import { CLOUDEVENTS_CONTENT_TYPE } from '../../../projections/events.js';
import type { KafkaConfig } from '../../config.js';
import { createKafkaClient, describeStartError } from './client.js';
import { createFastClient, createProducer } from './producer.js';
import type { RenewingProducer } from './renewing-producer.js';
import { groupBySize, maxRecordBytes } from './record-size.js';
import { KafkaHealth } from './health.js';
import { BrokerReachability } from './brokers.js';
import { startKafkaProbe } from './probe.js';
import { WriteHealth } from './write-health.js';
import { misplaced } from './partition-count.js';
import {
  CommitListeners,
  type BrokerFigures,
  type CommitFeed,
  type CommitListener,
  type KeyedHeads,
} from '../capabilities.js';
import {
  cursorReached,
  LogRefusingWritesError,
  LogUnavailableError,
  payloadBytes,
  RecordTooLargeError,
  type AppendOptions,
  type Cursor,
  type EventLog,
  type LogHealth,
  type LogMessage,
  type LogStats,
  type LogPosition,
  type LogRecord,
  type ReadOptions,
} from '../event-log.js';
import { partitionOfKey } from './key-partition.js';
import { followTopicBatches, isGap, recordRuns, type FollowItem } from './follow.js';
import { singleRecordBatches } from '../record-batches.js';
import { settleWithin } from '../settle-within.js';
import { DISCONNECT_MS } from './disconnect.js';
import { PartitionLanes } from './partition-lanes.js';
import { PartitionHeads } from './partition-heads.js';
import { answered, ProduceCoalescer } from './produce-coalescer.js';
import { ensureTopic } from './topic.js';

export interface KafkaLogOptions {
  readonly config: KafkaConfig;
  readonly logger: Logger;
  /** Bounds each produce request; a send that cannot finish in time fails and is retried by the producer. */
  readonly writeTimeoutMs: number;
  /** How often the broker is probed for /readyz and the head offsets. */
  readonly probeIntervalMs?: number;
  /** Create the topic when missing (the server); tools that only read pass false. */
  readonly createTopic?: boolean;
  /** Only read (the tools that print, verify or copy from the topic): no producer is opened, appends are refused. */
  readonly readOnly?: boolean;
  /** Appends allowed to wait for the next produce request (REPORTS_MAX_PENDING_APPENDS). */
  readonly maxPendingAppends?: number;
}

/** Other instances write to the topic too (KeyedHeads); this one's appends are handed over in memory (CommitFeed). */
export type KafkaEventLog = EventLog & KeyedHeads & CommitFeed;

export async function openKafkaLog({
  config,
  logger,
  writeTimeoutMs,
  probeIntervalMs = 2000,
  createTopic = true,
  readOnly = false,
  maxPendingAppends,
}: KafkaLogOptions): Promise<KafkaEventLog> {
  const brokers = new BrokerReachability(logger);
  const kafka = createKafkaClient(config, logger, { brokers });
  const admin = kafka.admin();
  const fastClient = createFastClient(config, logger, brokers, writeTimeoutMs);
  const { producer, produceTimeoutMs } = readOnly
    ? { producer: undefined, produceTimeoutMs: 0 }
    : createProducer(fastClient, writeTimeoutMs, { prepare: (created) => brokers.watch(created), logger });
  brokers.watch(admin);
  try {
    await admin.connect();
    const { partitions, maxMessageBytes, minInsyncReplicas, warnings } = await ensureTopic(admin, config, createTopic);
    for (const warning of warnings) logger.warn({ topic: config.topic }, warning);
    await producer?.connect();
    logger.info(
      { topic: config.topic, partitions, maxMessageBytes, brokers: config.brokers },
      'opened the Kafka event log',
    );
    const { clusterId } = await admin.describeCluster();
    const writes = new WriteHealth(partitions, Math.min(STUCK_AFTER_MS, writeTimeoutMs), minInsyncReplicas);
    const heads = new PartitionHeads({
      kafka: fastClient,
      topic: config.topic,
      partitions,
      brokers,
      minInsyncReplicas,
      ...(maxPendingAppends === undefined ? {} : { maxPending: maxPendingAppends }),
    });
    if (!readOnly) heads.warm();
    const log = new KafkaLog({
      fastClient,
      clientOf: (broker) => createKafkaClient({ ...config, brokers: [broker] }, logger, { brokers }),
      admin,
      producer,
      config,
      partitions,
      limits: {
        produceTimeoutMs,
        writeTimeoutMs,
        maxMessageBytes,
        ...(maxPendingAppends === undefined ? {} : { maxPendingAppends }),
      },
      health: new KafkaHealth(logger, config.topic, writes),
      heads,
      brokers,
      identity: `kafka:${clusterId}/${config.topic}`,
    });
    log.startProbe(probeIntervalMs);
    return log;
  } catch (error) {
    if (producer) await settleWithin(DISCONNECT_MS, producer.disconnect());
    await settleWithin(DISCONNECT_MS, admin.disconnect());
    throw describeStartError(error, config);
  }
}

/** A produce request out longer than this (or the write timeout, if shorter) counts as stuck for readiness. */
const STUCK_AFTER_MS = 2500;

interface KafkaLogLimits {
  /** How long the broker may hold a produce request for the replicas' acknowledgements. */
  readonly produceTimeoutMs: number;
  readonly writeTimeoutMs: number;
  readonly maxMessageBytes: number;
  readonly maxPendingAppends?: number;
}

interface KafkaLogParts {
  /** The producer's and the follower's client (requests that time out sooner than the admin's). */
  readonly fastClient: Kafka;
  /** A client of one broker alone (same security settings), for asking whether it is back. */
  readonly clientOf: (broker: string) => Kafka;
  readonly admin: Admin;
  readonly producer: RenewingProducer<Producer> | undefined;
  readonly config: KafkaConfig;
  readonly partitions: number;
  readonly limits: KafkaLogLimits;
  readonly health: KafkaHealth;
  /** Each partition's head, from its leader alone (what `latest` waits for). */
  readonly heads: PartitionHeads;
  readonly brokers: BrokerReachability;
  readonly identity: string;
}

class KafkaLog implements EventLog, KeyedHeads, CommitFeed, BrokerFigures {
  readonly description: string;
  readonly identity: string;
  readonly maxRecordBytes: number;
  private readonly lanes: PartitionLanes;
  /** The head for `latest`: one offsets request per round trip, not one per no-write answer. */
  private stopProbe: () => void = () => undefined;
  private closed = false;
  private appendCount = 0;
  private produceCount = 0;
  private readonly committed = new CommitListeners();
  private readonly coalescer: ProduceCoalescer;

  constructor(private readonly parts: KafkaLogParts) {
    const { config, partitions, limits } = parts;
    this.identity = parts.identity;
    this.description = `kafka:${config.topic}@${config.brokers.join(',')}`;
    this.maxRecordBytes = maxRecordBytes(limits.maxMessageBytes);
    // An append's messages of one partition always travel in one produce request; appends go in as
    // few requests as the topic's max.message.bytes allows (it bounds a partition's batch).
    // Partitions with the same leader share a produce request (unknown leader: alone).
    this.coalescer = new ProduceCoalescer(
      (byPartition) => this.produce(byPartition),
      (partition) => parts.heads.leaderOf(partition) ?? -1 - partition,
    );
    this.lanes = new PartitionLanes({
      partitions,
      partitionOf: ({ key }) => partitionOfKey(key, partitions),
      flush: async (partition, appends) => {
        const results: LogPosition[][] = [];
        for (const group of groupBySize(appends, limits.maxMessageBytes)) {
          const positions = await this.coalescer.produce(partition, group.flat());
          let next = 0;
          for (const messages of group) results.push(positions.slice(next, (next += messages.length)));
        }
        return results;
      },
      ...(limits.maxPendingAppends === undefined ? {} : { maxPendingPerLane: limits.maxPendingAppends }),
    });
  }

  startProbe(intervalMs: number): void {
    this.stopProbe = startKafkaProbe({
      admin: this.parts.admin,
      topic: this.parts.config.topic,
      partitions: this.parts.partitions,
      health: this.parts.health,
      head: () => this.head(),
      intervalMs,
      brokers: this.parts.brokers,
      clientOf: this.parts.clientOf,
    });
  }

  stats(): LogStats {
    return { appends: this.appendCount, flushes: this.produceCount };
  }

  health(): LogHealth {
    if (this.closed) return { available: false, reason: 'the event log is closed' };
    return this.parts.health.current();
  }

  partitionFor(key: string): number {
    return partitionOfKey(key, this.parts.partitions);
  }

  async append(messages: readonly LogMessage[], options: AppendOptions = {}): Promise<LogPosition[]> {
    if (this.closed) throw new LogUnavailableError('the event log is closed');
    this.parts.health.checkWritable();
    if (messages.length === 0) return [];
    const size = messages.reduce((sum, message) => sum + payloadBytes(message), 0);
    if (size > this.maxRecordBytes) throw new RecordTooLargeError(this.maxRecordBytes, size);
    return this.lanes.add(messages, options);
  }

  onCommit(listener: CommitListener): () => void {
    return this.committed.add(listener);
  }

  /** One produce request of each partition's messages; per partition, the offsets the broker gave them (or why not). */
  private async produce(
    byPartition: ReadonlyMap<number, readonly LogMessage[]>,
  ): Promise<Map<number, LogPosition[] | Error>> {
    // Set here, so a record handed over in memory carries the timestamp Kafka stores (CreateTime, the default).
    const timestampMs = Date.now();
    const timestamp = String(timestampMs);
    const kafkaMessages: Message[] = [];
    for (const [partition, messages] of byPartition)
      for (const { key, value } of messages)
        kafkaMessages.push({ key, value, timestamp, partition, headers: { 'content-type': CLOUDEVENTS_CONTENT_TYPE } });
    if (this.parts.producer === undefined)
      throw new LogRefusingWritesError('this Kafka event log was opened read-only');
    // The write health measures durations: on the monotonic clock, never the records' wall-clock time.
    const [writes, sentMs] = [this.parts.health.writes, performance.now()];
    for (const partition of byPartition.keys()) writes.sent(partition, sentMs);
    const metadata = await this.parts.producer
      .send({
        topic: this.parts.config.topic,
        acks: -1,
        timeout: this.parts.limits.produceTimeoutMs,
        messages: kafkaMessages,
      })
      .catch((error: unknown) => {
        for (const partition of byPartition.keys()) writes.settled(partition, false, performance.now());
        throw this.parts.health.failed(error);
      });
    const answeredMs = performance.now();
    for (const partition of byPartition.keys()) writes.settled(partition, true, answeredMs);
    this.produceCount += 1;
    this.appendCount += kafkaMessages.length;
    const { results, records } = answered(byPartition, metadata, timestampMs);
    if (records.length > 0) this.committed.notify(() => records);
    return results;
  }

  brokerOutages(): number {
    return this.parts.brokers.outages;
  }

  async latest(key: string): Promise<Cursor> {
    const partition = partitionOfKey(key, this.parts.partitions);
    try {
      return new Map([[partition, await this.parts.heads.head(partition)]]);
    } catch (error) {
      throw this.parts.health.failed(error);
    }
  }

  async head(): Promise<Cursor> {
    try {
      const offsets = await this.parts.admin.fetchTopicOffsets(this.parts.config.topic);
      return new Map(offsets.map(({ partition, high }) => [partition, Number(high)]));
    } catch (error) {
      throw this.parts.health.failed(error);
    }
  }

  /** The records up to the head seen at the start, one at a time (fetches deliver them so). */
  private async *records(from: Cursor, options: ReadOptions): AsyncIterable<LogRecord> {
    const end = await this.head();
    const cursor = new Map(from);
    if (cursorReached(cursor, end)) return;
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for await (const item of this.items(from, stop.signal)) {
        if (isGap(item)) {
          options.onGap?.(item);
          cursor.set(item.partition, item.next);
        } else {
          const { partition, offset } = item.position;
          if (offset >= (end.get(partition) ?? 0)) continue;
          yield item;
          cursor.set(partition, offset + 1);
        }
        if (cursorReached(cursor, end)) break;
      }
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
      stop.abort();
    }
  }

  readBatches(from: Cursor, options: ReadOptions = {}): AsyncIterable<readonly LogRecord[]> {
    return singleRecordBatches(this.records(from, options));
  }

  followBatches(from: Cursor, options: ReadOptions = {}): AsyncIterable<readonly LogRecord[]> {
    return recordRuns(this.itemBatches(from, options.signal), options.onGap);
  }

  private async *items(from: Cursor, signal: AbortSignal | undefined): AsyncIterable<FollowItem> {
    for await (const items of this.itemBatches(from, signal)) yield* items;
  }

  /** Every record is checked to lie in the partition its key belongs to (else writes are refused). */
  private async *itemBatches(from: Cursor, signal: AbortSignal | undefined): AsyncIterable<readonly FollowItem[]> {
    for await (const items of this.topicBatches(from, signal)) {
      for (const item of items)
        if (!isGap(item))
          this.parts.health.refuseWrites(misplaced(this.parts.config.topic, item, this.partitionFor(item.key)));
      yield items;
    }
  }

  private topicBatches(from: Cursor, signal: AbortSignal | undefined): AsyncIterable<readonly FollowItem[]> {
    const { fastClient: kafka, config, partitions, brokers } = this.parts;
    return followTopicBatches({ kafka, topic: config.topic, partitions, brokers, from, ...(signal ? { signal } : {}) });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopProbe();
    // A send stuck while the broker is down must not hold the shutdown forever.
    await settleWithin(this.parts.limits.writeTimeoutMs, this.lanes.idle());
    if (this.parts.producer) await settleWithin(DISCONNECT_MS, this.parts.producer.disconnect());
    await this.parts.heads.close();
    await settleWithin(DISCONNECT_MS, this.parts.admin.disconnect());
  }
}
