// The log as the tools see it: on the file log a reader that may run beside the server (no lock);
// on Kafka the topic, which read-only tools never create.
import type { Logger } from 'pino';
import { pino } from 'pino';
import type { Config } from '../config.js';
import type { EventLog } from '../log/event-log.js';
import { openFileLogReader } from '../log/file/file-log-reader.js';
import type { CliIo } from './usage.js';
import { fileToolKeys, type ToolKeys } from '../keys/tool-keys.js';

/** Tools print their results on stdout; their log lines (warnings and worse) go to stderr. */
export function toolLogger(io: CliIo, config: Config): Logger {
  return pino({ level: config.logLevel === 'info' ? 'warn' : config.logLevel, base: undefined }, io.stderr);
}

export async function openToolLog(config: Config, logger: Logger, { createTopic = false } = {}): Promise<EventLog> {
  if (config.kafka) {
    // Loaded only when used: the file log's tools do not pay for kafkajs at start.
    const { openKafkaLog } = await import('../log/kafka/kafka-log.js');
    return openKafkaLog({
      config: config.kafka,
      logger,
      writeTimeoutMs: config.writeTimeoutMs,
      createTopic,
      readOnly: !createTopic,
      probeIntervalMs: 60_000,
    });
  }
  // A last batch whose keys the server is still writing (or will cut, refused or left by a crash) is
  // read once keys.db holds them: no tool prints or folds a create that was never acknowledged.
  return openFileLogReader({ dir: config.dataDir, logger, waitForKeys: true });
}

/**
 * The keys as the tools see them, for digests and for opening content: keys.db read beside the
 * server (nothing written), or the key topic followed while the tool runs (never created). Take
 * the lookup after the head of the log it serves: a key is durable before its event is.
 */
export async function openToolKeys(config: Config, logger: Logger): Promise<ToolKeys> {
  if (config.kafka) {
    const { openKafkaToolKeys } = await import('../keys/kafka-tool-keys.js');
    return openKafkaToolKeys({ config: config.kafka, logger });
  }
  return fileToolKeys(config.dataDir);
}

/** `use` with the tools' keys, closed afterwards. */
export async function withToolKeys<T>(config: Config, logger: Logger, use: (keys: ToolKeys) => Promise<T>): Promise<T> {
  const keys = await openToolKeys(config, logger);
  try {
    return await use(keys);
  } finally {
    await keys.close();
  }
}
