// The Kafka adapter of the event log (kafkajs). Idempotent producer with acks=-1; appends waiting
// at the same moment go out in one produce request; the message key is the report id, so all
// events of one report share a partition and keep their order.
// kafkajs is CommonJS; Node cannot see all of its named exports from ESM, so take the default.
import kafkajs, { type Admin, type Kafka, type Message, type Producer } from 'kafkajs';
import type { Logger } from 'pino';
import { CLOUDEVENTS_CONTENT_TYPE } from '../../projections/events.js';
import type { KafkaConfig } from '../config.js';
import { Batcher, sharedRead } from './batcher.js';
import { createKafkaClient, describeStartError } from './kafka-client.js';
import { ProbeSilenceError } from './kafka-errors.js';
import { groupBySize, maxRecordBytes } from './kafka-record-size.js';
import { KafkaHealth } from './kafka-health.js';
import { countChanged, misplaced } from './kafka-partitions.js';
import { cursorReached, LogUnavailableError, payloadBytes, RecordTooLargeError, CommitListeners, type AppendOptions, type CommitListener, type Cursor, type EventLog, type LogHealth, type LogMessage, type LogStats, type LogPosition, type LogRecord, type ReadOptions } from './event-log.js';
import { partitionOfKey } from './kafka-partition.js';
import { followTopicBatches, isGap, recordRuns, type FollowItem } from './kafka-follow.js';
import { singleRecordBatches } from './record-batches.js';
import { DISCONNECT_MS, settleWithin } from './settle-within.js';
import { ensureTopic } from './kafka-topic.js';

export interface KafkaLogOptions {
  readonly config: KafkaConfig;
  readonly logger: Logger;
  /** Bounds each produce request; a send that cannot finish in time fails and is retried by the producer. */
  readonly writeTimeoutMs: number;
  /** How often the broker is probed for /readyz and the head offsets. */
  readonly probeIntervalMs?: number;
  /** Create the topic when missing (the server); tools that only read pass false. */
  readonly createTopic?: boolean;
  /** Appends allowed to wait for the next produce request (REPORTS_MAX_PENDING_APPENDS). */
  readonly maxPendingAppends?: number;
}

const { Partitioners } = kafkajs;

export async function openKafkaLog({ config, logger, writeTimeoutMs, probeIntervalMs = 2000, createTopic = true, maxPendingAppends }: KafkaLogOptions): Promise<EventLog> {
  const kafka = createKafkaClient(config, logger);
  const admin = kafka.admin();
  // Unlimited retries are what makes the idempotent producer safe; a request that gives up first
  // answers 503 and its message, if not yet sent, is dropped by the batcher.
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    createPartitioner: Partitioners.DefaultPartitioner,
    retry: { retries: Number.MAX_SAFE_INTEGER, initialRetryTime: 200, maxRetryTime: 2000 },
  });
  try {
    await admin.connect();
    const { partitions, maxMessageBytes, warnings } = await ensureTopic(admin, config, createTopic);
    for (const warning of warnings) logger.warn({ topic: config.topic }, warning);
    await producer.connect();
    logger.info({ topic: config.topic, partitions, maxMessageBytes, brokers: config.brokers }, 'opened the Kafka event log');
    const { clusterId } = await admin.describeCluster();
    const limits = { writeTimeoutMs, maxMessageBytes, ...(maxPendingAppends === undefined ? {} : { maxPendingAppends }) };
    const log = new KafkaLog(kafka, admin, producer, config, partitions, limits, logger, `kafka:${clusterId}/${config.topic}`);
    log.startProbe(probeIntervalMs);
    return log;
  } catch (error) {
    await settleWithin(DISCONNECT_MS, producer.disconnect());
    await settleWithin(DISCONNECT_MS, admin.disconnect());
    throw describeStartError(error, config);
  }
}

interface KafkaLogLimits {
  readonly writeTimeoutMs: number;
  readonly maxMessageBytes: number;
  readonly maxPendingAppends?: number;
}

