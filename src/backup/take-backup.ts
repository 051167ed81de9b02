// `reports backup`'s work: an online backup of the embedded log, beside a running server that
// keeps writing. The log is append-only and the writer only ever adds whole batches after its end,
// so the bytes up to the last whole batch seen now stay as they are: they are copied without any
// lock, after one fdatasync of the log (the writer's batches written before it are then on disk,
// so the copy ends on a durable batch; it costs the writer at most the wait of one group commit).
// keys.db is read right after that prefix is fixed: every create in the prefix had its key put
// before it was appended, so the keys of the reports live in the prefix are there. It is read
// again at the end, and a report of the prefix deleted meanwhile (its delete came after the
// prefix, its key's destruction before that read) gets no key in the backup: the backup holds
// no key destroyed before it was done, and a restore deletes such a report again. The copy, its keys (backup-keys.ts) and the newest snapshot usable for it go into
// `DEST.partial-<pid>`, are checked (verify-backup.ts, with those keys), and only then get their
// manifest and the name DEST: a backup that is killed leaves no DEST, and its partial directory is
// removed by the next backup to DEST.
import { lstat, mkdir, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { Logger } from 'pino';
import type { ToolRun } from '../tool-run.js';
import { ensurePrivateDir, PRIVATE_DIR_MODE, syncDir } from '../data-dir/data-dir.js';
import { FILE_MAGIC } from '../log/file/frames.js';
import { openFileLogReader } from '../log/file/file-log-reader.js';
import { checkMagic, CorruptLogError, scanFrames, type BatchPoint } from '../log/file/recovery.js';
import { batchLacksKeys } from '../log/file/unkeyed-tail.js';
import { ensureRoom, LOG_RESERVE_BYTES, SnapshotSpaceError } from '../snapshot/snapshot-space.js';
import { loadNewestSnapshot, snapshotDir, writeSnapshot } from '../snapshot/snapshot-store.js';
import { openRegularFile } from '../regular-file.js';
import { removeStaleFiles } from '../stale-files.js';
import { NO_KEYS, type KeyId } from '../keys/key-store.js';
import { SLOT_BYTES } from '../keys/key-slots.js';
import { readKeyTable } from '../keys/key-tables.js';
import { recordedDeletions } from '../keys/recorded-deletions.js';
import type { SlotTable } from '../keys/slot-table.js';
import { stateDigest } from '../projector/fold-log.js';
import { BACKUP_FORMAT, BackupError, writeManifest, type BackupManifest } from './backup-manifest.js';
import { refuseInsideDataDir } from './backup-place.js';
import { refuseKeylessSealedLog, writeBackupKeys } from './backup-keys.js';
import { deletedSince } from './deleted-since.js';
import { copyDurably } from './durable-files.js';
import { verifyBackupDir } from './verify-backup.js';

export interface BackupOptions {
  readonly dataDir: string;
  readonly dest: string;
  readonly run: ToolRun;
  readonly logger: Logger;
}

export type TakenBackup = BackupManifest & {
  readonly dir: string;
  readonly liveReports: number;
  /** Reports live in the copied log whose deletes reached keys.db as it was read: a restore deletes them again. */
  readonly deletedWhileTaken: readonly string[];
};

interface Prefix {
  readonly bytes: number;
  readonly starts: number[];
  readonly lastBatch?: BatchPoint;
}

/** A data directory without keys.db has put no key. */
const NO_KEYS_PUT = { wasPut: (ids: readonly KeyId[]) => ids.length === 0 };

/** keys.db as read beside a running writer: a slot caught mid-put (damaged as read) is not put yet. */
const putBy = (keys: SlotTable) => ({ wasPut: (ids: readonly KeyId[]) => keys.wasPut(ids, { damagedIsPut: false }) });

/** The log's whole batches as of now, made durable: where they end and the byte of every record. */
async function durablePrefix(file: FileHandle, path: string): Promise<Prefix> {
  if ((await checkMagic(file, path)) !== 'ok') return { bytes: 0, starts: [] };
  const scan = await scanFrames(file, FILE_MAGIC.length);
  const problem = scan.problem;
  if (problem?.validFramesFollow)
    throw new CorruptLogError(path, problem.bytePosition, problem.recordOffset, problem.reason);
  await file.datasync();
  return { bytes: scan.validBytes, starts: scan.starts, lastBatch: scan.lastBatch };
}

/** The free space a backup leaves where it is written: the log's reserve when that is the log's own file system. */
async function reserveAt(dataDir: string, parent: string): Promise<number> {
  const [data, target] = await Promise.all([stat(dataDir), stat(parent)]);
  return data.dev === target.dev ? LOG_RESERVE_BYTES : 0;
}

export async function takeBackup({ dataDir, dest, run, logger }: BackupOptions): Promise<TakenBackup> {
  const target = resolve(dest);
  const parent = dirname(target);
  // lstat: a dangling symbolic link exists too (the backup's last rename would fail on it, at the end).
  if (
    await lstat(target).then(
      () => true,
      () => false,
    )
  )
    throw new BackupError(`${target} exists: a backup goes into a new directory, never over another`);
  await refuseInsideDataDir(target, dataDir, 'back up into');
  await ensurePrivateDir(parent);
  await removeStaleFiles(
    parent,
    new RegExp(`^${escape(basename(target))}\\.partial-(\\d+)$`),
    logger,
    'removed the partial directory of an interrupted backup',
  );
  const path = join(dataDir, 'events.log');
  const source = await openRegularFile(path).catch((error: NodeJS.ErrnoException) => {
    throw error.code === 'ENOENT' ? new BackupError(`no event log at ${path} (REPORTS_DATA_DIR)`) : error;
  });
  const partial = `${target}.partial-${process.pid}`;
  try {
    const reserveBytes = await reserveAt(dataDir, parent);
    await mkdir(partial, { mode: PRIVATE_DIR_MODE });
    const { prefix, keys } = await copyLogAndKeys({ source, path, dataDir, partial, run, reserveBytes });
    // The room keys.db takes when it is written, after the snapshot, kept for it.
    await copyUsableSnapshot(dataDir, partial, logger, reserveBytes + (keys?.slots ?? 0) * SLOT_BYTES);
    const verified = await verifyBackupDir(partial, run, logger, keys ?? NO_KEYS);
    refuseKeylessSealedLog(keys, verified.model.reports.sealedKeyIds(), dataDir);
    // keys.db read again at the end: a report of the copy deleted since keys.db was first read (a
    // 204 answered while the backup ran) has its key destroyed in the backup too.
    const keysReadAt = new Date();
    const latest = keys === undefined ? undefined : await readKeyTable(dataDir);
    const backupKeys =
      keys === undefined ? null : await writeBackupKeys(partial, keys, latest ?? keys, verified.model.reports);
    const written = await readKeyTable(partial);
    const digest = `sha256:${stateDigest(verified.model.reports, written ?? NO_KEYS)}`;
    const deletedWhileTaken =
      written === undefined
        ? []
        : deletedSince(verified.model.reports, recordedDeletions([written])).map(({ id }) => id);
    // The log is the backup; a snapshot is a shortcut, left out when it does not fold to the same state.
    if (verified.snapshotProblem !== undefined) {
      logger.warn(
        { reason: verified.snapshotProblem },
        'left the snapshot out of the backup: it does not fold to the state of the log',
      );
      await rm(snapshotDir(partial), { recursive: true, force: true });
    }
    if (verified.records !== prefix.starts.length || verified.bytes !== prefix.bytes)
      throw new BackupError(
        `the copy holds ${verified.records} records in ${verified.bytes} bytes, the log ${prefix.starts.length} in ${prefix.bytes}`,
      );
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      createdAt: keysReadAt.toISOString(),
      log: verified.log,
      records: verified.records,
      bytes: prefix.bytes,
      digest,
      snapshot: verified.snapshot,
      keys: backupKeys,
    };
    await writeManifest(partial, manifest);
    await syncDir(partial);
    await rename(partial, target);
    await syncDir(parent);
    return { ...manifest, dir: target, liveReports: verified.liveReports, deletedWhileTaken };
  } catch (error) {
    await rm(partial, { recursive: true, force: true });
    throw error;
  } finally {
    await source.close();
  }
}

