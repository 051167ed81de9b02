// The only file that reads the environment (other files name a variable only in what they say
// about it). Parsed once at start, validated, frozen.
// Empty or blank means unset. A number is taken exactly as written: spaces around it are an error
// for every numeric setting (" 5 " is most likely a quoting mistake, and a value that is refused
// at start is cheaper than one that is silently read another way).
import { isIP } from 'node:net';

export class ConfigError extends Error {
  /** `reason` without the variable's name, for messages that name the setting another way (a flag). */
  constructor(
    readonly variable: string,
    readonly reason: string,
  ) {
    super(`${variable}: ${reason}`);
    this.name = 'ConfigError';
  }
}

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

export interface Config {
  readonly port: number;
  readonly host: string;
  /** Tokens as given: plain secrets or `sha256:<hex>` digests. */
  readonly tokens: readonly string[];
  readonly tokensFile?: string;
  /** Tokens /metrics asks for (plain or `sha256:`); empty: /metrics is open, as by default. */
  readonly metricsTokens: readonly string[];
  readonly dataDir: string;
  readonly kafka?: KafkaConfig;
  readonly bodyLimitBytes: number;
  readonly nameMaxChars: number;
  readonly tagMaxChars: number;
  readonly writeTimeoutMs: number;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  readonly eventSource: string;
  readonly snapshotEvery: number;
  readonly projectionStallMs: number;
  readonly http: HttpLimits;
  /** Appends allowed to wait for the log; more answer 503 at once (bounded memory while it is stuck). */
  readonly maxPendingAppends: number;
  readonly feed: FeedLimits;
}

/** What GET /events allows: how many feeds at once, how far one may fall behind, how often it hears from the server. */
export interface FeedLimits {
  /** Feeds open at once; one more is answered 503. */
  readonly maxFeeds: number;
  /** Bytes of events a feed may have waiting for its client; a client that lets more pile up is cut off. */
  readonly bufferBytes: number;
  /** A heartbeat (NDJSON: an empty line; SSE: a comment) this often, so proxies keep a quiet feed open. */
  readonly heartbeatMs: number;
}

/** What the HTTP server allows a client before cutting it off (slow and idle clients, connection floods). */
export interface HttpLimits {
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  readonly maxConnections: number;
}

export type Env = Readonly<Record<string, string | undefined>>;

/** Every variable this file reads (docker-compose.yml is checked against this list). */
export const CONFIG_VARIABLES = [
  'PORT',
  'HOST',
  'REPORTS_TOKENS',
  'REPORTS_TOKENS_FILE',
  'REPORTS_METRICS_TOKEN',
  'REPORTS_DATA_DIR',
  'KAFKA_BROKERS',
  'REPORTS_TOPIC',
  'REPORTS_TOPIC_PARTITIONS',
  'REPORTS_TOPIC_REPLICATION_FACTOR',
  'KAFKA_CLIENT_ID',
  'KAFKA_SSL',
  'KAFKA_SASL_MECHANISM',
  'KAFKA_SASL_USERNAME',
  'KAFKA_SASL_PASSWORD',
  'REPORTS_BODY_LIMIT',
  'REPORTS_NAME_MAX_CHARS',
  'REPORTS_TAG_MAX_CHARS',
  'REPORTS_WRITE_TIMEOUT_MS',
  'LOG_LEVEL',
  'REPORTS_EVENT_SOURCE',
  'REPORTS_SNAPSHOT_EVERY',
  'REPORTS_PROJECTION_STALL_MS',
  'REPORTS_HEADERS_TIMEOUT_MS',
  'REPORTS_REQUEST_TIMEOUT_MS',
  'REPORTS_KEEP_ALIVE_TIMEOUT_MS',
  'REPORTS_MAX_CONNECTIONS',
  'REPORTS_MAX_PENDING_APPENDS',
  'REPORTS_KEY_TOPIC',
  'REPORTS_KEY_ERASURE_BOUND_MS',
  'REPORTS_KEY_SWEEP_DELAY_MS',
  'REPORTS_MAX_FEEDS',
  'REPORTS_FEED_BUFFER',
  'REPORTS_FEED_HEARTBEAT_MS',
  'KAFKA_START_TIMEOUT_MS',
] as const;
/** The helpers below take only these names, so the list cannot fall behind what is read. */
export type ConfigVariable = (typeof CONFIG_VARIABLES)[number];

