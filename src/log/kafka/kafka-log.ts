// The Kafka adapter of the event log (kafkajs). Idempotent producer with acks=-1; appends go out
// in one lane per partition (partition-lanes.ts), and those waiting for a lane at the same moment
// in one produce request; the message key is the report id, so all events of one report share a
// partition and keep their order.
// Here are its options and its open; the connecting steps are kafka-log-connect.ts's, the opened
// log opened-kafka-log.ts's (its parts kafka-log-parts.ts's, its read side kafka-log-reads.ts's).
import type { Logger } from 'pino';
import type { KafkaConfig } from '../../config.js';
import { createKafkaClient, describeStartError } from './client.js';
import { createFastClient, createProducer } from './producer.js';
import { KafkaHealth } from './health.js';
import { BrokerReachability } from './brokers.js';
import { WriteHealth } from './write-health.js';
import type { CommitFeed, KeyedHeads } from '../capabilities.js';
import type { EventLog } from '../event-log.js';
import { settleWithin } from '../settle-within.js';
import { DISCONNECT_MS } from './disconnect.js';
import { PartitionHeads } from './partition-heads.js';
import { connectKafkaLog } from './kafka-log-connect.js';
import { KafkaLog } from './opened-kafka-log.js';

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
    const { partitions, maxMessageBytes, minInsyncReplicas, clusterId } = await connectKafkaLog({
      admin,
      producer,
      config,
      logger,
      createTopic,
    });
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
