// Chooses the event log adapter from the configuration.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { ResumeFrom } from './capabilities.js';
import type { EventLog } from './event-log.js';
import { openFileLog } from './file/file-log.js';

/** What the server asks of the embedded log beyond its configuration (file-log.ts FileLogOptions). */
export interface FileLogHooks {
  readonly onReadOnly?: () => void;
  readonly reclaimOwnLock?: boolean;
}

/** `resumeFrom`: the newest snapshot's resume point (the file log scans only the log after it at open, once it holds). */
export async function openEventLog(
  config: Config,
  logger: Logger,
  resumeFrom?: ResumeFrom,
  hooks: FileLogHooks = {},
): Promise<EventLog> {
  if (config.kafka) {
    // Loaded only when used, so the embedded log does not pay for kafkajs at start.
    const [{ openKafkaLog }, { openWhenKafkaAnswers }] = await Promise.all([
      import('./kafka/kafka-log.js'),
      import('./kafka/start-retry.js'),
    ]);
    const kafka = config.kafka;
    const retry = {
      timeoutMs: kafka.startTimeoutMs,
      logger,
      brokers: kafka.brokers,
      what: `the event topic ${kafka.topic}`,
    };
    return openWhenKafkaAnswers(
      () =>
        openKafkaLog({
          config: kafka,
          logger,
          writeTimeoutMs: config.writeTimeoutMs,
          maxPendingAppends: config.maxPendingAppends,
        }),
      retry,
    );
  }
  return openFileLog({
    dir: config.dataDir,
    logger,
    maxPendingAppends: config.maxPendingAppends,
    ...(resumeFrom === undefined ? {} : { resumeFrom }),
    ...hooks,
  });
}
