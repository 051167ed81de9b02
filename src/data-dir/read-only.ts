// A data directory whose file system went read-only (EROFS: a disk error made the kernel remount
// it so, or an operator did). Unlike a full disk (space-watch.ts) nothing the service can do brings
// the writes back: the kernel keeps a file system that failed this way read-only, and will not let
// an operator unmount, check and mount it again, while any process holds a file on it. So the
// server lets go of every file of the data directory (server.ts), answers 503 meanwhile, and opens
// the directory again, as a start does, once a probe file can be written there.
import { open, unlink } from 'node:fs/promises';
import { join } from 'node:path';

/** Whether `error`, or an error it wraps (`cause`), is the file system saying it is read-only. */
export function isReadOnlyError(error: unknown): boolean {
  for (let at = error, depth = 0; at instanceof Error && depth < 8; at = at.cause, depth += 1) {
    if ((at as NodeJS.ErrnoException).code === 'EROFS') return true;
  }
  return false;
}

/** How often a read-only data directory is tried for writing. */
export const WRITABLE_POLL_MS = 1_000;

const PROBE_NAME = '.writable-probe';

/** Whether a file can be created, written, synced and removed in `dir` now. */
export async function dirWritable(dir: string): Promise<boolean> {
  const path = join(dir, PROBE_NAME);
  try {
    const file = await open(path, 'w', 0o600);
    try {
      await file.write('probe\n');
      await file.sync();
    } finally {
      await file.close();
    }
    await unlink(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether the file system of `dir` refuses a new file as read-only now: after a write failed some
 * other way (EIO from a failing disk comes first, the remount read-only with it; a full disk), so
 * that the server lets go of the directory then too.
 */
export async function readOnlyNow(dir: string): Promise<boolean> {
  const path = join(dir, PROBE_NAME);
  try {
    const file = await open(path, 'w', 0o600);
    await file.close();
    await unlink(path).catch(() => undefined);
    return false;
  } catch (error) {
    return isReadOnlyError(error);
  }
}
