// The kafkajs client as the service configures it (timeouts, retries, SASL, logs through pino),
// and the one line a failed start is reported with. kafkajs logs every failed connection attempt
// and every retry at error level (hundreds of lines per broker outage), and restarts, rebalances
// and coordinator loading that are part of normal operation too: its lines go to pino at debug.
// What an operator needs from them is said once by the service itself: a broker unreachable and
// back (BrokerReachability), the log unavailable and back (KafkaHealth), a rejected password.
// kafkajs is CommonJS; Node cannot see all of its named exports from ESM, so take the default.
import kafkajs, { type Kafka, type LogEntry, type SASLOptions } from 'kafkajs';
import type { Logger } from 'pino';
import type { KafkaConfig } from '../../config.js';
import type { BrokerReachability } from './brokers.js';
import { TopicSettingsError } from './topic.js';

const { Kafka: KafkaClient, logLevel: KafkaLogLevel } = kafkajs;

/** How long the client waits for any broker's answer before it gives up on a request (and retries it). */
export const REQUEST_TIMEOUT_MS = 10_000;

export interface KafkaClientOptions {
  readonly requestTimeoutMs?: number;
  /** Told of every failed connection to a broker, in place of kafkajs' error lines. */
  readonly brokers?: BrokerReachability;
  /** How often kafkajs retries a request (8 unless given): a one-off probe asks once or twice. */
  readonly retries?: number;
}

export function createKafkaClient(
  config: KafkaConfig,
  logger: Logger,
  { requestTimeoutMs = REQUEST_TIMEOUT_MS, brokers, retries = 8 }: KafkaClientOptions = {},
): Kafka {
  const log = logger.child({ component: 'kafkajs' });
  return new KafkaClient({
    clientId: config.clientId,
    brokers: [...config.brokers],
    ssl: config.ssl,
    ...(config.sasl ? { sasl: saslOptions(config.sasl) } : {}),
    connectionTimeout: 3000,
    requestTimeout: requestTimeoutMs,
    retry: { initialRetryTime: 200, maxRetryTime: 2000, retries },
    logLevel: KafkaLogLevel.WARN,
    logCreator: () => (entry: LogEntry) => logKafkajsEntry(entry, log, brokers),
  });
}

/** One kafkajs log entry, as the service takes it (see the header). */
export function logKafkajsEntry(
  { namespace, level, log: entry }: LogEntry,
  log: Logger,
  brokers: BrokerReachability | undefined,
): void {
  const {
    message,
    timestamp: _timestamp,
    logger: _logger,
    ...extra
  } = entry as LogEntry['log'] & { timestamp?: unknown; logger?: unknown };
  const failing = level <= KafkaLogLevel.ERROR;
  // A connection's own errors name its broker; those about a response also carry its correlation id.
  if (
    failing &&
    namespace === 'Connection' &&
    typeof extra['broker'] === 'string' &&
    extra['correlationId'] === undefined
  )
    brokers?.failed(extra['broker'], message);
  // A rejected password needs the operator (at start the start error says so; later only this does).
  if (failing && namespace.startsWith('SaslAuthenticator')) log.error(extra, message);
  else log.debug({ namespace, ...extra }, message);
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
  if (name === 'KafkaJSSASLAuthenticationError')
    return new Error(`Kafka rejected the SASL credentials (KAFKA_SASL_USERNAME/KAFKA_SASL_PASSWORD): ${message}`);
  // A refusal of the topics (unsafe settings, a lost key topic) is said as it is, and not waited out.
  if (error instanceof TopicSettingsError) return error;
  return new Error(`cannot use Kafka at ${config.brokers.join(',')} (KAFKA_BROKERS): ${message}`, { cause: error });
}
