// Chooses the event log adapter from the configuration.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { EventLog } from './event-log.js';
import { openFileLog } from './file-log.js';

export async function openEventLog(config: Config, logger: Logger): Promise<EventLog> {
  if (config.kafka) {
    throw new Error('KAFKA_BROKERS is set, but the Kafka adapter is not built yet');
  }
  return openFileLog({ dir: config.dataDir, logger });
}
