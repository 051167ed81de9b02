// The key store that goes with the event log the configuration chose: the embedded log keeps its
// keys itself (keys.db beside events.log, under its lock); on Kafka, the key topic beside the event topic.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { hasKeyCarrier } from '../log/capabilities.js';
import type { EventLog } from '../log/event-log.js';
import type { KeyStore } from './key-store.js';

export async function openKeyStore(log: EventLog, config: Config, logger: Logger): Promise<KeyStore> {
  if (hasKeyCarrier(log)) return log.keyStore();
  if (!config.kafka) throw new Error(`${log.description} keeps no content keys, and no key store goes with it`);
  // Loaded only when used, as the Kafka log is.
  const { openKafkaKeyStore } = await import('./kafka-key-store.js');
  return openKafkaKeyStore({ config: config.kafka, logger, writeTimeoutMs: config.writeTimeoutMs, maxPendingWrites: config.maxPendingAppends });
}
