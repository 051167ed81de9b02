// Snapshots and the space the log needs. A snapshot is an optimisation and the log is the truth:
// a snapshot is written only when its file system keeps LOG_RESERVE_BYTES free after it (statfs,
// before anything is written), a failed one removes its temporary file (snapshot-store.ts), and a
// start removes the temporary files of writers that are gone (a SIGKILL, a power cut).
import { statfs } from 'node:fs/promises';
import type { Logger } from 'pino';
import { removeStaleFiles, type Removed } from '../stale-files.js';

/** Free space every snapshot leaves to the log: at about 300 bytes an event, some 200,000 writes. */
export const LOG_RESERVE_BYTES = 64 * 1024 * 1024;
/** A snapshot is written as `snapshot-<position>.snap.<pid>.tmp`, then renamed. */
export const TEMPORARY_SUFFIX = '.tmp';
const TEMPORARY = /^snapshot-\d{16}\.snap\.(\d+)\.tmp$/;

/** A snapshot was not written: it would have left the log less than the reserve. */
export class SnapshotSpaceError extends Error {
  constructor(
    readonly snapshotBytes: number,
    readonly freeBytes: number,
    readonly reserveBytes: number,
    what = 'a snapshot',
  ) {
    super(
      `not enough free space for ${what} of ${snapshotBytes} bytes: ${freeBytes} bytes are free and ${reserveBytes} are kept for the event log`,
    );
    this.name = 'SnapshotSpaceError';
  }
}

/** Free bytes an unprivileged writer may still use on the file system that holds `path`. */
export async function freeBytes(path: string): Promise<number> {
  const { bavail, bsize } = await statfs(path);
  return bavail * bsize;
}

/** Throws SnapshotSpaceError unless `bytes` more leave `reserveBytes` free where `dir` is. */
/** `what` names the write in the error: a snapshot unless said (a backup's copy, a restore). */
export async function ensureRoom(dir: string, bytes: number, reserveBytes: number, what?: string): Promise<void> {
  const free = await freeBytes(dir);
  if (free < bytes + reserveBytes) throw new SnapshotSpaceError(bytes, free, reserveBytes, what);
}

/**
 * Removes the temporary snapshot files whose writer no longer runs (stale-files.ts). A live
 * writer's file (`reports snapshot` beside the server) is left alone.
 */
export function removeStaleTemporaries(dir: string, logger: Logger): Promise<Removed> {
  return removeStaleFiles(dir, TEMPORARY, logger, 'removed temporary snapshot files left by a writer that stopped');
}
