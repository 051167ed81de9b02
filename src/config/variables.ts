// The names of the environment variables the service reads, in one list.
export type Env = Readonly<Record<string, string | undefined>>;

/** Every variable src/config.ts and src/config/ read (docker-compose.yml is checked against this list). */
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
/** The parsers (env-parsers.ts) take only these names, so the list cannot fall behind what is read. */
export type ConfigVariable = (typeof CONFIG_VARIABLES)[number];
