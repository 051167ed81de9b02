// With src/config/, the only code that reads the environment (other files name a variable only in
// what they say about it). Parsed once at start, validated, frozen.
// How a variable's text is read (blank means unset, no spaces around numbers): src/config/env-parsers.ts.
import { isIP } from 'node:net';
import { ConfigError } from './config/config-error.js';
import { byteSize, integer, oneOf, text } from './config/env-parsers.js';
import { httpLimits, type HttpLimits } from './config/http-limits.js';
import { kafkaConfig, type KafkaConfig } from './config/kafka-settings.js';
import type { ConfigVariable, Env } from './config/variables.js';

// Moved into src/config/; re-exported so that importers keep importing from here.
export { ConfigError } from './config/config-error.js';
export { type HttpLimits } from './config/http-limits.js';
export {
  DEFAULT_KEY_ERASURE_BOUND_MS,
  DEFAULT_TOPIC,
  type KafkaConfig,
  type SaslMechanism,
} from './config/kafka-settings.js';
export { CONFIG_VARIABLES, type ConfigVariable, type Env } from './config/variables.js';

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

function tokenList(env: Env, name: 'REPORTS_TOKENS' | 'REPORTS_METRICS_TOKEN'): string[] {
  const raw = text(env, name);
  if (raw === undefined) return [];
  const tokens = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  // Only commas and spaces ("$A,$B" with both unset): refused rather than taken for unset, which
  // would leave /metrics open, or make a token of its own, without a word.
  if (tokens.length === 0) throw new ConfigError(name, 'holds no token, only commas and spaces');
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

/**
 * The CloudEvents `source`: a URI-reference (RFC 3986), so every event's `source` is one, as
 * consumers' CloudEvents libraries expect; characters a URI never holds (a space, a quote, a
 * non-ASCII letter: percent-encode them) stop the start.
 */
function eventSource(env: Env): string {
  const source = text(env, 'REPORTS_EVENT_SOURCE') ?? 'urn:report-store';
  if (!/^(?:[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})+$/.test(source))
    throw new ConfigError('REPORTS_EVENT_SOURCE', `is not a URI-reference (RFC 3986): "${source}"`);
  return source;
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
    eventSource: eventSource(env),
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