class KafkaLog implements EventLog {
  readonly description: string;
  readonly maxRecordBytes: number;
  private readonly writeTimeoutMs: number;
  private readonly batcher: Batcher<readonly LogMessage[], LogPosition[]>;
  /** The head for `latest`: one offsets request per round trip, not one per no-write answer. */
  private readonly sharedHead: () => Promise<Cursor>;
  private readonly status: KafkaHealth;
  private probe: NodeJS.Timeout | undefined;
  private closed = false;
  private appendCount = 0;
  private produceCount = 0;
  private readonly committed = new CommitListeners();

  constructor(
    private readonly kafka: Kafka,
    private readonly admin: Admin,
    private readonly producer: Producer,
    private readonly config: KafkaConfig,
    private readonly partitions: number,
    limits: KafkaLogLimits,
    logger: Logger,
    readonly identity: string,
  ) {
    this.description = `kafka:${config.topic}@${config.brokers.join(',')}`;
    this.status = new KafkaHealth(logger, config.topic);
    this.writeTimeoutMs = limits.writeTimeoutMs;
    this.maxRecordBytes = maxRecordBytes(limits.maxMessageBytes);
    // One item per append, so an append's messages always travel in one produce request; appends
    // go in as few requests as the topic's max.message.bytes allows (it bounds a whole batch).
    this.batcher = new Batcher(
      async (appends) => {
        const results: LogPosition[][] = [];
        for (const group of groupBySize(appends, limits.maxMessageBytes)) {
          const positions = await this.produce(group.flat());
          let next = 0;
          for (const messages of group) results.push(positions.slice(next, (next += messages.length)));
        }
        return results;
      },
      limits.maxPendingAppends === undefined ? {} : { maxPending: limits.maxPendingAppends },
    );
    this.sharedHead = sharedRead(() => this.head(), limits.maxPendingAppends === undefined ? {} : { maxPending: limits.maxPendingAppends });
  }

