// `reports migrate --to-kafka`: copies the embedded log into the Kafka topic in order;
// `reports migrate --to-topic NAME`: copies the Kafka topic into another one, created with
// REPORTS_TOPIC_PARTITIONS partitions (repartitioning: each event lands in its key's new partition,
// each key's events keep their order). Resumable
// and idempotent: events already in the topic (by CloudEvent id) are not copied again, so a second
// run adds nothing. Ends by comparing the state digests of both logs.
import { decodeEvent } from '../../projections/codec.js';
import { loadConfig } from '../config.js';
import { cursorTotal, type EventLog, type LogMessage } from '../log/event-log.js';
import { openFileLogReader } from '../log/file/file-log-reader.js';
import { openKafkaLog } from '../log/kafka/kafka-log.js';
import { createReadModel, type ReadModel } from '../read-model/read-model.js';
import { foldLog, stateDigest } from '../projection/fold-log.js';
import { formatPosition, type LogKind } from './positions.js';
import { startProgress } from './progress.js';
import { toolLogger } from './tool-log.js';
import { UsageError, type CliIo, type CommandSpec, type ParsedCommand } from './usage.js';
import { readRecords } from '../log/record-batches.js';

const BATCH = 500;

export const migrateCommand = {
  name: 'migrate',
  usage: 'reports migrate --to-kafka | --to-topic NAME',
  description: [
    'Copies the embedded log (REPORTS_DATA_DIR) into the Kafka topic (KAFKA_BROKERS, REPORTS_TOPIC) in order.',
    'Resumable and idempotent: events already in the topic (same CloudEvent id) are skipped, so running it',
    'again adds nothing. Ends by comparing the state digests of both logs; exits 1 if they differ.',
    'Stop the server on the embedded log first, so no event is written after the copy.',
    '--to-topic NAME copies REPORTS_TOPIC into the topic NAME instead, created with REPORTS_TOPIC_PARTITIONS',
    'partitions: the way to change the partition count (stop every instance, copy, start them on NAME).',
  ].join('\n'),
  options: { 'to-kafka': { type: 'boolean' }, 'to-topic': { type: 'string' } },
} satisfies CommandSpec;

async function eventIdsIn(log: EventLog, signal: AbortSignal): Promise<Set<string>> {
  const ids = new Set<string>();
  for await (const record of readRecords(log, new Map(), { signal })) {
    const decoded = decodeEvent(record.value);
    if (decoded.ok) ids.add(decoded.event.id);
  }
  return ids;
}

interface Ends {
  readonly source: EventLog;
  readonly target: () => Promise<EventLog>;
  readonly names: readonly [string, string];
  /** What the source is, for the positions a message names. */
  readonly sourceKind: LogKind;
}

/** Where from and where to, as the options say. */
async function openEnds(parsed: ParsedCommand, io: CliIo): Promise<Ends> {
  const toTopic = parsed.values['to-topic'];
  if (parsed.values['to-kafka'] !== true && typeof toTopic !== 'string') throw new UsageError('say where to: --to-kafka or --to-topic NAME', migrateCommand.usage);
  const config = loadConfig(io.env);
  if (!config.kafka) throw new UsageError('KAFKA_BROKERS must name the target Kafka cluster', migrateCommand.usage);
  const kafka = config.kafka;
  const logger = toolLogger(io, config);
  const writeTimeoutMs = Math.max(config.writeTimeoutMs, 30_000);
  if (typeof toTopic !== 'string') {
    const target = () => openKafkaLog({ config: kafka, logger, writeTimeoutMs, createTopic: true, probeIntervalMs: 60_000 });
    return { source: await openFileLogReader({ dir: config.dataDir, logger }), target, names: ['file log', 'Kafka topic'], sourceKind: 'file' };
  }
  if (toTopic === kafka.topic) throw new UsageError('--to-topic must name another topic than REPORTS_TOPIC', migrateCommand.usage);
  const source = await openKafkaLog({ config: kafka, logger, writeTimeoutMs, createTopic: false, readOnly: true, probeIntervalMs: 60_000 });
  const target = () => openKafkaLog({ config: { ...kafka, topic: toTopic }, logger, writeTimeoutMs, createTopic: true, probeIntervalMs: 60_000 });
  return { source, target, names: [`topic ${kafka.topic}`, `topic ${toTopic}`], sourceKind: 'kafka' };
}

export async function runMigrate(parsed: ParsedCommand, io: CliIo): Promise<number> {
  const { source, target: openTarget, names, sourceKind } = await openEnds(parsed, io);
  let target: EventLog | undefined;
  try {
    target = await openTarget();
    const present = await eventIdsIn(target, io.signal);
    const head = await source.head();
    const progress = startProgress(io, 'migrate', cursorTotal(head));
    let read = 0;
    let copied = 0;
    let batch: LogMessage[] = [];
    const flush = async () => {
      if (batch.length > 0) await (target as EventLog).append(batch);
      copied += batch.length;
      batch = [];
    };
    for await (const record of readRecords(source, new Map(), { signal: io.signal })) {
      read += 1;
      progress.update(read);
      const decoded = decodeEvent(record.value);
      if (!decoded.ok) throw new Error(`record ${formatPosition(record.position, sourceKind)} is not a valid event (${decoded.reason}); run \`reports verify\``);
      if (present.has(decoded.event.id)) continue;
      batch.push({ key: decoded.event.subject, value: record.value });
      if (batch.length >= BATCH) await flush();
    }
    await flush();
    progress.stop();
    if (io.signal.aborted) return 130;
    const [sourceDigest, targetDigest] = await Promise.all([
      digestOf(source),
      digestOf(target),
    ]);
    const [from, to] = names;
    const rows: [string, string][] = [
      [`events in the ${from}`, String(read)],
      [`already in the ${to === 'Kafka topic' ? 'topic' : to}`, String(read - copied)],
      ['copied now', String(copied)],
      [`${from} digest`, `sha256:${sourceDigest}`],
      [`${to} digest`, `sha256:${targetDigest}`],
    ];
    const width = Math.max(...rows.map(([label]) => label.length)) + 2;
    const verdict = sourceDigest === targetDigest ? 'digests match' : `DIGESTS DIFFER: the ${to} holds events that are not in the ${from}`;
    io.stdout.write([...rows.map(([label, value]) => `${`${label}:`.padEnd(width)}${value}`), verdict, ''].join('\n'));
    return sourceDigest === targetDigest ? 0 : 1;
  } finally {
    await target?.close();
    await source.close();
  }
}

async function digestOf(log: EventLog): Promise<string> {
  const model: ReadModel = createReadModel();
  await foldLog(log, model);
  return stateDigest(model.reports);
}
