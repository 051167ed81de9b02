// `reports verify`: checks the whole log — frames and CRCs on the file log; on both logs every
// record against the envelope schema, its key against the report it names, event ids unique, and
// the fold (a void event on the single-writer file log is a fault). Names the first bad position
// and exits 1 on any problem.
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeEvent } from '../../projections/codec.js';
import { loadConfig, type Config } from '../config.js';
import { cursorTotal, type EventLog, type LogPosition } from '../log/event-log.js';
import { applyRecord, createReadModel } from '../read-model/read-model.js';
import { checkMagic, scanFrames } from '../log/file-recovery.js';
import { FILE_MAGIC } from '../log/file-frames.js';
import { formatPosition, logKind } from './positions.js';
import { startProgress } from './progress.js';
import { openToolLog, toolLogger } from './tool-log.js';
import type { CliIo, CommandSpec, ParsedCommand } from './usage.js';

export const verifyCommand = {
  name: 'verify',
  usage: 'reports verify [--json]',
  description: [
    'Checks the whole event log: frames and CRCs (file log); on both logs, every record against the',
    'event schema, its key against its subject, unique event ids, and the fold rules (a void event is',
    'a fault on the single-writer file log, and counted on Kafka, where racing instances write them).',
    'Prints the first bad position and exits 1 on any problem, 0 when the log is sound.',
  ].join('\n'),
  options: { json: { type: 'boolean' } },
} satisfies CommandSpec;

export interface Problem {
  readonly position: string;
  readonly reason: string;
}

/** A frame-level finding; `fatal` when no record can be read past it (mid-log damage, not a log). */
interface FrameProblem extends Problem {
  readonly fatal: boolean;
}

/** Frame-level check of the file log, without repairing anything. */
async function checkFrames(dataDir: string): Promise<FrameProblem | undefined> {
  const path = join(dataDir, 'events.log');
  const file = await open(path, 'r').catch((error: NodeJS.ErrnoException) => {
    throw error.code === 'ENOENT' ? new Error(`no event log at ${path} (REPORTS_DATA_DIR)`) : error;
  });
  try {
    const magic = await checkMagic(file);
    if (magic === 'bad') return { position: 'byte 0', reason: 'bad magic bytes: not a report store log', fatal: true };
    if (magic === 'empty') return undefined;
    const torn = 'torn tail (an unacknowledged write; the server cuts it at start)';
    // A first start that crashed inside the magic: the server starts such a log empty, as the reader reads it.
    if (magic === 'partial') return { position: '0', reason: `${torn} at byte 0: the magic bytes are cut short`, fatal: false };
    const scan = await scanFrames(file, FILE_MAGIC.length);
    if (!scan.problem) return undefined;
    const { recordOffset, bytePosition, reason, validFramesFollow } = scan.problem;
    const kind = validFramesFollow ? 'corrupt record (valid records follow it)' : torn;
    return { position: String(recordOffset), reason: `${kind} at byte ${bytePosition}: ${reason}`, fatal: validFramesFollow };
  } finally {
    await file.close();
  }
}

interface Findings {
  records: number;
  voidEvents: number;
  problems: number;
  first?: Problem;
}

async function checkRecords(log: EventLog, config: Config, io: CliIo, findings: Findings): Promise<void> {
  const model = createReadModel();
  const eventIds = new Set<string>();
  const singleWriter = config.kafka === undefined;
  const fail = (position: LogPosition, reason: string) => {
    findings.problems += 1;
    findings.first ??= { position: formatPosition(position, logKind(config)), reason };
  };
  const progress = startProgress(io, 'verify', cursorTotal(await log.head()));
  for await (const record of log.read(new Map(), { signal: io.signal })) {
    findings.records += 1;
    progress.update(findings.records);
    const home = log.partitionFor?.(record.key);
    if (home !== undefined && home !== record.position.partition) {
      // Every one is listed: repartitioning has to account for all of them.
      const reason = `key "${record.key}" belongs to partition ${home}: the partition count changed after this record was written`;
      io.stderr.write(`misplaced ${formatPosition(record.position, logKind(config))}: ${reason}
`);
      fail(record.position, reason);
    }
    const decoded = decodeEvent(record.value);
    if (!decoded.ok) {
      applyRecord(model, record);
      fail(record.position, `not a valid event: ${decoded.reason}`);
      continue;
    }
    const { event } = decoded;
    if (record.key !== event.subject) fail(record.position, `key "${record.key}" does not name the event's report ${event.subject}`);
    if (eventIds.has(event.id)) fail(record.position, `event id ${event.id} appears twice (a duplicated write)`);
    eventIds.add(event.id);
    if (applyRecord(model, record, event).kind === 'void') {
      findings.voidEvents += 1;
      if (singleWriter) fail(record.position, `void ${event.type} for report ${event.subject}: the file log has one writer, which never writes one`);
    }
  }
  progress.stop();
}

const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

export async function runVerify(parsed: ParsedCommand, io: CliIo): Promise<number> {
  const config = loadConfig(io.env);
  const findings: Findings = { records: 0, voidEvents: 0, problems: 0 };
  const frameProblem = config.kafka ? undefined : await checkFrames(config.dataDir);
  if (frameProblem) {
    findings.problems += 1;
    findings.first = { position: frameProblem.position, reason: frameProblem.reason };
  }
  if (!frameProblem?.fatal) {
    const log = await openToolLog(config, toolLogger(io, config));
    try {
      await checkRecords(log, config, io, findings);
    } finally {
      await log.close();
    }
  }
  if (parsed.values['json'] === true) {
    io.stdout.write(`${JSON.stringify({ ok: findings.problems === 0, ...findings })}\n`);
  } else if (frameProblem?.fatal) {
    // Nothing past the damage can be read, so no record was read at all: say that, not "in 0 records".
    io.stdout.write(`FAILED: the log cannot be read past ${frameProblem.position}: ${frameProblem.reason}; its records were not checked\n`);
  } else if (findings.first) {
    io.stdout.write(`FAILED: ${count(findings.problems, 'problem')} in ${count(findings.records, 'record')}; first at ${findings.first.position}: ${findings.first.reason}\n`);
  } else {
    io.stdout.write(`OK: ${findings.records} records, ${findings.voidEvents} void events\n`);
  }
  return findings.problems === 0 ? 0 : 1;
}
