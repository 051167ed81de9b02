// The Kafka part of the configuration: present only when KAFKA_BROKERS is set.
import { ConfigError } from './config-error.js';
import { bool, integer, oneOf, text } from './env-parsers.js';
import type { ConfigVariable, Env } from './variables.js';

export type SaslMechanism = 'plain' | 'scram-sha-256' | 'scram-sha-512';

export interface KafkaConfig {
  readonly brokers: readonly string[];
  readonly topic: string;
  readonly clientId: string;
  readonly partitions: number;
  readonly replicationFactor: number;
  readonly ssl: boolean;
  readonly sasl?: { readonly mechanism: SaslMechanism; readonly username: string; readonly password: string };
  /** The compacted topic of content keys beside the event topic (src/keys/kafka-key-store.ts). */
  readonly keyTopic: string;
  /** How long a destroyed key may stay in the key topic's files at most: the topic's settings are derived from it and checked against it. */
  readonly keyErasureBoundMs: number;
  /**
   * How long after a start has caught up the key topic's keys that no live report used then are
   * looked at again, and destroyed if still unused (src/keys/key-upkeep.ts sweepKeyTopic); at least
   * four write time-outs where those are longer.
   */
  readonly keySweepDelayMs: number;
  /** How long a start waits for a broker of `brokers` to answer (src/log/kafka/start-retry.ts). */
  readonly startTimeoutMs: number;
}

/** The topic when REPORTS_TOPIC is not set (also what the AsyncAPI document names on the file log). */
export const DEFAULT_TOPIC = 'reports.events';
/** A day: how long a destroyed key may stay in the key topic's files unless REPORTS_KEY_ERASURE_BOUND_MS says otherwise. */
export const DEFAULT_KEY_ERASURE_BOUND_MS = 86_400_000;
const TOPIC_NAME = /^[a-zA-Z0-9._-]{1,249}$/;

function brokerList(raw: string): string[] {
  const brokers = raw
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b !== '');
  if (brokers.length === 0)
    throw new ConfigError('KAFKA_BROKERS', 'names no broker, only commas and spaces; expected host:port,...');
  for (const broker of brokers) {
    if (!/^[^\s:]+:\d{1,5}$/.test(broker))
      throw new ConfigError('KAFKA_BROKERS', `entries must be host:port, got "${broker}"`);
  }
  return brokers;
}

function topicNames(env: Env): { topic: string; keyTopic: string } {
  const topic = text(env, 'REPORTS_TOPIC') ?? DEFAULT_TOPIC;
  if (!TOPIC_NAME.test(topic)) throw new ConfigError('REPORTS_TOPIC', `is not a valid Kafka topic name: "${topic}"`);
  const keyTopic = text(env, 'REPORTS_KEY_TOPIC') ?? `${topic}.keys`;
  if (!TOPIC_NAME.test(keyTopic))
    throw new ConfigError('REPORTS_KEY_TOPIC', `is not a valid Kafka topic name: "${keyTopic}"`);
  if (keyTopic === topic)
    throw new ConfigError(
      'REPORTS_KEY_TOPIC',
      `must differ from REPORTS_TOPIC ("${topic}"): keys need a compacted topic of their own`,
    );
  return { topic, keyTopic };
}

function saslSettings(env: Env): KafkaConfig['sasl'] {
  const mechanism = text(env, 'KAFKA_SASL_MECHANISM');
  if (mechanism === undefined) return undefined;
  const username = text(env, 'KAFKA_SASL_USERNAME');
  const password = env['KAFKA_SASL_PASSWORD' satisfies ConfigVariable];
  if (username === undefined)
    throw new ConfigError('KAFKA_SASL_USERNAME', 'is required when KAFKA_SASL_MECHANISM is set');
  if (password === undefined || password === '')
    throw new ConfigError('KAFKA_SASL_PASSWORD', 'is required when KAFKA_SASL_MECHANISM is set');
  return {
    mechanism: oneOf(env, 'KAFKA_SASL_MECHANISM', ['plain', 'scram-sha-256', 'scram-sha-512'] as const, 'plain'),
    username,
    password,
  };
}

export function kafkaConfig(env: Env): KafkaConfig | undefined {
  const raw = text(env, 'KAFKA_BROKERS');
  if (raw === undefined) return undefined;
  const brokers = brokerList(raw);
  const { topic, keyTopic } = topicNames(env);
  const sasl = saslSettings(env);
  return Object.freeze({
    brokers,
    topic,
    clientId: text(env, 'KAFKA_CLIENT_ID') ?? 'report-store',
    startTimeoutMs: integer(env, 'KAFKA_START_TIMEOUT_MS', 120_000, 0, 3_600_000),
    partitions: integer(env, 'REPORTS_TOPIC_PARTITIONS', 3, 1, 10_000),
    replicationFactor: integer(env, 'REPORTS_TOPIC_REPLICATION_FACTOR', -1, -1, 32),
    ssl: bool(env, 'KAFKA_SSL'),
    ...(sasl ? { sasl: Object.freeze(sasl) } : {}),
    keyTopic,
    // At least 10 s: the bound must hold the broker's cleaner back-off and a nudge's margin (docs/kafka.md).
    keyErasureBoundMs: integer(
      env,
      'REPORTS_KEY_ERASURE_BOUND_MS',
      DEFAULT_KEY_ERASURE_BOUND_MS,
      10_000,
      30 * DEFAULT_KEY_ERASURE_BOUND_MS,
    ),
    keySweepDelayMs: integer(env, 'REPORTS_KEY_SWEEP_DELAY_MS', 60_000, 1000, 86_400_000),
  });
}
