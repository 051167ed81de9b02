// `reports migrate --to-kafka`: copies the embedded log into the Kafka topic in order;
// `reports migrate --to-topic NAME`: copies the Kafka topic into another one, created with
// REPORTS_TOPIC_PARTITIONS partitions (repartitioning: each event lands in its key's new partition,
// each key's events keep their order); `reports migrate --to-file DIR`: copies the Kafka topic into
// an embedded log. Every create is sealed anew as it is copied, under a key of the target's key
// store (src/migrate/). Resumable and idempotent: events already in the target (by CloudEvent id)
// are not copied again, so a second run adds nothing. Ends by comparing the state digests of both.
import { loadConfig, type Config, type KafkaConfig } from '../config.js';
import type { Logger } from 'pino';
import { fileToolKeys } from '../keys/tool-keys.js';
import { openFileLog } from '../log/file/file-log.js';
import { openFileLogReader } from '../log/file/file-log-reader.js';
import { copyLog, type MigrationSource } from '../migrate/copy-log.js';
import type { MigrationTarget } from '../migrate/target-writer.js';
import { cursorTotal } from '../log/event-log.js';
import { formatPosition, type LogKind } from '../log/positions.js';
import { startProgress } from './progress.js';
import { toolLogger } from './tool-log.js';
import { UsageError, type CliIo, type CommandSpec, type ParsedCommand } from './usage.js';

export const migrateCommand = {
  name: 'migrate',
  usage: 'reports migrate --to-kafka | --to-topic NAME | --to-file DIR',
  description: [
    'Copies the embedded log (REPORTS_DATA_DIR) into the Kafka topic (KAFKA_BROKERS, REPORTS_TOPIC) in order,',
    "and the content keys with it: every report's name and tag are sealed anew under a key of the target's key",
    'store (REPORTS_KEY_TOPIC), those of reports deleted since (or never opened) stay erased, and events written',
    'in the clear are sealed. Resumable and idempotent: events already in the topic (same CloudEvent id) are',
    'skipped, so running it again adds nothing. Ends by comparing the state digests of both logs; exits 1 if',
    'they differ. Stop the server on the embedded log first, so no event is written after the copy.',
    '--to-topic NAME copies REPORTS_TOPIC into the topic NAME (its keys into NAME.keys) instead, created with',
    'REPORTS_TOPIC_PARTITIONS partitions: the way to change the partition count (stop every instance, copy,',
    'start them on NAME). --to-file DIR copies REPORTS_TOPIC into the embedded log in DIR (keys in DIR/keys.db).',
  ].join('\n'),
  options: { 'to-kafka': { type: 'boolean' }, 'to-topic': { type: 'string' }, 'to-file': { type: 'string' } },
} satisfies CommandSpec;

interface Ends {
  readonly source: () => Promise<MigrationSource>;
  readonly target: () => Promise<MigrationTarget>;
  readonly names: readonly [string, string];
  /** What the source is, for the positions a message names. */
  readonly sourceKind: LogKind;
}

/** The topic of `kafka` and its key topic, read (never created; a topic without a key topic has no keys). */
async function kafkaSource(kafka: KafkaConfig, logger: Logger, writeTimeoutMs: number): Promise<MigrationSource> {
  const { openKafkaLog } = await import('../log/kafka/kafka-log.js');
  const { openKafkaToolKeys } = await import('../keys/kafka-tool-keys.js');
  const log = await openKafkaLog({
    config: kafka,
    logger,
    writeTimeoutMs,
    createTopic: false,
    readOnly: true,
    probeIntervalMs: 60_000,
  });
  const keys = await openKafkaToolKeys({ config: kafka, logger, writeTimeoutMs }).catch(async (error: unknown) => {
    await log.close();
    throw error;
  });
  return { log, keys };
}

/** The topic of `kafka` and its key topic, written (created when missing). */
async function kafkaTarget(kafka: KafkaConfig, logger: Logger, writeTimeoutMs: number): Promise<MigrationTarget> {
  const { openKafkaLog } = await import('../log/kafka/kafka-log.js');
  const { openKafkaKeyStore } = await import('../keys/kafka-key-store.js');
  const log = await openKafkaLog({ config: kafka, logger, writeTimeoutMs, createTopic: true, probeIntervalMs: 60_000 });
  const keys = await openKafkaKeyStore({ config: kafka, logger, writeTimeoutMs, createTopic: true }).catch(
    async (error: unknown) => {
      await log.close();
      throw error;
    },
  );
  return { log, keys };
}

