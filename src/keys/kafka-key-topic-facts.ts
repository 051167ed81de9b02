// The key topic as a Kafka key store finds it at start (key-topic.ts checks it): on an admin client
// of its own, disconnected before the store's clients are made, whether the check passed or not.
import type { Logger } from 'pino';
import type { KafkaConfig } from '../config.js';
import type { BrokerReachability } from '../log/kafka/brokers.js';
import { createKafkaClient, describeStartError } from '../log/kafka/client.js';
import { ensureKeyTopic, type KeyTopicFacts } from '../log/kafka/key-topic.js';
import { settleWithin } from '../log/settle-within.js';
import { DISCONNECT_MS } from '../log/kafka/disconnect.js';

/**
 * The key topic's facts, created first when missing and `createTopic` (unless `firstSealed` finds a
 * sealed create in the event topic: key-topic.ts KeyTopicLostError); its warnings are logged.
 */
export async function keyTopicFactsAtStart(
  config: KafkaConfig,
  log: Logger,
  brokers: BrokerReachability,
  createTopic: boolean,
  firstSealed?: () => Promise<string | undefined>,
): Promise<KeyTopicFacts> {
  const admin = createKafkaClient(config, log, { brokers }).admin();
  let facts: KeyTopicFacts;
  try {
    await admin.connect();
    facts = await ensureKeyTopic(admin, config, createTopic, firstSealed);
  } catch (error) {
    throw describeStartError(error, config);
  } finally {
    await settleWithin(DISCONNECT_MS, admin.disconnect());
  }
  for (const warning of facts.warnings) log.warn(warning);
  return facts;
}
