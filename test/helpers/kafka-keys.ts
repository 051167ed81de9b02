// Key stores on the test broker: each on a key topic of its own unless one is given (several
// instances share one), with the configuration the service would load.
import { createHash } from 'node:crypto';
import { loadConfig, type Env, type KafkaConfig } from '../../src/config.js';
import { openKafkaKeyStore, type KafkaKeyStore, type KafkaKeyStoreOptions } from '../../src/keys/kafka-key-store.js';
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
  const store = await openKafkaKeyStore({
    config: keyStoreConfig(brokers, keyTopic, env),
    logger,
    writeTimeoutMs: 5000,
    ...options,
  });
  return { store, logText: text };
}

/** A content digest as the service makes them (SHA-256 of the content's bytes). */
export function digestOf(content: string): Buffer {
  return createHash('sha256').update(content).digest();
}
