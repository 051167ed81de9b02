// A full disk is an outage, not an end: a durable write that failed for want of space (ENOSPC, or
// EDQUOT, a quota) leaves the file's durable prefix as it was, because every earlier write was
// confirmed on disk and the failed one only touched bytes past that prefix. Cutting the file back
// to the prefix (truncate, then sync) drops whatever the failed write left in the page cache, and
// the file is again exactly what was acknowledged. So the embedded log and keys.db answer 503
// while the disk is full, watch the file system's free space, and take writes again by themselves
// once an operator has freed some; no restart. Any other write failure (EIO: the disk itself)
// still fails every write until a restart checks the files again.
import { statfs } from 'node:fs/promises';

/** Free bytes the file system must have before writes are tried again (so a few bytes freed do not make it flap). */
export const RESUME_FREE_BYTES = 1024 * 1024;
/** How often the free space is looked at while writes are refused. */
export const SPACE_POLL_MS = 1_000;

const SPACE_CODES: ReadonlySet<unknown> = new Set(['ENOSPC', 'EDQUOT']);

/** Whether `error`, or an error it wraps (`cause`), is the file system saying it has no room. */
export function isSpaceError(error: unknown): boolean {
  for (let at = error, depth = 0; at instanceof Error && depth < 8; at = at.cause, depth += 1) {
    if (SPACE_CODES.has((at as NodeJS.ErrnoException).code)) return true;
  }
  return false;
}

export interface SpaceWatchOptions {
  /** A path on the file system to watch (the data directory). */
  readonly path: string;
  readonly freeBytes?: number;
  readonly pollMs?: number;
  /** The free bytes of the file system holding `path` (statfs unless given: tests fake a disk). */
  readonly free?: (path: string) => Promise<number>;
}

async function statfsFree(path: string): Promise<number> {
  const { bavail, bsize } = await statfs(path);
  return bavail * bsize;
}

/**
 * Polls the free space while `resume` is wanted: once there is room, calls `resume`, and stops when
 * it answers true (false: try again at the next poll). One watch at a time; `stop` at close.
 */
export class SpaceWatch {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly options: SpaceWatchOptions) {}

  /** Whether a watch is running (writes are refused for want of space). */
  get watching(): boolean {
    return this.timer !== undefined;
  }

  start(resume: () => Promise<boolean>): void {
    if (this.timer !== undefined || this.stopped) return;
    const { path, freeBytes = RESUME_FREE_BYTES, pollMs = SPACE_POLL_MS, free = statfsFree } = this.options;
    let busy = false;
    const poll = async () => {
      if (busy) return;
      busy = true;
      try {
        if ((await free(path)) >= freeBytes && (await resume())) this.stop(false);
      } catch {
        // statfs or the resumption failed: the disk is still no good; the next poll tries again.
      } finally {
        busy = false;
      }
    };
    // Unref'd: a full disk is no reason to keep a process alive that is otherwise done.
    this.timer = setInterval(() => void poll(), pollMs).unref();
  }

  /** Stops the watch; `forGood` (at close) also refuses any later start. */
  stop(forGood = true): void {
    clearInterval(this.timer);
    this.timer = undefined;
    if (forGood) this.stopped = true;
  }
}
