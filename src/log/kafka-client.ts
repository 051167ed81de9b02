// The kafkajs client as the service configures it (timeouts, retries, SASL, logs through pino),
// and the one line a failed start is reported with.
// kafkajs is CommonJS; Node cannot see all of its named exports from ESM, so take the default.
import kafkajs, { type Kafka, type LogEntry, type SASLOptions } from 'kafkajs';
import type { Logger } from 'pino';
import type { KafkaConfig } from '../config.js';

const { Kafka: KafkaClient, logLevel: KafkaLogLevel } = kafkajs;

export function createKafkaClient(config: KafkaConfig, logger: Logger): Kafka {
  const log = logger.child({ component: 'kafkajs' });
  return new KafkaClient({
    clientId: config.clientId,
    brokers: [...config.brokers],
    ssl: config.ssl,
    ...(config.sasl ? { sasl: saslOptions(config.sasl) } : {}),
    connectionTimeout: 3000,
    requestTimeout: 10_000,
    retry: { initialRetryTime: 200, maxRetryTime: 2000, retries: 8 },
    logLevel: KafkaLogLevel.WARN,
    logCreator: () => ({ level, log: entry }: LogEntry) => {
      const { message, ...extra } = entry;
      if (level <= KafkaLogLevel.ERROR) log.error(extra, message);
      else log.warn(extra, message);
    },
  });
}

function saslOptions({ mechanism, username, password }: NonNullable<KafkaConfig['sasl']>): SASLOptions {
  switch (mechanism) {
    case 'plain':
      return { mechanism, username, password };
    case 'scram-sha-256':
      return { mechanism, username, password };
    case 'scram-sha-512':
      return { mechanism, username, password };
  }
}

export function describeStartError(error: unknown, config: KafkaConfig): Error {
  const name = error instanceof Error ? error.name : '';
  const message = error instanceof Error ? error.message : String(error);
  if (name === 'KafkaJSSASLAuthenticationError') return new Error(`Kafka rejected the SASL credentials (KAFKA_SASL_USERNAME/KAFKA_SASL_PASSWORD): ${message}`);
  if (name === 'TopicSettingsError') return error as Error;
  return new Error(`cannot use Kafka at ${config.brokers.join(',')} (KAFKA_BROKERS): ${message}`, { cause: error });
}