function text(env: Env, name: ConfigVariable): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/** A numeric setting's text: undefined when empty or blank; an error when spaces surround it. */
function numeric(env: Env, name: ConfigVariable): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  if (raw.trim() !== raw) throw new ConfigError(name, `must be written without spaces around it, got "${raw}"`);
  return raw;
}

function integer(env: Env, name: ConfigVariable, fallback: number, min: number, max: number): number {
  const raw = numeric(env, name);
  if (raw === undefined) return fallback;
  if (!/^-?\d+$/.test(raw)) throw new ConfigError(name, `must be an integer, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${raw}`);
  return value;
}

function bool(env: Env, name: ConfigVariable): boolean {
  const raw = text(env, name)?.toLowerCase();
  if (raw === undefined || ['0', 'false', 'no', 'off'].includes(raw)) return false;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

function oneOf<T extends string>(env: Env, name: ConfigVariable, allowed: readonly T[], fallback: T): T {
  const raw = text(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  const found = allowed.find((value) => value === raw);
  if (found === undefined) throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
  return found;
}

const SIZE_UNITS: Record<string, number> = { '': 1, b: 1, kb: 1024, kib: 1024, mb: 1024 ** 2, mib: 1024 ** 2 };

function byteSize(env: Env, name: ConfigVariable, fallback: number, max = 8 * 1024 ** 2): number {
  const raw = numeric(env, name);
  if (raw === undefined) return fallback;
  const match = /^(\d+)\s*([a-z]*)$/i.exec(raw);
  const unit = SIZE_UNITS[match?.[2]?.toLowerCase() ?? 'x'];
  if (!match || unit === undefined)
    throw new ConfigError(name, `must be a size such as 65536, 64kb or 1mb, got "${raw}"`);
  const bytes = Number(match[1]) * unit;
  if (bytes < 1024 || bytes > max)
    throw new ConfigError(name, `must be between 1kb and ${max / 1024 ** 2}mb, got "${raw}"`);
  return bytes;
}

/** DNS labels: letters, digits and inner hyphens, at most 63 characters each. */
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i;

/** An IP address, or a host name whose last label is not all digits (`999.1.1.1` is no name, and no IPv4 address). */
function host(env: Env): string {
  const raw = text(env, 'HOST') ?? '127.0.0.1';
  if (isIP(raw) !== 0) return raw;
  if (/^\[.*\]$/.test(raw)) throw new ConfigError('HOST', `an IPv6 address is written without brackets, got "${raw}"`);
  if (!HOST_NAME.test(raw) || /(?:^|\.)\d+\.?$/.test(raw))
    throw new ConfigError('HOST', `must be an IP address or a host name, got "${raw}"`);
  return raw;
}

/** Config fields whose value can turn out bad only when used (a directory, an address): the variable behind each. */
const VARIABLE_OF = { host: 'HOST', port: 'PORT', dataDir: 'REPORTS_DATA_DIR' } as const satisfies Partial<
  Record<keyof Config, ConfigVariable>
>;

/** A setting found bad at start, after parsing (the data directory cannot be created, the address not listened on). */
export function settingError(field: keyof typeof VARIABLE_OF, message: string): ConfigError {
  return new ConfigError(VARIABLE_OF[field], message);
}

function httpLimits(env: Env): HttpLimits {
  const headersTimeoutMs = integer(env, 'REPORTS_HEADERS_TIMEOUT_MS', 10_000, 100, 600_000);
  const requestTimeoutMs = integer(env, 'REPORTS_REQUEST_TIMEOUT_MS', 30_000, 100, 600_000);
  // Node refuses a headers time-out longer than the whole request's.
  if (headersTimeoutMs > requestTimeoutMs)
    throw new ConfigError(
      'REPORTS_HEADERS_TIMEOUT_MS',
      `must not exceed REPORTS_REQUEST_TIMEOUT_MS (${requestTimeoutMs})`,
    );
  return Object.freeze({
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs: integer(env, 'REPORTS_KEEP_ALIVE_TIMEOUT_MS', 5000, 100, 600_000),
    maxConnections: integer(env, 'REPORTS_MAX_CONNECTIONS', 1000, 1, 1_000_000),
  });
}

function tokenList(env: Env, name: 'REPORTS_TOKENS' | 'REPORTS_METRICS_TOKEN'): string[] {
  const raw = text(env, name);
  if (raw === undefined) return [];
  const tokens = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const token of tokens) checkToken(token, name);
  return tokens;
}

/** Validates one configured token entry (also used for lines of REPORTS_TOKENS_FILE). */
export function checkToken(token: string, variable: string): void {
  if (token.startsWith('sha256:')) {
    if (!/^sha256:[0-9a-f]{64}$/i.test(token))
      throw new ConfigError(variable, 'a sha256: entry must be followed by 64 hex digits');
  } else if (!/^[A-Za-z0-9\-._~+/]+=*$/.test(token)) {
    // RFC 6750 b64token syntax: anything else could never be sent in an Authorization header.
    throw new ConfigError(variable, 'a token may hold only letters, digits and -._~+/ (RFC 6750)');
  }
}

/** The topic when REPORTS_TOPIC is not set (also what the AsyncAPI document names on the file log). */
export const DEFAULT_TOPIC = 'reports.events';
/** A day: how long a destroyed key may stay in the key topic's files unless REPORTS_KEY_ERASURE_BOUND_MS says otherwise. */
export const DEFAULT_KEY_ERASURE_BOUND_MS = 86_400_000;
const TOPIC_NAME = /^[a-zA-Z0-9._-]{1,249}$/;

function kafkaConfig(env: Env): KafkaConfig | undefined {
  const raw = text(env, 'KAFKA_BROKERS');
  if (raw === undefined) return undefined;
  const brokers = raw
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b !== '');
  for (const broker of brokers) {
    if (!/^[^\s:]+:\d{1,5}$/.test(broker))
      throw new ConfigError('KAFKA_BROKERS', `entries must be host:port, got "${broker}"`);
  }
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
  const mechanism = text(env, 'KAFKA_SASL_MECHANISM');
  let sasl: KafkaConfig['sasl'];
  if (mechanism !== undefined) {
    const username = text(env, 'KAFKA_SASL_USERNAME');
    const password = env['KAFKA_SASL_PASSWORD' satisfies ConfigVariable];
    if (username === undefined)
      throw new ConfigError('KAFKA_SASL_USERNAME', 'is required when KAFKA_SASL_MECHANISM is set');
    if (password === undefined || password === '')
      throw new ConfigError('KAFKA_SASL_PASSWORD', 'is required when KAFKA_SASL_MECHANISM is set');
    sasl = {
      mechanism: oneOf(env, 'KAFKA_SASL_MECHANISM', ['plain', 'scram-sha-256', 'scram-sha-512'] as const, 'plain'),
      username,
      password,
    };
  }
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

export function loadConfig(env: Env): Config {
  const tokensFile = text(env, 'REPORTS_TOKENS_FILE');
  const kafka = kafkaConfig(env);
  const config: Config = {
    port: integer(env, 'PORT', 8080, 0, 65535),
    host: host(env),
    tokens: Object.freeze(tokenList(env, 'REPORTS_TOKENS')),
    ...(tokensFile ? { tokensFile } : {}),
    metricsTokens: Object.freeze(tokenList(env, 'REPORTS_METRICS_TOKEN')),
    dataDir: text(env, 'REPORTS_DATA_DIR') ?? './data',
    ...(kafka ? { kafka } : {}),
    bodyLimitBytes: byteSize(env, 'REPORTS_BODY_LIMIT', 64 * 1024),
    nameMaxChars: integer(env, 'REPORTS_NAME_MAX_CHARS', 4096, 0, 1024 * 1024),
    tagMaxChars: integer(env, 'REPORTS_TAG_MAX_CHARS', 4096, 0, 1024 * 1024),
    writeTimeoutMs: integer(env, 'REPORTS_WRITE_TIMEOUT_MS', 5000, 1, 600_000),
    logLevel: oneOf(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    eventSource: text(env, 'REPORTS_EVENT_SOURCE') ?? 'urn:report-store',
    snapshotEvery: integer(env, 'REPORTS_SNAPSHOT_EVERY', 10_000, 0, 1_000_000_000),
    projectionStallMs: integer(env, 'REPORTS_PROJECTION_STALL_MS', 10_000, 100, 3_600_000),
    http: httpLimits(env),
    maxPendingAppends: integer(env, 'REPORTS_MAX_PENDING_APPENDS', 10_000, 1, 1_000_000),
    feed: Object.freeze({
      maxFeeds: integer(env, 'REPORTS_MAX_FEEDS', 100, 0, 100_000),
      bufferBytes: byteSize(env, 'REPORTS_FEED_BUFFER', 1024 ** 2, 64 * 1024 ** 2),
      heartbeatMs: integer(env, 'REPORTS_FEED_HEARTBEAT_MS', 15_000, 10, 3_600_000),
    }),
  };
  return Object.freeze(config);
}
