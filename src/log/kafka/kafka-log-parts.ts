// What an opened Kafka event log is made of (opened-kafka-log.ts): its clients, the topic's facts
// and limits, its health and heads. openKafkaLog (kafka-log.ts) builds them; the log and its read
// side (kafka-log-reads.ts) use them.
import type { Admin, Kafka, Producer } from 'kafkajs';
import type { KafkaConfig } from '../../config.js';
import type { BrokerReachability } from './brokers.js';
import type { KafkaHealth } from './health.js';
import type { PartitionHeads } from './partition-heads.js';
import type { RenewingProducer } from './renewing-producer.js';

export interface KafkaLogLimits {
  /** How long the broker may hold a produce request for the replicas' acknowledgements. */
  readonly produceTimeoutMs: number;
  readonly writeTimeoutMs: number;
  readonly maxMessageBytes: number;
  readonly maxPendingAppends?: number;
}

export interface KafkaLogParts {
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
