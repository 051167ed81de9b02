// `reports restore`'s work: puts a backup in place of a data directory's log, keys and snapshots,
// only while no server holds the directory. It takes the directory's lock first and keeps it to the
// end, so a running server makes it refuse at once, and no server can start meanwhile. The backup
// is checked again (it may have been moved or altered since it was taken) against its manifest.
// A restore never brings a deleted report back: before anything changes, the whole restore is built
// in a staging directory (restore-staging.ts), where every deletion made since the backup was taken
// (the data directory's keys.db records them, outside what a restore replaces, and its log holds
// them when it continues the backup's history: continued-history.ts) is applied again to
// the backup's history and every create written in the clear is sealed. Then keys.db is renamed
// into place (it opens the old log as well as the new one), the old snapshots are removed, the new
// log is renamed over the old one, and the backup's snapshot follows when it holds nothing in the
// clear. Killed at any moment, it leaves one whole log with the keys it needs (and at worst a
// staging directory, removed by the next restore or start); a snapshot is checked against the log
// at every start, so one of another history is never used. The token file stays.
import { rename, rm } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { Logger } from 'pino';
import type { ToolRun } from '../tool-run.js';
import type { SealedCounts } from '../history/rewrite-history.js';
import { KEYS_FILE } from '../keys/key-file.js';
import { NO_KEYS } from '../keys/key-store.js';
import { readKeyTable } from '../keys/key-tables.js';
import type { SlotTable } from '../keys/slot-table.js';
import { ensurePrivateDir, STAGING_DIR, syncDir } from '../data-dir/data-dir.js';
import { DataDirLockedError, lockDir, type DirLock } from '../log/file/lock.js';
import { installGeneration, LOG_FILE } from '../log/file/log-generation.js';
import { refuseLinkedFiles } from '../data-dir/linked-files.js';
import { ensureRoom, LOG_RESERVE_BYTES } from '../snapshot/snapshot-space.js';
import { snapshotDir, SNAPSHOTS_DIR } from '../snapshot/snapshot-store.js';
import { openRegularFile } from '../regular-file.js';
import { removeStaleFiles } from '../stale-files.js';
import { BackupError, readManifest, type BackupManifest } from './backup-manifest.js';
import { firstForeignSlot } from '../keys/merged-keys.js';
import { refuseInsideDataDir } from './backup-place.js';
import { continuedHistory } from './continued-history.js';
import { copyDurably } from './durable-files.js';
import { keepReplacedLog, type ReplacedLog } from './replaced-log.js';
import { stageRestore, type StagedRestore } from './restore-staging.js';
import { verifyBackupDir, type VerifiedBackup } from './verify-backup.js';

export interface RestoreOptions {
  readonly src: string;
  readonly dataDir: string;
  /** The `source` of the ReportDeleted events a restore writes for deletions made since the backup. */
  readonly eventSource: string;
  readonly run: ToolRun;
  readonly logger: Logger;
}

export interface Restored {
  readonly manifest: BackupManifest;
  /** Records of the restored log: the backup's, then the deletes applied again. */
  readonly records: number;
  readonly digest: string;
  readonly liveReports: number;
  /** Ids of the reports of the backup deleted again (deleted since it was taken). */
  readonly deletedAgain: readonly string[];
  /** What told the deletions made since: the data directory's keys.db, its log (continuing the backup's history). */
  readonly deletionsFrom: { readonly keys: boolean; readonly log: boolean };
  /** Creates written in the clear that the restore sealed. */
  readonly sealed: SealedCounts;
  /** The snapshot put in place, if any. */
  readonly snapshot: string | null;
  /** The log that was replaced: where it was kept, or why not; undefined when there was none. */
  readonly previousLog: ReplacedLog;
}

/** A restore was refused because a server holds the data directory. */
export class RestoreRefusedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly ownerPid: number,
    holder: string = `a server (process ${ownerPid})`,
  ) {
    super(
      `refusing to restore into ${dataDir}: ${holder} is running on it; stop it first, then run reports restore again`,
    );
    this.name = 'RestoreRefusedError';
  }
}

async function lockForRestore(dataDir: string): Promise<DirLock> {
  await ensurePrivateDir(dataDir);
  return lockDir(dataDir).catch((error: unknown) => {
    throw error instanceof DataDirLockedError ? new RestoreRefusedError(dataDir, error.ownerPid, error.holder) : error;
  });
}

