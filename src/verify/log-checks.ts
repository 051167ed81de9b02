// The checks of `reports verify`, also run on every backup (`reports backup`, `reports restore`):
// frames and CRCs of a file log, then every record against the event schema, its key against its
// subject, unique event ids and the fold rules. The fold's read model is handed back, so a caller
// has the state digest of exactly what it checked.
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { decodeEvent } from '../../projections/codec.js';
import { cursorTotal, type EventLog, type LogPosition } from '../log/event-log.js';
import { FILE_MAGIC } from '../log/file/frames.js';
import { checkMagic, scanFrames } from '../log/file/recovery.js';
import { applyRecord, createReadModel, type ReadModel } from '../read-model/read-model.js';
import { formatPosition, type LogKind } from '../log/positions.js';
import type { ToolRun } from '../tool-run.js';
import { hasKeyedHeads } from '../log/capabilities.js';
import { openRegularFile } from '../regular-file.js';
import { readRecords } from '../log/record-batches.js';

export interface Problem {
  readonly position: string;
  readonly reason: string;
}

/** A frame-level finding; `fatal` when no record can be read past it (mid-log damage, not a log). */
export interface FrameProblem extends Problem {
  readonly fatal: boolean;
}

/** Frame-level check of the file log, without repairing anything. */
export async function checkFrames(dataDir: string): Promise<FrameProblem | undefined> {
  const path = join(dataDir, 'events.log');
  const file = await openRegularFile(path).catch((error: NodeJS.ErrnoException) => {
    throw error.code === 'ENOENT' ? new Error(`no event log at ${path} (REPORTS_DATA_DIR)`) : error;
  });
  try {
    const magic = await checkMagic(file, path);
    if (magic === 'bad') return { position: 'byte 0', reason: 'bad magic bytes: not a report store log', fatal: true };
    if (magic === 'empty') return undefined;
    const torn = 'torn tail (an unacknowledged write; the server cuts it at start)';
    // A first start that crashed inside the magic: the server starts such a log empty, as the reader reads it.
    if (magic === 'partial')
      return { position: '0', reason: `${torn} at byte 0: the magic bytes are cut short`, fatal: false };
    const scan = await scanFrames(file, FILE_MAGIC.length);
    if (!scan.problem) return undefined;
    const { recordOffset, bytePosition, reason, validFramesFollow } = scan.problem;
    const kind = validFramesFollow ? 'corrupt record (valid records follow it)' : torn;
    return {
      position: String(recordOffset),
      reason: `${kind} at byte ${bytePosition}: ${reason}`,
      fatal: validFramesFollow,
    };
  } finally {
    await file.close();
  }
}

export interface Findings {
  records: number;
  voidEvents: number;
  /** Void events that are copies of an earlier record (same event id) a Kafka producer's retry wrote; none is a problem. */
  copies?: number;
  problems: number;
  first?: Problem;
}

/**
 * Checks every record of `log` into `findings` and returns the read model it folded. `singleWriter`
 * (the file log): a void event is a fault, not a race of instances.
 */
export async function checkRecords(
  log: EventLog,
  singleWriter: boolean,
  run: ToolRun,
  findings: Findings,
  /** Told of each record whose key belongs to another partition (every one: repartitioning must account for all). */
  misplaced: (line: string) => void = () => undefined,
): Promise<ReadModel> {
  const model = createReadModel();
  /** Each event id read, with its record's CRC-32: only the same bytes again are a producer's copy. */
  const eventIds = new Map<string, number>();
  // The single-writer log is the file log, whose positions print without a partition.
  const kind: LogKind = singleWriter ? 'file' : 'kafka';
  const fail = (position: LogPosition, reason: string) => {
    findings.problems += 1;
    findings.first ??= { position: formatPosition(position, kind), reason };
  };
  const progress = run.progress('verify', cursorTotal(await log.head()));
  // Asked once, not per record: a long log is checked record by record.
  const keyed = hasKeyedHeads(log) ? log : undefined;
  const home = (key: string) => keyed?.partitionFor(key);
  for await (const record of readRecords(log, new Map(), { signal: run.signal })) {
    findings.records += 1;
    progress.update(findings.records);
    const partition = home(record.key);
    if (partition !== undefined && partition !== record.position.partition) {
      // Every one is listed: repartitioning has to account for all of them.
      const reason = `key "${record.key}" belongs to partition ${partition}: the partition count changed after this record was written`;
      misplaced(`misplaced ${formatPosition(record.position, kind)}: ${reason}`);
      fail(record.position, reason);
    }
    const decoded = decodeEvent(record.value);
    if (!decoded.ok) {
      applyRecord(model, record);
      fail(record.position, `not a valid event: ${decoded.reason}`);
      continue;
    }
    const { event } = decoded;
    if (record.key !== event.subject)
      fail(record.position, `key "${record.key}" does not name the event's report ${event.subject}`);
    const checksum = crc32(record.value);
    const first = eventIds.get(event.id);
    const seen = first !== undefined;
    if (!seen) eventIds.set(event.id, checksum);
    const applied = applyRecord(model, record, event);
    // Kafka's producer can write a record twice (a retry of a request whose answer was lost): the
    // copy, the same bytes, changes nothing, and is counted. A copy that did change something, or
    // another record under the same event id, is a fault, and so is any copy in the file log (its
    // one writer never sends a record twice).
    if (seen && (singleWriter || applied.kind !== 'void' || first !== checksum))
      fail(record.position, `event id ${event.id} appears twice (a duplicated write)`);
    else if (seen) findings.copies = (findings.copies ?? 0) + 1;
    if (applied.kind === 'void') {
      findings.voidEvents += 1;
      if (singleWriter)
        fail(
          record.position,
          `void ${event.type} for report ${event.subject}: the file log has one writer, which never writes one`,
        );
    }
  }
  progress.stop();
  return model;
}
