// A restore built beside the data directory before anything in it changes, in a staging directory
// that holds what the restore will put in place: keys.db (the current one and the backup's merged,
// merged-keys.ts) and the backup's log written again (rewrite-history.ts): every create written in
// the clear sealed, then a ReportDeleted for every report live in the backup that the record of
// deletions (the current keys.db's and the backup's own) says was deleted since, each decided on
// the report's version there. The deleted reports' keys are destroyed in the staged keys.db (they
// were already, where the current store destroyed them) and their deletions recorded. Checked
// before it is used: the staged log, folded with the staged keys, gives the backup's state less
// the deleted reports.
import { randomUUID } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { encodeEvent } from '../../projections/codec.js';
import type { ToolRun } from '../tool-run.js';
import { foldedDigest } from '../history/folded-digest.js';
import { analyseHistory } from '../history/plain-fates.js';
import { rewriteHistory, type SealedCounts } from '../history/rewrite-history.js';
import { openFileKeyStore, type FileKeyStore } from '../keys/file-key-store.js';
import { KEYS_FILE } from '../keys/key-file.js';
import { parseKeyId } from '../keys/key-store.js';
import { writeKeyFile } from '../keys/key-tables.js';
import { mergeKeyTables } from '../keys/merged-keys.js';
import type { ReportVersions } from './continued-history.js';
import { recordedDeletions } from '../keys/recorded-deletions.js';
import type { SlotTable } from '../keys/slot-table.js';
import type { LogMessage } from '../log/event-log.js';
import { PRIVATE_DIR_MODE, stagingDir } from '../data-dir/data-dir.js';
import { openFileLogReader } from '../log/file/file-log-reader.js';
import { createLogGeneration } from '../log/file/log-generation.js';
import { stateDigest } from '../projector/fold-log.js';
import { isoClock, reportDeleted } from '../reports/envelope.js';
import { BackupError } from './backup-manifest.js';
import { deletedSince, type DeletedSince } from './deleted-since.js';
import type { VerifiedBackup } from './verify-backup.js';

export interface StageOptions {
  readonly source: string;
  readonly dataDir: string;
  readonly verified: VerifiedBackup;
  /** The backup's keys.db (none before backup format 2, or for a history all in the clear). */
  readonly backupKeys: SlotTable | undefined;
  /** The data directory's keys.db as it is before the restore. */
  readonly currentKeys: SlotTable | undefined;
  /** The versions the data directory's log took the reports to, when it continues the backup's history. */
  readonly continued: ReportVersions | undefined;
  /** The `source` of the ReportDeleted events the restore writes (REPORTS_EVENT_SOURCE). */
  readonly eventSource: string;
  readonly run: ToolRun;
  readonly logger: Logger;
}

export interface StagedRestore {
  readonly dir: string;
  /** Records of the staged log: the backup's, then one per deletion re-applied. */
  readonly records: number;
  readonly digest: string;
  readonly liveReports: number;
  /** Reports deleted again, in the order their deletes were written. */
  readonly deletedAgain: readonly string[];
  readonly sealed: SealedCounts;
}

export async function stageRestore(options: StageOptions): Promise<StagedRestore> {
  const dir = stagingDir(options.dataDir, 'restore');
  await mkdir(dir, { mode: PRIVATE_DIR_MODE });
  try {
    // A damaged slot counts as a destruction a crash tore only where no log says better: a log that
    // continues the backup's history tells deleted reports by their versions, and a damaged slot of
    // a report it holds live is corruption, for which the backup's key is the cure.
    const merged = mergeKeyTables(options.currentKeys, options.backupKeys, options.continued === undefined);
    await writeKeyFile(join(dir, KEYS_FILE), merged.slots, (slot) => merged.contentOf(slot));
    const keys = await openFileKeyStore({ dir, logger: options.logger });
    try {
      return await stageLog(dir, keys, options);
    } finally {
      await keys.close();
    }
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

async function stageLog(
  dir: string,
  keys: FileKeyStore,
  { source, verified, backupKeys, currentKeys, continued, eventSource, run, logger }: StageOptions,
): Promise<StagedRestore> {
  // A damaged slot of the current keys.db counts as destroyed (a destruction torn by a crash reads so) unless the log tells.
  const record = recordedDeletions(
    [currentKeys, backupKeys].filter((table) => table !== undefined),
    continued === undefined ? currentKeys : undefined,
  );
  const again = deletedSince(verified.model.reports, record, continued);
  const log = await openFileLogReader({ dir: source, logger });
  let sealed: SealedCounts;
  try {
    const { fates } = await analyseHistory(log, { signal: run.signal });
    for (const { id, version, key } of again) if (key === undefined) fates.markDeleted(id, version + 1);
    const target = await createLogGeneration(dir);
    const progress = run.progress('restore', verified.records);
    sealed = await rewriteHistory({
      source: log,
      target,
      keys,
      fates,
      tail: deletes(again, eventSource),
      signal: run.signal,
      onProgress: (records) => progress.update(records),
    }).catch(async (error: unknown) => {
      await target.abandon();
      throw error;
    });
    progress.stop();
    await target.finish();
  } finally {
    await log.close();
  }
  run.signal.throwIfAborted();
  await keys.recordDeletions(
    again.flatMap(({ id, version, key }) => (key === undefined ? [] : [{ reportId: id, version: version + 1, key }])),
  );
  // What the staged log must fold to: the backup's state without the reports deleted again.
  for (const { id } of again) verified.model.reports.delete(id);
  const expected = `sha256:${stateDigest(verified.model.reports, await keys.lookup())}`;
  const folded = await foldedDigest(dir, () => keys.lookup(), logger, { signal: run.signal });
  const records = verified.records + again.length;
  if (folded.digest !== expected || folded.model.counts.records !== records)
    throw new BackupError(
      `the restored log folds to ${folded.digest} in ${folded.model.counts.records} records, where the backup less the reports deleted since gives ${expected} in ${records}; nothing was changed`,
    );
  const newest = folded.model.newestKey;
  if (newest !== undefined && !keys.holds(parseKeyId(newest))) {
    throw new BackupError(
      `the backup's log refers to key ${newest}, which neither the backup (taken before backups held keys.db) nor the data directory's keys.db holds; nothing was changed`,
    );
  }
  return {
    dir,
    records,
    digest: folded.digest,
    liveReports: folded.model.reports.size,
    deletedAgain: again.map(({ id }) => id),
    sealed,
  };
}

/** The ReportDeleted of each report deleted again, decided on its version in the backup. */
function deletes(again: readonly DeletedSince[], source: string): LogMessage[] {
  const context = { source, newId: randomUUID, time: isoClock() };
  return again.map(({ id, version }) => ({ key: id, value: encodeEvent(reportDeleted(context, { id }, version)) }));
}
