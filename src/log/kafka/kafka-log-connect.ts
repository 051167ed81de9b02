// The connecting steps of openKafkaLog (kafka-log.ts), in their order: the admin, the topic's check
// (created when missing and asked for), the producer, then the cluster's id. Closing what was
// connected when a step fails is the caller's.
import type { Admin, Producer } from 'kafkajs';
import type { Logger } from 'pino';
import type { KafkaConfig } from '../../config.js';
import type { RenewingProducer } from './renewing-producer.js';
import { ensureTopic, type TopicFacts } from './topic.js';

export interface KafkaLogConnection {
  readonly admin: Admin;
  readonly producer: RenewingProducer<Producer> | undefined;
  readonly config: KafkaConfig;
  readonly logger: Logger;
  readonly createTopic: boolean;
}

export interface ConnectedTopic extends Omit<TopicFacts, 'warnings'> {
  readonly clusterId: string;
}

export async function connectKafkaLog({
  admin,
  producer,
  config,
  logger,
  createTopic,
}: KafkaLogConnection): Promise<ConnectedTopic> {
  await admin.connect();
  const { partitions, maxMessageBytes, minInsyncReplicas, warnings } = await ensureTopic(admin, config, createTopic);
  for (const warning of warnings) logger.warn({ topic: config.topic }, warning);
  await producer?.connect();
  logger.info(
    { topic: config.topic, partitions, maxMessageBytes, brokers: config.brokers },
    'opened the Kafka event log',
  );
  const { clusterId } = await admin.describeCluster();
  return { partitions, maxMessageBytes, minInsyncReplicas, clusterId };
}