export async function restoreBackup({ src, dataDir, eventSource, run, logger }: RestoreOptions): Promise<Restored> {
  const source = resolve(src);
  await refuseInsideDataDir(source, dataDir, 'restore from');
  const manifest = await readManifest(source);
  const lock = await lockForRestore(dataDir);
  try {
    await refuseLinkedFiles(dataDir, [KEYS_FILE, LOG_FILE, SNAPSHOTS_DIR], 'restore');
    const backupKeys = await keysOfBackup(source, manifest);
    const verified = await verifyBackupDir(source, run, logger, backupKeys ?? NO_KEYS);
    checkAgainstManifest(source, manifest, verified);
    await ensureRoom(dataDir, manifest.bytes, LOG_RESERVE_BYTES, 'the restored log');
    await removeStaleFiles(
      dataDir,
      STAGING_DIR,
      logger,
      'removed the staging directory of an interrupted restore or seal-history',
    );
    await removeStaleFiles(
      dataDir,
      /^events\.log\.restore-(\d+)\.tmp$/,
      logger,
      'removed the log of an interrupted restore',
    );
    const currentKeys = await readKeyTable(dataDir);
    const foreign = firstForeignSlot(currentKeys, backupKeys);
    if (foreign !== undefined)
      throw new BackupError(
        `${join(dataDir, KEYS_FILE)} belongs to another store than the backup (its key slot ${foreign} holds another key than the backup's): a restore merges the data directory's keys and deletions into the backup's, which would give its reports wrong keys and delete them. Restore into a new data directory, or move this one's files aside first`,
      );
    const continued = await continuedHistory(dataDir, source, verified.records, logger, run.signal);
    const staged = await stageRestore({
      source,
      dataDir,
      verified,
      backupKeys,
      currentKeys,
      continued,
      eventSource,
      run,
      logger,
    });
    try {
      const previousLog = await keepReplacedLog(dataDir, logger);
      // A snapshot of a history with content in the clear holds that content.
      const snapshot = totalSealed(staged.sealed) === 0 ? manifest.snapshot : null;
      const installed = await install(
        staged,
        dataDir,
        snapshot === null ? undefined : join(snapshotDir(source), snapshot),
        run,
        logger,
      );
      return {
        manifest,
        records: staged.records,
        digest: staged.digest,
        liveReports: staged.liveReports,
        deletedAgain: staged.deletedAgain,
        deletionsFrom: { keys: currentKeys !== undefined, log: continued !== undefined },
        sealed: staged.sealed,
        snapshot: installed ? snapshot : null,
        previousLog,
      };
    } finally {
      await rm(staged.dir, { recursive: true, force: true });
    }
  } finally {
    await lock.release();
  }
}

function totalSealed({ live, deleted, void: voided }: SealedCounts): number {
  return live + deleted + voided;
}

/** The backup's keys.db, checked against its manifest; undefined for a backup without one. */
async function keysOfBackup(source: string, manifest: BackupManifest): Promise<SlotTable | undefined> {
  if (manifest.format === 1 || manifest.keys === null) return undefined;
  const keys = await readKeyTable(source);
  if (keys?.slots !== manifest.keys.slots)
    throw new BackupError(
      `${source} does not match its manifest: its keys.db holds ${keys?.slots ?? 'no'} slots, the manifest says ${manifest.keys.slots}`,
    );
  return keys;
}

function checkAgainstManifest(source: string, manifest: BackupManifest, verified: VerifiedBackup): void {
  if (verified.snapshotProblem !== undefined) throw new BackupError(verified.snapshotProblem);
  const found = {
    records: verified.records,
    bytes: verified.bytes,
    digest: verified.digest,
    snapshot: verified.snapshot,
    log: verified.log,
  };
  for (const [field, value] of Object.entries(found)) {
    const expected = manifest[field as keyof typeof found];
    if (value !== expected)
      throw new BackupError(
        `${source} does not match its manifest: ${field} is ${String(value)}, the manifest says ${String(expected)}`,
      );
  }
}

/**
 * Puts the staged keys.db, then the staged log, in place; then the snapshot. keys.db goes first:
 * it holds every key of the old log too, so a restore killed between the two renames leaves the
 * old log with keys that open it. Once the log is in place the restore has happened: a snapshot
 * that cannot be copied (a full disk, an interrupt) is left out with a warning, the server then folding the log
 * from its start, rather than failing a command whose data is already replaced. Whether it was.
 */
async function install(
  staged: StagedRestore,
  dataDir: string,
  snapshot: string | undefined,
  run: ToolRun,
  logger: Logger,
): Promise<boolean> {
  await rename(join(staged.dir, KEYS_FILE), join(dataDir, KEYS_FILE));
  await syncDir(dataDir);
  await rm(snapshotDir(dataDir), { recursive: true, force: true });
  await installGeneration(staged.dir, dataDir);
  if (snapshot === undefined) return false;
  const snapshots = snapshotDir(dataDir);
  const name = basename(snapshot);
  // Under a temporary name, as the server writes its own: a start removes it if this is killed.
  const temporary = join(snapshots, `${name}.${process.pid}.tmp`);
  try {
    await ensurePrivateDir(snapshots);
    await copyFile(snapshot, temporary, run);
    await rename(temporary, join(snapshots, name));
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => undefined);
    logger.warn(
      { err: error, snapshot: name },
      "the restore is done, but the backup's snapshot could not be copied: the server folds the restored log from its start",
    );
    return false;
  }
  // In place: a crash before its entry is durable loses a shortcut only (the start folds the log).
  await syncDir(snapshots).catch((error: unknown) =>
    logger.warn({ err: error, snapshot: name }, "the restored snapshot is in place; its directory's sync failed"),
  );
  return true;
}

/** Copies a whole file durably; with `records`, a progress bar in records on a terminal (by the share of bytes copied). */
async function copyFile(from: string, to: string, run: ToolRun, records = 0): Promise<void> {
  const file = await openRegularFile(from);
  try {
    const bytes = (await file.stat()).size;
    const progress = run.progress('restore', records);
    await copyDurably(
      file,
      bytes,
      to,
      (copied) => progress.update(Math.floor((records * copied) / Math.max(bytes, 1))),
      run.signal,
    );
    progress.stop();
  } finally {
    await file.close();
  }
}
