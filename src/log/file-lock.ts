// One process at a time holds a data directory. The lock is a file created with O_EXCL that holds
// the owner's pid; a lock left by a process that no longer exists (a crash, SIGKILL) is taken over.
import { open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';

export class DataDirLockedError extends Error {
  constructor(readonly dir: string, readonly ownerPid: number) {
    super(`data directory ${dir} is in use by process ${ownerPid} (only one process may hold it)`);
    this.name = 'DataDirLockedError';
  }
}

export interface DirLock {
  release(): Promise<void>;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function lockDir(dir: string): Promise<DirLock> {
  const path = join(dir, 'LOCK');
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      const handle = await open(path, 'wx', 0o644);
      await handle.writeFile(`${process.pid}\n`);
      await handle.sync();
      await handle.close();
      return { release: () => unlink(path).catch(() => undefined) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const ownerPid = Number.parseInt(await readFile(path, 'utf8').catch(() => ''), 10);
    if (Number.isInteger(ownerPid) && ownerPid > 0 && processAlive(ownerPid)) throw new DataDirLockedError(dir, ownerPid);
    // Stale (owner gone) or half-written: remove and try again.
    await unlink(path).catch(() => undefined);
  }
  throw new Error(`could not lock data directory ${dir}`);
}
