import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, loadConfig, type Env } from '../src/config.js';

const HASH = `sha256:${'ab'.repeat(32)}`;

function configError(env: Env): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(env)}`);
}

const defaults = suite('loadConfig defaults');
defaults('uses the documented defaults for an empty environment', () => {
  const config = loadConfig({});
  assert.is(config.port, 8080);
  assert.is(config.host, '127.0.0.1');
  assert.equal(config.tokens, []);
  assert.is(config.tokensFile, undefined);
  assert.is(config.dataDir, './data');
  assert.is(config.kafka, undefined);
  assert.is(config.bodyLimitBytes, 64 * 1024);
  assert.is(config.nameMaxChars, 4096);
  assert.is(config.tagMaxChars, 4096);
  assert.is(config.writeTimeoutMs, 5000);
  assert.equal(config.http, {
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 30_000,
    keepAliveTimeoutMs: 5000,
    maxConnections: 1000,
  });
  assert.is(config.logLevel, 'info');
  assert.equal(config.feed, { maxFeeds: 100, bufferBytes: 1024 ** 2, heartbeatMs: 15_000 });
});
defaults('treats empty and blank variables as unset', () => {
  assert.equal(loadConfig({ PORT: '', HOST: '  ', KAFKA_BROKERS: '', LOG_LEVEL: '' }), loadConfig({}));
});
defaults('returns a frozen config with frozen nested values', () => {
  const config = loadConfig({
    REPORTS_TOKENS: 'a,b',
    KAFKA_BROKERS: 'k:9092',
    KAFKA_SASL_MECHANISM: 'plain',
    KAFKA_SASL_USERNAME: 'u',
    KAFKA_SASL_PASSWORD: 'p',
  });
  assert.ok(Object.isFrozen(config));
  assert.ok(Object.isFrozen(config.tokens));
  assert.ok(Object.isFrozen(config.kafka));
  assert.ok(Object.isFrozen(config.kafka?.sasl));
  assert.throws(() => {
    (config as { port: number }).port = 1;
  });
});
defaults.run();

const parsed = suite('loadConfig variables');
parsed('reads PORT and HOST', () => {
  const config = loadConfig({ PORT: '0', HOST: '::1' });
  assert.is(config.port, 0);
  assert.is(config.host, '::1');
});
parsed('reads REPORTS_TOKENS as a trimmed comma-separated list with sha256 entries', () => {
  assert.equal(loadConfig({ REPORTS_TOKENS: ` alpha , ${HASH},,beta~1 ` }).tokens, ['alpha', HASH, 'beta~1']);
});
parsed('reads the feed limits: REPORTS_MAX_FEEDS, REPORTS_FEED_BUFFER as a size, REPORTS_FEED_HEARTBEAT_MS', () => {
  assert.equal(
    loadConfig({ REPORTS_MAX_FEEDS: '0', REPORTS_FEED_BUFFER: '64mb', REPORTS_FEED_HEARTBEAT_MS: '250' }).feed,
    { maxFeeds: 0, bufferBytes: 64 * 1024 ** 2, heartbeatMs: 250 },
  );
  assert.ok(Object.isFrozen(loadConfig({}).feed));
});
parsed('reads REPORTS_TOKENS_FILE and REPORTS_DATA_DIR', () => {
  const config = loadConfig({ REPORTS_TOKENS_FILE: '/etc/reports/tokens', REPORTS_DATA_DIR: '/var/lib/reports' });
  assert.is(config.tokensFile, '/etc/reports/tokens');
  assert.is(config.dataDir, '/var/lib/reports');
});
parsed('reads REPORTS_BODY_LIMIT in bytes or with a unit', () => {
  assert.is(loadConfig({ REPORTS_BODY_LIMIT: '2048' }).bodyLimitBytes, 2048);
  assert.is(loadConfig({ REPORTS_BODY_LIMIT: '128kb' }).bodyLimitBytes, 128 * 1024);
  assert.is(loadConfig({ REPORTS_BODY_LIMIT: '1 MiB' }).bodyLimitBytes, 1024 * 1024);
});
parsed('reads REPORTS_WRITE_TIMEOUT_MS, the field limits and LOG_LEVEL', () => {
  const config = loadConfig({
    REPORTS_WRITE_TIMEOUT_MS: '250',
    REPORTS_NAME_MAX_CHARS: '10',
    REPORTS_TAG_MAX_CHARS: '0',
    LOG_LEVEL: 'DEBUG',
  });
  assert.is(config.writeTimeoutMs, 250);
  assert.is(config.nameMaxChars, 10);
  assert.is(config.tagMaxChars, 0);
  assert.is(config.logLevel, 'debug');
});
parsed('reads REPORTS_EVENT_SOURCE as any URI-reference, percent-encoded characters included', () => {
  for (const source of ['https://reports.example.com/eu-1', 'urn:report-store:a%20b', '/instances/7?zone=a#x'])
    assert.is(loadConfig({ REPORTS_EVENT_SOURCE: source }).eventSource, source);
});

parsed('reads the Kafka settings when KAFKA_BROKERS is set', () => {
  const config = loadConfig({
    KAFKA_BROKERS: 'a:9092, b.example:19092',
    REPORTS_TOPIC: 'my.topic',
    KAFKA_SSL: 'true',
    KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512',
    KAFKA_SASL_USERNAME: 'user',
    KAFKA_SASL_PASSWORD: 'secret',
  });
  assert.equal(config.kafka?.brokers, ['a:9092', 'b.example:19092']);
  assert.is(config.kafka?.topic, 'my.topic');
  assert.is(config.kafka?.ssl, true);
  assert.equal(config.kafka?.sasl, { mechanism: 'scram-sha-512', username: 'user', password: 'secret' });
});
parsed('defaults the Kafka topic to reports.events without SSL or SASL', () => {
  const kafka = loadConfig({ KAFKA_BROKERS: 'localhost:9092' }).kafka;
  assert.is(kafka?.topic, 'reports.events');
  assert.is(kafka?.ssl, false);
  assert.is(kafka?.sasl, undefined);
});
parsed.run();

const bad: readonly [string, Env, string][] = [
  ['PORT that is not a number', { PORT: 'abc' }, 'PORT'],
  ['PORT above 65535', { PORT: '70000' }, 'PORT'],
  ['negative PORT', { PORT: '-1' }, 'PORT'],
  ['REPORTS_BODY_LIMIT with an unknown unit', { REPORTS_BODY_LIMIT: '12parsecs' }, 'REPORTS_BODY_LIMIT'],
  ['REPORTS_BODY_LIMIT below 1kb', { REPORTS_BODY_LIMIT: '10' }, 'REPORTS_BODY_LIMIT'],
  ['REPORTS_WRITE_TIMEOUT_MS of zero', { REPORTS_WRITE_TIMEOUT_MS: '0' }, 'REPORTS_WRITE_TIMEOUT_MS'],
  ['REPORTS_WRITE_TIMEOUT_MS with a fraction', { REPORTS_WRITE_TIMEOUT_MS: '1.5' }, 'REPORTS_WRITE_TIMEOUT_MS'],
  [
    'REPORTS_HEADERS_TIMEOUT_MS longer than REPORTS_REQUEST_TIMEOUT_MS',
    { REPORTS_HEADERS_TIMEOUT_MS: '20000', REPORTS_REQUEST_TIMEOUT_MS: '10000' },
    'REPORTS_HEADERS_TIMEOUT_MS',
  ],
  ['REPORTS_MAX_CONNECTIONS of zero', { REPORTS_MAX_CONNECTIONS: '0' }, 'REPORTS_MAX_CONNECTIONS'],
  ['unknown LOG_LEVEL', { LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
  ['REPORTS_MAX_FEEDS that is negative', { REPORTS_MAX_FEEDS: '-1' }, 'REPORTS_MAX_FEEDS'],
  ['REPORTS_FEED_BUFFER above 64mb', { REPORTS_FEED_BUFFER: '65mb' }, 'REPORTS_FEED_BUFFER'],
  ['REPORTS_FEED_BUFFER below 1kb', { REPORTS_FEED_BUFFER: '100' }, 'REPORTS_FEED_BUFFER'],
  ['REPORTS_FEED_HEARTBEAT_MS below 10', { REPORTS_FEED_HEARTBEAT_MS: '5' }, 'REPORTS_FEED_HEARTBEAT_MS'],
  ['KAFKA_BROKERS without host:port', { KAFKA_BROKERS: 'nohostport' }, 'KAFKA_BROKERS'],
  ['KAFKA_BROKERS with one bad entry', { KAFKA_BROKERS: 'a:9092,b' }, 'KAFKA_BROKERS'],
  // "$A,$B" with both unset: no broker named, which kafkajs only found after a token was made.
  ['KAFKA_BROKERS of commas only', { KAFKA_BROKERS: ' , ,' }, 'KAFKA_BROKERS'],
  [
    'KAFKA_SASL_MECHANISM without a username',
    { KAFKA_BROKERS: 'a:9092', KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_PASSWORD: 'p' },
    'KAFKA_SASL_USERNAME',
  ],
  [
    'KAFKA_SASL_MECHANISM without a password',
    { KAFKA_BROKERS: 'a:9092', KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'u' },
    'KAFKA_SASL_PASSWORD',
  ],
  [
    'unknown KAFKA_SASL_MECHANISM',
    { KAFKA_BROKERS: 'a:9092', KAFKA_SASL_MECHANISM: 'kerberos', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' },
    'KAFKA_SASL_MECHANISM',
  ],
  ['KAFKA_SSL that is not a boolean', { KAFKA_BROKERS: 'a:9092', KAFKA_SSL: 'maybe' }, 'KAFKA_SSL'],
  ['REPORTS_TOPIC with a space', { KAFKA_BROKERS: 'a:9092', REPORTS_TOPIC: 'my topic' }, 'REPORTS_TOPIC'],
  ['REPORTS_TOKENS with a short sha256 entry', { REPORTS_TOKENS: 'good,sha256:abc' }, 'REPORTS_TOKENS'],
  ['REPORTS_TOKENS with a non-hex sha256 entry', { REPORTS_TOKENS: `sha256:${'zz'.repeat(32)}` }, 'REPORTS_TOKENS'],
  ['REPORTS_TOKENS with a character no bearer token can hold', { REPORTS_TOKENS: 'has space' }, 'REPORTS_TOKENS'],
  [
    'REPORTS_METRICS_TOKEN with a character no bearer token can hold',
    { REPORTS_METRICS_TOKEN: 'has space' },
    'REPORTS_METRICS_TOKEN',
  ],
  ['REPORTS_METRICS_TOKEN with a short sha256 entry', { REPORTS_METRICS_TOKEN: 'sha256:abc' }, 'REPORTS_METRICS_TOKEN'],
  // Taken for unset, these left /metrics open (or made a token) without a word.
  ['REPORTS_METRICS_TOKEN of commas only', { REPORTS_METRICS_TOKEN: ',' }, 'REPORTS_METRICS_TOKEN'],
  ['REPORTS_TOKENS of commas and spaces only', { REPORTS_TOKENS: ' , ,,' }, 'REPORTS_TOKENS'],
  ['REPORTS_EVENT_SOURCE with a space', { REPORTS_EVENT_SOURCE: 'not a uri' }, 'REPORTS_EVENT_SOURCE'],
  ['REPORTS_EVENT_SOURCE with a quote', { REPORTS_EVENT_SOURCE: 'urn:a"b' }, 'REPORTS_EVENT_SOURCE'],
  ['REPORTS_EVENT_SOURCE with a bad percent-encoding', { REPORTS_EVENT_SOURCE: 'urn:a%2' }, 'REPORTS_EVENT_SOURCE'],
  ['HOST that looks like an IPv4 address but is none', { HOST: '999.1.1.1' }, 'HOST'],
  ['HOST with an all-digit last label', { HOST: 'reports.123' }, 'HOST'],
  ['HOST with a character no host name holds', { HOST: 'bad_host!' }, 'HOST'],
  ['HOST as a bracketed IPv6 address', { HOST: '[::1]' }, 'HOST'],
];

/** Every numeric setting with a valid value (the Kafka ones need KAFKA_BROKERS). */
const numeric: Readonly<Record<string, string>> = {
  PORT: '8081',
  REPORTS_BODY_LIMIT: '64kb',
  REPORTS_NAME_MAX_CHARS: '10',
  REPORTS_TAG_MAX_CHARS: '10',
  REPORTS_WRITE_TIMEOUT_MS: '100',
  REPORTS_HEADERS_TIMEOUT_MS: '1000',
  REPORTS_REQUEST_TIMEOUT_MS: '20000',
  REPORTS_KEEP_ALIVE_TIMEOUT_MS: '1000',
  REPORTS_MAX_CONNECTIONS: '5',
  REPORTS_SNAPSHOT_EVERY: '5',
  REPORTS_PROJECTION_STALL_MS: '1000',
  REPORTS_MAX_PENDING_APPENDS: '5',
  REPORTS_TOPIC_PARTITIONS: '3',
  REPORTS_TOPIC_REPLICATION_FACTOR: '1',
  REPORTS_MAX_FEEDS: '3',
  REPORTS_FEED_BUFFER: '2mb',
  REPORTS_FEED_HEARTBEAT_MS: '500',
};
const withBrokers = (env: Env): Env => ({ KAFKA_BROKERS: 'a:9092', ...env });

const errors = suite('loadConfig errors');
for (const [what, env, variable] of bad) {
  errors(`throws a ConfigError naming ${variable} for ${what}`, () => {
    const error = configError(env);
    assert.is(error.variable, variable);
    assert.ok(error.message.startsWith(`${variable}:`), error.message);
  });
}
errors('refuses spaces around the value of every numeric setting, naming it, and takes the bare value', () => {
  for (const [variable, value] of Object.entries(numeric)) {
    assert.not.throws(() => loadConfig(withBrokers({ [variable]: value })), variable);
    for (const spaced of [` ${value} `, `${value} `, `\t${value}`]) {
      const error = configError(withBrokers({ [variable]: spaced }));
      assert.is(error.variable, variable);
      assert.match(error.message, 'without spaces around it');
    }
  }
});
errors('still takes an empty or blank numeric setting as unset', () => {
  for (const variable of Object.keys(numeric))
    assert.equal(loadConfig(withBrokers({ [variable]: '  ' })), loadConfig(withBrokers({})), variable);
});
errors('accepts IPv4 and IPv6 addresses and host names as HOST', () => {
  for (const host of [
    '0.0.0.0',
    '10.1.2.3',
    '::',
    '::1',
    'fe80::1',
    'localhost',
    'reports.example.com',
    'host-1.internal.',
  ])
    assert.is(loadConfig({ HOST: host }).host, host);
});
errors('mentions KAFKA_SASL_MECHANISM when the SASL credentials are missing', () => {
  assert.match(configError({ KAFKA_BROKERS: 'a:9092', KAFKA_SASL_MECHANISM: 'plain' }).message, 'KAFKA_SASL_MECHANISM');
});
errors('does not echo a token in the message of a bad REPORTS_TOKENS entry', () => {
  assert.not.match(configError({ REPORTS_TOKENS: 'secret-token,sha256:abc' }).message, 'secret-token');
});
errors.run();
