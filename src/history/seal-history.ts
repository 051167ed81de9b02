// `reports seal-history`'s work: makes a stopped data directory forget the content of reports
// deleted before erasure existed. Their creates were written in the clear; the log is written again
// as a new generation, record for record (offsets and timestamps unchanged), every create in the
// clear sealed (rewrite-history.ts: a live report's under a new key, the others' under a key
// destroyed at once), checked to fold to the same state digest as the old one, and put in place by
// one rename. The snapshots go first (they hold content in the clear, deleted reports' included,
// and would be used with the new log), the old log with the rename. Killed at any moment, the data
// directory holds the old log or the new one, whole, with every key either needs: keys are durable
// before the rename, and those the old log never refers to are orphans the next start sweeps.
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { ToolRun } from '../tool-run.js';
import { openFileKeyStore, type FileKeyStore } from '../keys/file-key-store.js';
import { PRIVATE_DIR_MODE, stagingDir, syncDir } from '../data-dir/data-dir.js';
import { openFileLogReader } from '../log/file/file-log-reader.js';
import type { FileLog } from '../log/file/file-log.js';
import { DataDirLockedError, lockDir, type DirLock } from '../log/file/lock.js';
import { createLogGeneration, installGeneration, LOG_FILE } from '../log/file/log-generation.js';
import { refuseLinkedFiles } from '../data-dir/linked-files.js';
import { stateDigest } from '../projector/fold-log.js';
import { snapshotDir, SNAPSHOTS_DIR } from '../snapshot/snapshot-store.js';
import { ensureRoom, LOG_RESERVE_BYTES } from '../snapshot/snapshot-space.js';
import { SLOT_BYTES } from '../keys/key-slots.js';
import { foldedDigest } from './folded-digest.js';
import { analyseHistory } from './plain-fates.js';
import { rewriteHistory, type SealedCounts } from './rewrite-history.js';

export interface SealHistoryOptions {
  readonly dataDir: string;
  readonly run: ToolRun;
  readonly logger: Logger;
}

export interface SealedHistory {
  /** Records in the log, before and after. */
  readonly records: number;
  /** What was sealed; undefined when every create was sealed already (nothing written). */
  readonly sealed: SealedCounts | undefined;
  /** The state digest, before and after (`sha256:<hex>`). */
  readonly digest: string;
  readonly snapshotsRemoved: number;
  /** Logs an earlier restore kept beside this one (`events.log.before-restore-<time>`): not rewritten. */
  readonly keptLogs: readonly string[];
}

/** The rewrite was refused or did not check out; the data directory is as it was. */
export class SealHistoryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SealHistoryError';
  }
}

async function lockForRewrite(dataDir: string): Promise<DirLock> {
  await stat(join(dataDir, LOG_FILE)).catch(() => {
    throw new SealHistoryError(`no event log at ${join(dataDir, LOG_FILE)} (REPORTS_DATA_DIR)`);
  });
  return lockDir(dataDir).catch((error: unknown) => {
    throw error instanceof DataDirLockedError
      ? new SealHistoryError(
          `refusing to rewrite the log of ${dataDir}: ${error.holder} is running on it; stop it first`,
        )
      : error;
  });
}

/** Runs `work` with a progress bar of `total` records on a terminal. */
async function phase<T>(
  run: ToolRun,
  label: string,
  total: number,
  work: (onProgress: (records: number) => void) => Promise<T>,
): Promise<T> {
  const progress = run.progress(label, total);
  try {
    return await work((records) => progress.update(records));
  } finally {
    progress.stop();
  }
}

export async function sealHistory({ dataDir, run, logger }: SealHistoryOptions): Promise<SealedHistory> {
  const lock = await lockForRewrite(dataDir);
  try {
    await refuseLinkedFiles(dataDir, [LOG_FILE, SNAPSHOTS_DIR], 'seal the history');
    // Opened first: it removes what an earlier run that was killed left, before this one stages anything.
    const keys = await openFileKeyStore({ dir: dataDir, logger, create: true });
    try {
      const log = await openFileLogReader({ dir: dataDir, logger });
      try {
        return await sealOpened({ dataDir, log, keys, run, logger });
      } finally {
        await log.close();
      }
    } finally {
      await keys.close();
    }
  } finally {
    await lock.release();
  }
}

interface Opened {
  readonly dataDir: string;
  readonly log: FileLog;
  readonly keys: FileKeyStore;
  readonly run: ToolRun;
  readonly logger: Logger;
}

async function sealOpened({ dataDir, log, keys, run, logger }: Opened): Promise<SealedHistory> {
  const records = (await log.head()).get(0) ?? 0;
  const { signal } = run;
  const { model, fates } = await phase(run, 'read', records, (onProgress) =>
    analyseHistory(log, { signal, onProgress }),
  );
  signal.throwIfAborted();
  const digest = `sha256:${stateDigest(model.reports, await keys.lookup())}`;
  const keptLogs = (await readdir(dataDir)).filter((name) => name.startsWith(`${LOG_FILE}.before-restore-`));
  if (fates.plainCreates === 0) return { records, sealed: undefined, digest, snapshotsRemoved: 0, keptLogs };
  // Before a key is put: a run that fails for want of space took keys.db slots for good (they are
  // never used again), so each try on a disk too small left less room than the one before.
  await ensureRoom(
    dataDir,
    sealedLogBytes((await stat(join(dataDir, LOG_FILE))).size, fates.plainCreates) + fates.plainCreates * SLOT_BYTES,
    LOG_RESERVE_BYTES,
    'the sealed copy of the log and its keys',
  );
  const staging = stagingDir(dataDir, 'seal-history');
  await mkdir(staging, { mode: PRIVATE_DIR_MODE });
  try {
    const target = await createLogGeneration(staging);
    const sealed = await phase(run, 'seal', records, (onProgress) =>
      rewriteHistory({ source: log, target, keys, fates, signal, onProgress }),
    ).catch(async (error: unknown) => {
      await target.abandon();
      throw error;
    });
    await target.finish();
    signal.throwIfAborted();
    const after = await phase(run, 'verify', records, (onProgress) =>
      foldedDigest(staging, () => keys.lookup(), logger, { signal, onProgress }),
    );
    if (after.digest !== digest || after.model.counts.records !== records) {
      throw new SealHistoryError(
        `the rewritten log folds to ${after.digest} in ${after.model.counts.records} records, the log to ${digest} in ${records}; nothing was changed`,
      );
    }
    const snapshotsRemoved = await removeSnapshots(dataDir);
    await installGeneration(staging, dataDir);
    return { records, sealed, digest, snapshotsRemoved, keptLogs };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * At most what the sealed copy of a log of `bytes` with `plainCreates` creates in the clear takes:
 * sealed, a content grows by a third (base64) and its key id, box tag and field names (under 100 bytes).
 */
function sealedLogBytes(bytes: number, plainCreates: number): number {
  return Math.ceil(bytes * (4 / 3)) + plainCreates * 100;
}

/** Removes every snapshot (and the directory); how many there were. */
async function removeSnapshots(dataDir: string): Promise<number> {
  const dir = snapshotDir(dataDir);
  const names = await readdir(dir).catch(() => [] as string[]);
  await rm(dir, { recursive: true, force: true });
  await syncDir(dataDir);
  return names.filter((name) => name.endsWith('.snap')).length;
}
