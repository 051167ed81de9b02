// Writes histories straight into a Kafka topic (openKafkaLog), for what one server never writes:
// void events from racing instances, records that are not events, a prefix copied by hand.
import { loadConfig } from '../../src/config.js';
import type { LogPosition } from '../../src/log/event-log.js';
import { openKafkaLog } from '../../src/log/kafka/kafka-log.js';
import { message, type Entry } from './file-history.js';
import { kafkaEnv } from './kafka.js';
import { memoryLogger } from './server.js';

/** Appends `entries` to `topic` (created if missing) and returns their positions. */
export async function appendToTopic(
  brokers: string,
  topic: string,
  entries: readonly Entry[],
  env: Record<string, string> = {},
): Promise<LogPosition[]> {
  const { kafka } = loadConfig(kafkaEnv(brokers, topic, env));
  if (!kafka) throw new Error('kafkaEnv gave no Kafka configuration');
  const log = await openKafkaLog({ config: kafka, logger: memoryLogger().logger, writeTimeoutMs: 10_000 });
  try {
    return await log.append(entries.map(message));
  } finally {
    await log.close();
  }
}
