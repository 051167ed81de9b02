// Checks a backup directory as `reports verify` checks a log (frames, CRCs, every record, the fold)
// and, when it holds a snapshot, that the snapshot belongs to the backup's log and folds with its
// tail to the same state digest as the whole fold. The digest is taken with the backup's keys (a
// sealed report's line is its content digest, which only its key holds). Nothing in a backup is
// trusted unchecked.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { checkFrames, checkRecords, type Findings } from '../verify/log-checks.js';
import type { ToolRun } from '../tool-run.js';
import { NO_KEYS, type KeyLookup } from '../keys/key-store.js';
import { cursorTotal, type EventLog } from '../log/event-log.js';
import { openFileLogReader } from '../log/file/file-log-reader.js';
import { foldLog, stateDigest } from '../projector/fold-log.js';
import type { ReadModel } from '../read-model/read-model.js';
import { loadNewestSnapshot, snapshotDir, snapshotFileName } from '../snapshot/snapshot-store.js';
import { BackupError } from './backup-manifest.js';

export interface VerifiedBackup {
  readonly log: string;
  readonly records: number;
  /** Length of the backup's log file. */
  readonly bytes: number;
  readonly liveReports: number;
  /** `sha256:<hex>` of the whole fold. */
  readonly digest: string;
  /** The snapshot file that checked out, or null when the backup has none (or one that did not). */
  readonly snapshot: string | null;
  /** Why the backup's snapshot did not check out: it is not to be used. */
  readonly snapshotProblem?: string;
  /** The whole fold of the backup's log. */
  readonly model: ReadModel;
}

/** Throws BackupError naming the first problem of the log; a snapshot that does not check out is reported, not thrown. */
export async function verifyBackupDir(
  dir: string,
  run: ToolRun,
  logger: Logger,
  keys: KeyLookup = NO_KEYS,
): Promise<VerifiedBackup> {
  const frames = await checkFrames(dir);
  if (frames) throw new BackupError(`${dir}: ${frames.reason} at ${frames.position}`);
  const log = await openFileLogReader({ dir, logger });
  try {
    const findings: Findings = { records: 0, voidEvents: 0, problems: 0 };
    const model = await checkRecords(log, true, run, findings);
    run.signal.throwIfAborted();
    if (findings.first)
      throw new BackupError(
        `${join(dir, 'events.log')}: ${findings.problems} problem(s); the first at ${findings.first.position}: ${findings.first.reason}`,
      );
    const digest = `sha256:${stateDigest(model.reports, keys)}`;
    const snapshot = await checkSnapshot(dir, log, digest, keys, logger);
    const bytes = (await stat(join(dir, 'events.log'))).size;
    return {
      log: log.identity,
      records: model.counts.records,
      bytes,
      liveReports: model.reports.size,
      digest,
      ...snapshot,
      model,
    };
  } finally {
    await log.close();
  }
}

/** The backup's snapshot, checked to fold (with the log after it) to `digest`. */
async function checkSnapshot(
  dir: string,
  log: EventLog,
  digest: string,
  keys: KeyLookup,
  logger: Logger,
): Promise<Pick<VerifiedBackup, 'snapshot' | 'snapshotProblem'>> {
  const head = await log.head();
  const snapshot = await loadNewestSnapshot({ dir: snapshotDir(dir), log, head, logger });
  if (snapshot === undefined) return { snapshot: null };
  const name = snapshotFileName(cursorTotal(snapshot.model.cursor));
  await foldLog(log, snapshot.model, { to: head });
  const folded = `sha256:${stateDigest(snapshot.model.reports, keys)}`;
  if (folded === digest) return { snapshot: name };
  return {
    snapshot: null,
    snapshotProblem: `${join(snapshotDir(dir), name)} and the log after it fold to ${folded}, the whole log to ${digest}`,
  };
}
