// `reports restore`'s work: puts a backup in place of a data directory's log and snapshots, only
// while no server holds the directory. It takes the directory's lock first and keeps it to the end,
// so a running server makes it refuse at once, and no server can start meanwhile. The backup is
// checked again (it may have been moved or altered since it was taken) against its manifest. The
// new log is written beside the old one and renamed over it; the old log is kept as
// `events.log.before-restore-<time>`, the old snapshots (derived data) are removed, the token file
// stays. Killed at any moment, it leaves one whole log; a snapshot is checked against the log at
// every start, so one of another history is never used.
import { open, rename, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { startProgress } from '../cli/progress.js';
import type { CliIo } from '../cli/usage.js';
import { ensurePrivateDir, syncDir } from '../log/file/data-dir.js';
import { DataDirLockedError, lockDir, type DirLock } from '../log/file/lock.js';
import { ensureRoom, LOG_RESERVE_BYTES } from '../snapshot/snapshot-space.js';
import { snapshotDir } from '../snapshot/snapshot-store.js';
import { removeStaleFiles } from '../stale-files.js';
import { BackupError, readManifest, type BackupManifest } from './backup-manifest.js';
import { copyDurably } from './durable-files.js';
import { NO_KEYS } from '../keys/key-store.js';
import { readKeyTable } from '../keys/key-tables.js';
import { verifyBackupDir, type VerifiedBackup } from './verify-backup.js';

export interface RestoreOptions {
  readonly src: string;
  readonly dataDir: string;
  readonly io: CliIo;
  readonly logger: Logger;
}

export type Restored = BackupManifest & {
  readonly liveReports: number;
  /** Where the log that was replaced was kept, if there was one. */
  readonly previousLog: string | undefined;
};

/** A restore was refused because a server holds the data directory. */
export class RestoreRefusedError extends Error {
  constructor(readonly dataDir: string, readonly ownerPid: number) {
    super(`refusing to restore into ${dataDir}: a server (process ${ownerPid}) is running on it; stop it first, then run reports restore again`);
    this.name = 'RestoreRefusedError';
  }
}

async function lockForRestore(dataDir: string): Promise<DirLock> {
  await ensurePrivateDir(dataDir);
  return lockDir(dataDir).catch((error: unknown) => {
    throw error instanceof DataDirLockedError ? new RestoreRefusedError(dataDir, error.ownerPid) : error;
  });
}

export async function restoreBackup({ src, dataDir, io, logger }: RestoreOptions): Promise<Restored> {
  const source = resolve(src);
  const manifest = await readManifest(source);
  const lock = await lockForRestore(dataDir);
  try {
    const keys = manifest.format === 1 ? undefined : await readKeyTable(source);
    const verified = await verifyBackupDir(source, io, logger, keys ?? NO_KEYS);
    checkAgainstManifest(source, manifest, verified);
    await ensureRoom(dataDir, manifest.bytes, LOG_RESERVE_BYTES);
    await removeStaleFiles(dataDir, /^events\.log\.restore-(\d+)\.tmp$/, logger, 'removed the log of an interrupted restore');
    const previousLog = await install(source, dataDir, manifest, io);
    return { ...manifest, liveReports: verified.liveReports, previousLog };
  } finally {
    await lock.release();
  }
}

function checkAgainstManifest(source: string, manifest: BackupManifest, verified: VerifiedBackup): void {
  if (verified.snapshotProblem !== undefined) throw new BackupError(verified.snapshotProblem);
  const found = { records: verified.records, bytes: verified.bytes, digest: verified.digest, snapshot: verified.snapshot, log: verified.log };
  for (const [field, value] of Object.entries(found)) {
    const expected = manifest[field as keyof typeof found];
    if (value !== expected) throw new BackupError(`${source} does not match its manifest: ${field} is ${String(value)}, the manifest says ${String(expected)}`);
  }
}

/** Puts the backup's log and snapshot in place; returns where the replaced log was kept. */
async function install(source: string, dataDir: string, manifest: BackupManifest, io: CliIo): Promise<string | undefined> {
  const log = join(dataDir, 'events.log');
  const incoming = `${log}.restore-${process.pid}.tmp`;
  await copyFile(join(source, 'events.log'), incoming, io, manifest.records);
  await rm(snapshotDir(dataDir), { recursive: true, force: true });
  const previous = `${log}.before-restore-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  const kept = await rename(log, previous).then(() => true, (error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return false;
    throw error;
  });
  await rename(incoming, log);
  await syncDir(dataDir);
  if (manifest.snapshot !== null) {
    const snapshots = snapshotDir(dataDir);
    await ensurePrivateDir(snapshots);
    // Under a temporary name, as the server writes its own: a start removes it if this is killed.
    const temporary = join(snapshots, `${manifest.snapshot}.${process.pid}.tmp`);
    await copyFile(join(snapshotDir(source), manifest.snapshot), temporary, io);
    await rename(temporary, join(snapshots, manifest.snapshot));
    await syncDir(snapshots);
  }
  return kept ? previous : undefined;
}

/** Copies a whole file durably; with `records`, a progress bar in records on a terminal (by the share of bytes copied). */
async function copyFile(from: string, to: string, io: CliIo, records = 0): Promise<void> {
  const file = await open(from, 'r');
  try {
    const bytes = (await stat(from)).size;
    const progress = startProgress(io, 'restore', records);
    await copyDurably(file, bytes, to, (copied) => progress.update(Math.floor((records * copied) / Math.max(bytes, 1))), io.signal);
    progress.stop();
  } finally {
    await file.close();
  }
}
