// The log as the tools see it: on the file log a reader that may run beside the server (no lock);
// on Kafka the topic, which read-only tools never create.
import type { Logger } from 'pino';
import { pino } from 'pino';
import type { Config } from '../config.js';
import type { EventLog } from '../log/event-log.js';
import { openFileLogReader } from '../log/file/file-log-reader.js';
import type { CliIo } from './usage.js';
import type { KeyLookup } from '../keys/key-store.js';
import { readFileKeys } from '../keys/read-file-keys.js';

/** Tools print their results on stdout; their log lines (warnings and worse) go to stderr. */
export function toolLogger(io: CliIo, config: Config): Logger {
  return pino({ level: config.logLevel === 'info' ? 'warn' : config.logLevel, base: undefined }, io.stderr);
}

export async function openToolLog(config: Config, logger: Logger, { createTopic = false } = {}): Promise<EventLog> {
  if (config.kafka) {
    // Loaded only when used: the file log's tools do not pay for kafkajs at start.
    const { openKafkaLog } = await import('../log/kafka/kafka-log.js');
    return openKafkaLog({ config: config.kafka, logger, writeTimeoutMs: config.writeTimeoutMs, createTopic, readOnly: !createTopic, probeIntervalMs: 60_000 });
  }
  return openFileLogReader({ dir: config.dataDir, logger });
}

/**
 * The keys as the tools see them, for digests and for opening content: keys.db read beside the
 * server (nothing written), or the key topic read to its head (never created).
 */
export async function openToolKeys(config: Config, logger: Logger): Promise<KeyLookup> {
  if (config.kafka) {
    const { readKafkaKeys } = await import('../keys/kafka-key-store.js');
    return readKafkaKeys({ config: config.kafka, logger });
  }
  return readFileKeys(config.dataDir);
}
