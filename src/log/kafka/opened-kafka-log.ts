// The Kafka event log once opened (kafka-log.ts opens it): appends go out in one lane per
// partition, those waiting at the same moment in one produce request per leader; its read side is
// kafka-log-reads.ts's.
import type { Message } from 'kafkajs';
import { CLOUDEVENTS_CONTENT_TYPE } from '../../../projections/events.js';
import { groupBySize, maxRecordBytes } from './record-size.js';
import { startKafkaProbe } from './probe.js';
import {
  CommitListeners,
  type BrokerFigures,
  type CommitFeed,
  type CommitListener,
  type KeyedHeads,
} from '../capabilities.js';
import {
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
import { recordRuns } from './follow.js';
import { singleRecordBatches } from '../record-batches.js';
import { settleWithin } from '../settle-within.js';
import { DISCONNECT_MS } from './disconnect.js';
import { PartitionLanes } from './partition-lanes.js';
import { answered, ProduceCoalescer } from './produce-coalescer.js';
import type { KafkaLogParts } from './kafka-log-parts.js';
import { itemBatches, recordsToHead, topicHead } from './kafka-log-reads.js';

export class KafkaLog implements EventLog, KeyedHeads, CommitFeed, BrokerFigures {
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
      leadersAnswer: () => this.parts.heads.allHeads(),
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

  head(): Promise<Cursor> {
    return topicHead(this.parts);
  }

  readBatches(from: Cursor, options: ReadOptions = {}): AsyncIterable<readonly LogRecord[]> {
    return singleRecordBatches(recordsToHead(this.parts, from, options));
  }

  followBatches(from: Cursor, options: ReadOptions = {}): AsyncIterable<readonly LogRecord[]> {
    return recordRuns(itemBatches(this.parts, from, options.signal), options.onGap);
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
