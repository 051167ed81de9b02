// `reports migrate --to-kafka`: copies the embedded log into the Kafka topic in order. Resumable
// and idempotent: events already in the topic (by CloudEvent id) are not copied again, so a second
// run adds nothing. Ends by comparing the state digests of both logs.
import { decodeEvent } from '../../projections/codec.js';
import { loadConfig } from '../config.js';
import type { EventLog, LogMessage } from '../log/event-log.js';
import { openFileLogReader } from '../log/file-log.js';
import { openKafkaLog } from '../log/kafka-log.js';
import { emptyFold, foldLog, stateDigest } from '../replay.js';
import { formatPosition } from './positions.js';
import { startProgress } from './progress.js';
import { toolLogger } from './tool-log.js';
import { UsageError, type CliIo, type CommandSpec, type ParsedCommand } from './usage.js';

const BATCH = 500;

export const migrateCommand = {
  name: 'migrate',
  usage: 'reports migrate --to-kafka',
  description: [
    'Copies the embedded log (REPORTS_DATA_DIR) into the Kafka topic (KAFKA_BROKERS, REPORTS_TOPIC) in order.',
    'Resumable and idempotent: events already in the topic (same CloudEvent id) are skipped, so running it',
    'again adds nothing. Ends by comparing the state digests of both logs; exits 1 if they differ.',
    'Stop the server on the embedded log first, so no event is written after the copy.',
  ].join('\n'),
  options: { 'to-kafka': { type: 'boolean' } },
} satisfies CommandSpec;

async function eventIdsIn(log: EventLog, signal: AbortSignal): Promise<Set<string>> {
  const ids = new Set<string>();
  for await (const record of log.read(new Map(), { signal })) {
    const decoded = decodeEvent(record.value);
    if (decoded.ok) ids.add(decoded.event.id);
  }
  return ids;
}

export async function runMigrate(parsed: ParsedCommand, io: CliIo): Promise<number> {
  if (parsed.values['to-kafka'] !== true) throw new UsageError('say where to: --to-kafka', migrateCommand.usage);
  const config = loadConfig(io.env);
  if (!config.kafka) throw new UsageError('KAFKA_BROKERS must name the target Kafka cluster', migrateCommand.usage);
  const logger = toolLogger(io, config);
  const source = await openFileLogReader({ dir: config.dataDir, logger });
  let target: EventLog | undefined;
  try {
    target = await openKafkaLog({ config: config.kafka, logger, writeTimeoutMs: Math.max(config.writeTimeoutMs, 30_000), createTopic: true, probeIntervalMs: 60_000 });
    const present = await eventIdsIn(target, io.signal);
    const head = await source.head();
    const progress = startProgress(io, 'migrate', head.get(0) ?? 0);
    let read = 0;
    let copied = 0;
    let batch: LogMessage[] = [];
    const flush = async () => {
      if (batch.length > 0) await (target as EventLog).append(batch);
      copied += batch.length;
      batch = [];
    };
    for await (const record of source.read(new Map(), { signal: io.signal })) {
      read += 1;
      progress.update(read);
      const decoded = decodeEvent(record.value);
      if (!decoded.ok) throw new Error(`record ${formatPosition(record.position)} is not a valid event (${decoded.reason}); run \`reports verify\``);
      if (present.has(decoded.event.id)) continue;
      batch.push({ key: decoded.event.subject, value: record.value });
      if (batch.length >= BATCH) await flush();
    }
    await flush();
    progress.stop();
    if (io.signal.aborted) return 130;
    const [fileDigest, kafkaDigest] = await Promise.all([
      foldLog(source, emptyFold()).then((fold) => stateDigest(fold.state)),
      foldLog(target, emptyFold()).then((fold) => stateDigest(fold.state)),
    ]);
    io.stdout.write(
      [
        `events in the file log: ${read}`,
        `already in the topic:   ${read - copied}`,
        `copied now:             ${copied}`,
        `file log digest:        sha256:${fileDigest}`,
        `Kafka topic digest:     sha256:${kafkaDigest}`,
        fileDigest === kafkaDigest ? 'digests match' : 'DIGESTS DIFFER: the topic holds events that are not in the file log',
        '',
      ].join('\n'),
    );
    return fileDigest === kafkaDigest ? 0 : 1;
  } finally {
    await target?.close();
    await source.close();
  }
}
