// Key stores on the test broker: each on a key topic of its own unless one is given (several
// instances share one), with the configuration the service would load.
import { createHash } from 'node:crypto';
import { loadConfig, type Env, type KafkaConfig } from '../../src/config.js';
import { openKafkaKeyStore, type KafkaKeyStore, type KafkaKeyStoreOptions } from '../../src/keys/kafka-key-store.js';
import { openWhenKafkaAnswers } from '../../src/log/kafka/start-retry.js';
import { kafkaEnv, uniqueTopic } from './kafka.js';
import { memoryLogger } from './server.js';

export function keyStoreConfig(brokers: string, keyTopic: string, env: Env = {}): KafkaConfig {
  return loadConfig(kafkaEnv(brokers, `${keyTopic}.events`, { REPORTS_KEY_TOPIC: keyTopic, ...env }))
    .kafka as KafkaConfig;
}

export interface TestKeyStore {
  readonly store: KafkaKeyStore;
  /** Everything the store logged, as text. */
  readonly logText: () => string;
}

export async function openTestKeyStore(
  brokers: string,
  keyTopic = uniqueTopic('keys'),
  env: Env = {},
  options: Partial<KafkaKeyStoreOptions> = {},
): Promise<TestKeyStore> {
  const { logger, text } = memoryLogger();
  // As the service opens it (open-key-store.ts): a topic just created may not be hosted yet by a
  // loaded broker ("does not host this topic-partition", seen in CI), which the start waits out.
  const store = await openWhenKafkaAnswers(
    () =>
      openKafkaKeyStore({ config: keyStoreConfig(brokers, keyTopic, env), logger, writeTimeoutMs: 5000, ...options }),
    { timeoutMs: 15_000, logger, brokers: [brokers], what: `the key topic ${keyTopic}` },
  );
  return { store, logText: text };
}

/** A content digest as the service makes them (SHA-256 of the content's bytes). */
export function digestOf(content: string): Buffer {
  return createHash('sha256').update(content).digest();
}
