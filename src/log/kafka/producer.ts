// The producer as the service runs it: idempotent, acks=-1, unlimited retries, and timing that
// lets a partition whose leader stopped answering reach its new leader soon after the election.
// kafkajs is CommonJS; Node cannot see all of its named exports from ESM, so take the default.
import kafkajs, { type Kafka, type Producer } from 'kafkajs';
import type { Logger } from 'pino';
import type { KafkaConfig } from '../../config.js';
import type { BrokerReachability } from './brokers.js';
import { createKafkaClient, REQUEST_TIMEOUT_MS } from './client.js';
import { RenewingProducer } from './renewing-producer.js';
import { settleWithin } from '../settle-within.js';
import { DISCONNECT_MS } from './disconnect.js';

const { Partitioners } = kafkajs;

/**
 * When the producer gives up on a broker. kafkajs retries a request that timed out on the same
 * broker until its metadata is older than `metadataMaxAge` (5 minutes by default), so after a
 * leader paused, it went on sending to the paused broker while the partition had a new leader.
 * Here a request gets half the write timeout (the broker holds it for the replicas' acks for a
 * little less, so it answers before the client gives up) and the producer's metadata is at most a
 * second old when it sends or retries: a partition whose leader stopped answering reaches its new
 * leader within about one request timeout after the election.
 */
export function produceTiming(writeTimeoutMs: number): {
  requestTimeoutMs: number;
  produceTimeoutMs: number;
  metadataMaxAgeMs: number;
} {
  const requestTimeoutMs = Math.min(REQUEST_TIMEOUT_MS, Math.max(1000, Math.round(writeTimeoutMs / 2)));
  return { requestTimeoutMs, produceTimeoutMs: Math.round(requestTimeoutMs * 0.8), metadataMaxAgeMs: 1000 };
}

/**
 * The client of the producer and of the follower's fetches: its requests time out sooner than the
 * admin's (see produceTiming), so both give up on a silent leader and find the new one quickly.
 */
export function createFastClient(
  config: KafkaConfig,
  logger: Logger,
  brokers: BrokerReachability,
  writeTimeoutMs: number,
): Kafka {
  return createKafkaClient(config, logger, {
    brokers,
    requestTimeoutMs: produceTiming(writeTimeoutMs).requestTimeoutMs,
  });
}

/**
 * The producer, on the fast client, and how long a produce request may wait for the replicas. It is
 * replaced after a failed send (renewing-producer.ts); `prepare` is given each one before it
 * connects (to watch its brokers, count its requests).
 */
export function createProducer(
  fastClient: Kafka,
  writeTimeoutMs: number,
  { prepare, logger }: { prepare: (producer: Producer) => void; logger: Logger },
): { producer: RenewingProducer<Producer>; produceTimeoutMs: number } {
  const timing = produceTiming(writeTimeoutMs);
  const create = () => {
    const producer = fastClient.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      createPartitioner: Partitioners.DefaultPartitioner,
      metadataMaxAge: timing.metadataMaxAgeMs,
      // Unlimited retries are what makes the idempotent producer safe; a request that gives up first
      // answers 503 and its message, if not yet sent, is dropped by its lane.
      retry: { retries: Number.MAX_SAFE_INTEGER, initialRetryTime: 200, maxRetryTime: 2000 },
    });
    prepare(producer);
    return producer;
  };
  const onRenewed = (error: unknown) =>
    logger.warn(
      { err: error },
      'a produce request failed, and may have been written all the same: the next ones go out on a new producer, so that the broker cannot take them for duplicates of it',
    );
  return {
    producer: new RenewingProducer({
      create,
      onRenewed,
      disconnect: (producer) => settleWithin(DISCONNECT_MS, producer.disconnect()),
    }),
    produceTimeoutMs: timing.produceTimeoutMs,
  };
}