/** Where from and where to, as the options say. */
function ends(parsed: ParsedCommand, config: Config, logger: Logger): Ends {
  const toTopic = parsed.values['to-topic'];
  const toFile = parsed.values['to-file'];
  const chosen = [parsed.values['to-kafka'] === true, typeof toTopic === 'string', typeof toFile === 'string'].filter(
    Boolean,
  ).length;
  if (chosen !== 1)
    throw new UsageError(
      chosen === 0
        ? 'say where to: --to-kafka, --to-topic NAME or --to-file DIR'
        : 'say one target only: --to-kafka, --to-topic NAME or --to-file DIR',
      migrateCommand.usage,
    );
  if (!config.kafka)
    throw new UsageError(
      `KAFKA_BROKERS must name the ${typeof toFile === 'string' ? 'source' : 'target'} Kafka cluster`,
      migrateCommand.usage,
    );
  const kafka = config.kafka;
  const writeTimeoutMs = Math.max(config.writeTimeoutMs, 30_000);
  const fromKafka = () => kafkaSource(kafka, logger, writeTimeoutMs);
  if (typeof toFile === 'string') {
    const target = async () => {
      const log = await openFileLog({ dir: toFile, logger });
      return { log, keys: log.keyStore() };
    };
    return { source: fromKafka, target, names: [`topic ${kafka.topic}`, `file log ${toFile}`], sourceKind: 'kafka' };
  }
  if (typeof toTopic !== 'string') {
    const source = async () => ({
      log: await openFileLogReader({ dir: config.dataDir, logger }),
      keys: fileToolKeys(config.dataDir),
    });
    return {
      source,
      target: () => kafkaTarget(kafka, logger, writeTimeoutMs),
      names: ['file log', 'Kafka topic'],
      sourceKind: 'file',
    };
  }
  if (toTopic === kafka.topic)
    throw new UsageError('--to-topic must name another topic than REPORTS_TOPIC', migrateCommand.usage);
  const targetConfig = { ...kafka, topic: toTopic, keyTopic: `${toTopic}.keys` };
  return {
    source: fromKafka,
    target: () => kafkaTarget(targetConfig, logger, writeTimeoutMs),
    names: [`topic ${kafka.topic}`, `topic ${toTopic}`],
    sourceKind: 'kafka',
  };
}

export async function runMigrate(parsed: ParsedCommand, io: CliIo): Promise<number> {
  const config = loadConfig(io.env);
  const logger = toolLogger(io, config);
  const { source: openSource, target: openTarget, names, sourceKind } = ends(parsed, config, logger);
  const source = await openSource();
  let target: MigrationTarget | undefined;
  try {
    target = await openTarget();
    const progress = startProgress(io, 'migrate', cursorTotal(await source.log.head()));
    const result = await copyLog(source, target, {
      signal: io.signal,
      onProgress: (read) => progress.update(read),
      describe: (position) => formatPosition(position, sourceKind),
    });
    progress.stop();
    if (result.aborted) return 130;
    const [from, to] = names;
    const rows: [string, string][] = [
      [`events in the ${from}`, String(result.read)],
      [`already in the ${to === 'Kafka topic' ? 'topic' : to}`, String(result.read - result.copied)],
      ['copied now', String(result.copied)],
      ['content sealed anew', String(result.resealed)],
      ['content left erased', String(result.erased)],
      [`${from} digest`, `sha256:${result.sourceDigest}`],
      [`${to} digest`, `sha256:${result.targetDigest}`],
    ];
    const width = Math.max(...rows.map(([label]) => label.length)) + 2;
    const match = result.sourceDigest === result.targetDigest;
    const verdict = match ? 'digests match' : `DIGESTS DIFFER: the ${to} holds events that are not in the ${from}`;
    io.stdout.write([...rows.map(([label, value]) => `${`${label}:`.padEnd(width)}${value}`), verdict, ''].join('\n'));
    return match ? 0 : 1;
  } finally {
    // The embedded log closes its keys.db itself (closing a key store twice is nothing).
    await target?.log.close();
    await target?.keys.close();
    await source.keys.close();
    await source.log.close();
  }
}