interface CopiedLog {
  readonly prefix: Prefix;
  /** keys.db as read right after the prefix was fixed; undefined when the data directory has none. */
  readonly keys: SlotTable | undefined;
}

/** Fixes the log's durable prefix, reads keys.db at once, and copies the prefix into `partial` (over an earlier copy). */
async function copyLogAndKeys({
  source,
  path,
  dataDir,
  partial,
  run,
  reserveBytes,
}: {
  source: FileHandle;
  path: string;
  dataDir: string;
  partial: string;
  run: ToolRun;
  reserveBytes: number;
}): Promise<CopiedLog> {
  const whole = await durablePrefix(source, path);
  const keys = await readKeyTable(dataDir);
  // The log writes a batch and the keys it needs at once (unkeyed-tail.ts), so its last batch may be
  // on disk while a key is not yet in keys.db: that batch is not acknowledged yet, and the backup
  // ends before it, as a restart would cut it. Else it would hold a create without its key.
  const { lastBatch } = whole;
  const unkeyed =
    lastBatch !== undefined &&
    (await batchLacksKeys(source, lastBatch, keys === undefined ? NO_KEYS_PUT : putBy(keys)));
  const prefix = unkeyed ? { bytes: lastBatch.byte, starts: whole.starts.slice(0, lastBatch.offset) } : whole;
  const target = join(partial, 'events.log');
  await rm(target, { force: true });
  const bytes = prefix.bytes + (keys?.slots ?? 0) * SLOT_BYTES;
  await ensureRoom(dirname(partial), bytes, reserveBytes, "the backup's log and keys");
  await copyPrefix(source, prefix, target, run);
  return { prefix, keys };
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Copies the prefix, with a progress bar in records on a terminal. */
async function copyPrefix(
  source: FileHandle,
  { bytes, starts }: { bytes: number; starts: readonly number[] },
  target: string,
  run: ToolRun,
): Promise<void> {
  const progress = run.progress('backup', starts.length);
  let records = 0;
  await copyDurably(
    source,
    bytes,
    target,
    (copied) => {
      while (records < starts.length && (starts[records] as number) < copied) records += 1;
      progress.update(records);
    },
    run.signal,
  );
  progress.stop();
}

/**
 * Writes the newest snapshot that is usable for the copied log (intact, of this history, not beyond
 * the copy's end) into the backup. The server's newer snapshots, beyond the copy, are skipped
 * quietly: that is expected here, not a warning.
 */
async function copyUsableSnapshot(
  dataDir: string,
  partial: string,
  logger: Logger,
  reserveBytes: number,
): Promise<void> {
  const log = await openFileLogReader({ dir: partial, logger });
  try {
    const quiet = logger.child({}, { level: 'error' });
    const snapshot = await loadNewestSnapshot({
      dir: snapshotDir(dataDir),
      log,
      head: await log.head(),
      logger: quiet,
    });
    if (snapshot) await writeSnapshot(snapshotDir(partial), snapshot, { reserveBytes });
  } catch (error) {
    // The log is the backup; a snapshot is a shortcut, left out when there is no room for it.
    if (!(error instanceof SnapshotSpaceError)) throw error;
    await rm(snapshotDir(partial), { recursive: true, force: true });
    logger.warn(
      { snapshotBytes: error.snapshotBytes, freeBytes: error.freeBytes },
      'left the snapshot out of the backup: there is no room for it beside the log and its keys',
    );
  } finally {
    await log.close();
  }
}
