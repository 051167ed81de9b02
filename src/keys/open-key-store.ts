// Chooses the key store that goes with the event log the configuration chose: keys.db in the data
// directory beside the embedded log, or the key topic beside Kafka's event topic.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { KeyStore } from './key-store.js';
import { openFileKeyStore } from './file-key-store.js';

export async function openKeyStore(config: Config, logger: Logger): Promise<KeyStore> {
  if (config.kafka) {
    // Loaded only when used, as the Kafka log is.
    const { openKafkaKeyStore } = await import('./kafka-key-store.js');
    return openKafkaKeyStore({ config: config.kafka, logger, writeTimeoutMs: config.writeTimeoutMs });
  }
  return openFileKeyStore({ dir: config.dataDir, logger, create: true });
}