  startProbe(intervalMs: number): void {
    const check = async () => {
      // The client retries for several seconds before it gives up; a broker that does not answer
      // within the interval counts as unavailable now.
      let timer: NodeJS.Timeout | undefined;
      const silent = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new ProbeSilenceError(intervalMs)), intervalMs);
      });
      try {
        await Promise.race([Promise.all([this.head(), this.checkPartitionCount()]), silent]);
      } catch (error) {
        // head() records its own failures; a silent broker is recorded here.
        if (error instanceof ProbeSilenceError) this.status.unreachable(error);
      } finally {
        clearTimeout(timer);
      }
      if (!this.closed) this.probe = setTimeout(() => void check(), intervalMs);
    };
    // check() catches every failure itself: nothing is lost by not awaiting it.
    this.probe = setTimeout(() => void check(), intervalMs);
  }

  stats(): LogStats {
    return { appends: this.appendCount, flushes: this.produceCount };
  }

  health(): LogHealth {
    if (this.closed) return { available: false, reason: 'the event log is closed' };
    return this.status.current();
  }

  partitionFor(key: string): number {
    return partitionOfKey(key, this.partitions);
  }

  private async checkPartitionCount(): Promise<void> {
    const metadata = await this.admin.fetchTopicMetadata({ topics: [this.config.topic] });
    this.status.refuseWrites(countChanged(this.config.topic, this.partitions, metadata.topics[0]?.partitions.length ?? this.partitions));
  }

  async append(messages: readonly LogMessage[], options: AppendOptions = {}): Promise<LogPosition[]> {
    if (this.closed) throw new LogUnavailableError('the event log is closed');
    this.status.checkWritable();
    if (messages.length === 0) return [];
    const size = messages.reduce((sum, message) => sum + payloadBytes(message), 0);
    if (size > this.maxRecordBytes) throw new RecordTooLargeError(this.maxRecordBytes, size);
    return this.batcher.add(messages, options.signal, options.timeoutMs);
  }

  onCommit(listener: CommitListener): () => void {
    return this.committed.add(listener);
  }

  private async produce(messages: LogMessage[]): Promise<LogPosition[]> {
    // Set here, so a record handed over in memory carries the timestamp Kafka stores (CreateTime, the default).
    const timestampMs = Date.now();
    const timestamp = String(timestampMs);
    const kafkaMessages: Message[] = messages.map(({ key, value }) => {
      const message: Message = { key, value, timestamp, headers: { 'content-type': CLOUDEVENTS_CONTENT_TYPE } };
      // The partition is chosen here (Kafka's default partitioner) rather than by the producer, so
      // every message's offset can be matched to its partition's response.
      return { ...message, partition: partitionOfKey(key, this.partitions) };
    });
    let metadata;
    try {
      metadata = await this.producer.send({ topic: this.config.topic, acks: -1, timeout: this.writeTimeoutMs, messages: kafkaMessages });
    } catch (error) {
      throw this.status.failed(error);
    }
    this.status.answered();
    this.produceCount += 1;
    this.appendCount += messages.length;
    const nextOffset = new Map<number, number>();
    for (const entry of metadata) nextOffset.set(entry.partition, Number(entry.baseOffset ?? entry.offset));
    const positions = kafkaMessages.map(({ partition }) => {
      const offset = nextOffset.get(partition as number);
      if (offset === undefined || Number.isNaN(offset)) throw new LogUnavailableError(`Kafka did not report an offset for partition ${partition}`);
      nextOffset.set(partition as number, offset + 1);
      return { partition: partition as number, offset };
    });
    // Each partition's records are one batch with consecutive offsets, in the order sent.
    this.committed.notify(() => messages.map(({ key, value, event }, i): LogRecord => ({ key, value, event, timestampMs, position: positions[i] as LogPosition })));
    return positions;
  }

  async latest(key: string): Promise<Cursor> {
    const partition = partitionOfKey(key, this.partitions);
    const head = await this.sharedHead();
    return new Map([[partition, head.get(partition) ?? 0]]);
  }

  async head(): Promise<Cursor> {
    try {
      const offsets = await this.admin.fetchTopicOffsets(this.config.topic);
      this.status.answered();
      return new Map(offsets.map(({ partition, high }) => [partition, Number(high)]));
    } catch (error) {
      throw this.status.failed(error);
    }
  }

  async *read(from: Cursor, options: ReadOptions = {}): AsyncIterable<LogRecord> {
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
    return singleRecordBatches(this.read(from, options));
  }

  followBatches(from: Cursor, options: ReadOptions = {}): AsyncIterable<readonly LogRecord[]> {
    return recordRuns(this.itemBatches(from, options.signal), options.onGap);
  }

  async *follow(from: Cursor, options: ReadOptions = {}): AsyncIterable<LogRecord> {
    for await (const records of this.followBatches(from, options)) yield* records;
  }

  private async *items(from: Cursor, signal: AbortSignal | undefined): AsyncIterable<FollowItem> {
    for await (const items of this.itemBatches(from, signal)) yield* items;
  }

  /** Every record is checked to lie in the partition its key belongs to (else writes are refused). */
  private async *itemBatches(from: Cursor, signal: AbortSignal | undefined): AsyncIterable<readonly FollowItem[]> {
    for await (const items of this.topicBatches(from, signal)) {
      for (const item of items) if (!isGap(item)) this.status.refuseWrites(misplaced(this.config.topic, item, this.partitionFor(item.key)));
      yield items;
    }
  }

  private topicBatches(from: Cursor, signal: AbortSignal | undefined): AsyncIterable<readonly FollowItem[]> {
    return followTopicBatches({
      kafka: this.kafka,
      topic: this.config.topic,
      partitions: this.partitions,
      groupPrefix: `${this.config.clientId}-follow`,
      from,
      ...(signal ? { signal } : {}),
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.probe);
    // A send stuck while the broker is down must not hold the shutdown forever.
    await settleWithin(this.writeTimeoutMs, this.batcher.idle());
    await settleWithin(DISCONNECT_MS, this.producer.disconnect());
    await settleWithin(DISCONNECT_MS, this.admin.disconnect());
  }
}
