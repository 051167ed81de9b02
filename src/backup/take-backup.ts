// `reports backup`'s work: an online backup of the embedded log, beside a running server that
// keeps writing. The log is append-only and the writer only ever adds whole batches after its end,
// so the bytes up to the last whole batch seen now stay as they are: they are copied without any
// lock, after one fdatasync of the log (the writer's batches written before it are then on disk,
// so the copy ends on a durable batch; it costs the writer at most the wait of one group commit).
// The copy and the newest snapshot usable for it go into `DEST.partial-<pid>`, are checked
// (verify-backup.ts), and only then get their manifest and the name DEST: a backup that is killed
// leaves no DEST, and its partial directory is removed by the next backup to DEST.
import { mkdir, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { startProgress } from '../cli/progress.js';
import type { CliIo } from '../cli/usage.js';
import { ensurePrivateDir, PRIVATE_DIR_MODE, syncDir } from '../log/file/data-dir.js';
import { FILE_MAGIC } from '../log/file/frames.js';
import { openFileLogReader } from '../log/file/file-log-reader.js';
import { checkMagic, CorruptLogError, scanFrames } from '../log/file/recovery.js';
import { ensureRoom, LOG_RESERVE_BYTES } from '../snapshot/snapshot-space.js';
import { loadNewestSnapshot, snapshotDir, writeSnapshot } from '../snapshot/snapshot-store.js';
import { openRegularFile } from '../regular-file.js';
import { removeStaleFiles } from '../stale-files.js';
import { BACKUP_FORMAT, BackupError, writeManifest, type BackupManifest } from './backup-manifest.js';
import { refuseInsideDataDir } from './backup-place.js';
import { copyDurably } from './durable-files.js';
import { verifyBackupDir } from './verify-backup.js';

export interface BackupOptions {
  readonly dataDir: string;
  readonly dest: string;
  readonly io: CliIo;
  readonly logger: Logger;
}

export interface TakenBackup extends BackupManifest {
  readonly dir: string;
  readonly liveReports: number;
}

/** The log's whole batches as of now, made durable: where they end and the byte of every record. */
async function durablePrefix(file: FileHandle, path: string): Promise<{ bytes: number; starts: number[] }> {
  if ((await checkMagic(file, path)) !== 'ok') return { bytes: 0, starts: [] };
  const scan = await scanFrames(file, FILE_MAGIC.length);
  const problem = scan.problem;
  if (problem?.validFramesFollow) throw new CorruptLogError(path, problem.bytePosition, problem.recordOffset, problem.reason);
  await file.datasync();
  return { bytes: scan.validBytes, starts: scan.starts };
}

/** The free space a backup leaves where it is written: the log's reserve when that is the log's own file system. */
async function reserveAt(dataDir: string, parent: string): Promise<number> {
  const [data, target] = await Promise.all([stat(dataDir), stat(parent)]);
  return data.dev === target.dev ? LOG_RESERVE_BYTES : 0;
}

export async function takeBackup({ dataDir, dest, io, logger }: BackupOptions): Promise<TakenBackup> {
  const target = resolve(dest);
  const parent = dirname(target);
  if (await stat(target).then(() => true, () => false)) throw new BackupError(`${target} exists: a backup goes into a new directory, never over another`);
  await refuseInsideDataDir(target, dataDir, 'back up into');
  await ensurePrivateDir(parent);
  await removeStaleFiles(parent, new RegExp(`^${escape(basename(target))}\\.partial-(\\d+)$`), logger, 'removed the partial directory of an interrupted backup');
  const path = join(dataDir, 'events.log');
  const source = await openRegularFile(path).catch((error: NodeJS.ErrnoException) => {
    throw error.code === 'ENOENT' ? new BackupError(`no event log at ${path} (REPORTS_DATA_DIR)`) : error;
  });
  const partial = `${target}.partial-${process.pid}`;
  try {
    const prefix = await durablePrefix(source, path);
    const reserveBytes = await reserveAt(dataDir, parent);
    await ensureRoom(parent, prefix.bytes, reserveBytes);
    await mkdir(partial, { mode: PRIVATE_DIR_MODE });
    await copyPrefix(source, prefix, join(partial, 'events.log'), io);
    await copyUsableSnapshot(dataDir, partial, logger, reserveBytes);
    const verified = await verifyBackupDir(partial, io, logger);
    // The log is the backup; a snapshot is a shortcut, left out when it does not fold to the same state.
    if (verified.snapshotProblem !== undefined) {
      logger.warn({ reason: verified.snapshotProblem }, 'left the snapshot out of the backup: it does not fold to the state of the log');
      await rm(snapshotDir(partial), { recursive: true, force: true });
    }
    if (verified.records !== prefix.starts.length || verified.bytes !== prefix.bytes) throw new BackupError(`the copy holds ${verified.records} records in ${verified.bytes} bytes, the log ${prefix.starts.length} in ${prefix.bytes}`);
    const manifest: BackupManifest = { format: BACKUP_FORMAT, createdAt: new Date().toISOString(), log: verified.log, records: verified.records, bytes: prefix.bytes, digest: verified.digest, snapshot: verified.snapshot };
    await writeManifest(partial, manifest);
    await syncDir(partial);
    await rename(partial, target);
    await syncDir(parent);
    return { ...manifest, dir: target, liveReports: verified.liveReports };
  } catch (error) {
    await rm(partial, { recursive: true, force: true });
    throw error;
  } finally {
    await source.close();
  }
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Copies the prefix, with a progress bar in records on a terminal. */
async function copyPrefix(source: FileHandle, { bytes, starts }: { bytes: number; starts: readonly number[] }, target: string, io: CliIo): Promise<void> {
  const progress = startProgress(io, 'backup', starts.length);
  let records = 0;
  await copyDurably(
    source,
    bytes,
    target,
    (copied) => {
      while (records < starts.length && (starts[records] as number) < copied) records += 1;
      progress.update(records);
    },
    io.signal,
  );
  progress.stop();
}

/**
 * Writes the newest snapshot that is usable for the copied log (intact, of this history, not beyond
 * the copy's end) into the backup. The server's newer snapshots, beyond the copy, are skipped
 * quietly: that is expected here, not a warning.
 */
async function copyUsableSnapshot(dataDir: string, partial: string, logger: Logger, reserveBytes: number): Promise<void> {
  const log = await openFileLogReader({ dir: partial, logger });
  try {
    const quiet = logger.child({}, { level: 'error' });
    const snapshot = await loadNewestSnapshot({ dir: snapshotDir(dataDir), log, head: await log.head(), logger: quiet });
    if (snapshot) await writeSnapshot(snapshotDir(partial), snapshot, { reserveBytes });
  } finally {
    await log.close();
  }
}
