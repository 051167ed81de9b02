// What the data directory's own log (the one a restore replaces) says of the reports of a backup:
// the version each report reached there, when that log continues the backup's history. A report
// live in the backup whose id went further in that log was deleted since (and maybe created
// again), whatever keys.db says: keys.db may be missing, cut short or damaged (the reason for the
// restore, often), or a crash may have left a delete in the log whose key's destruction it never
// wrote. The log is the truth; keys.db's record of deletions only adds what no log kept.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { decodeEvent } from '../../projections/codec.js';
import type { ReportsView } from '../../projections/reports.js';
import { openFileLogReader } from '../log/file/file-log-reader.js';
import { LOG_FILE } from '../log/file/log-generation.js';
import { readRecords } from '../log/record-batches.js';
import { foldLog } from '../projector/fold-log.js';
import { createReadModel } from '../read-model/read-model.js';

export type ReportVersions = Pick<ReportsView, 'version'>;

/**
 * The versions the data directory's log took its reports to, if it holds the backup's history
 * (the backup's last record at the same position: the same event, by its id, type and subject;
 * not byte for byte, since a restore or `seal-history` seals a create in the clear in place, and
 * keeps its id); undefined when there is no log,
 * it is another history (a directory of another store, or one restored from another backup), or
 * it cannot be read whole (said in a warning: keys.db's record alone is used then).
 */
export async function continuedHistory(
  dataDir: string,
  backupDir: string,
  backupRecords: number,
  logger: Logger,
  signal?: AbortSignal,
): Promise<ReportVersions | undefined> {
  const exists = await stat(join(dataDir, LOG_FILE)).then(
    () => true,
    () => false,
  );
  if (!exists) return undefined;
  try {
    const last = backupRecords === 0 ? undefined : await recordValueAt(backupDir, backupRecords - 1, logger);
    const log = await openFileLogReader({ dir: dataDir, logger });
    try {
      let continues = backupRecords === 0;
      const model = createReadModel();
      await foldLog(log, model, {
        ...(signal ? { signal } : {}),
        onRecord: ({ position, value }) => {
          if (position.offset === backupRecords - 1) continues = last !== undefined && sameEvent(value, last);
        },
      });
      return continues ? model.reports : undefined;
    } finally {
      await log.close();
    }
  } catch (error) {
    signal?.throwIfAborted();
    logger.warn(
      { err: error, path: join(dataDir, LOG_FILE) },
      "the data directory's log could not be read whole to find the deletions made since the backup: keys.db's record of deletions alone is used",
    );
    return undefined;
  }
}

async function recordValueAt(dir: string, offset: number, logger: Logger): Promise<Buffer | undefined> {
  const log = await openFileLogReader({ dir, logger });
  try {
    for await (const record of readRecords(log, new Map([[0, offset]]))) return record.value;
    return undefined;
  } finally {
    await log.close();
  }
}

/** Whether two records hold the same event (a create sealed since keeps its id, type and subject). */
function sameEvent(a: Buffer, b: Buffer): boolean {
  if (a.equals(b)) return true;
  const [first, second] = [decodeEvent(a), decodeEvent(b)];
  if (!first.ok || !second.ok) return false;
  return (
    first.event.id === second.event.id &&
    first.event.type === second.event.type &&
    first.event.subject === second.event.subject
  );
}
