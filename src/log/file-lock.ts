// One process at a time holds a data directory. The lock is a file named LOCK holding the owner's
// pid, created atomically (written under a private name, then hard-linked into place, so it never
// exists half-written). A lock left by a process that no longer exists (a crash, SIGKILL) is
// taken over: it is first renamed to a private name, so two processes cannot both take it over.
import { link, readFile, rename, unlink, writeFile } from 'node:fs/promises';
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

const errorCode = (error: unknown) => (error as NodeJS.ErrnoException).code;
const readPid = async (path: string) => Number.parseInt(await readFile(path, 'utf8').catch(() => ''), 10);

/** Moves a stale lock out of the way; restores it if it turned out to be a fresh one. */
async function takeOver(path: string, stalePid: number): Promise<void> {
  const aside = `${path}.stale.${process.pid}`;
  try {
    await rename(path, aside);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return;
    throw error;
  }
  if (!Object.is(await readPid(aside), stalePid)) {
    // Another process replaced the stale lock between our read and our rename: put it back.
    await link(aside, path).catch(() => undefined);
  }
  await unlink(aside).catch(() => undefined);
}

export async function lockDir(dir: string): Promise<DirLock> {
  const path = join(dir, 'LOCK');
  const mine = `${path}.${process.pid}.tmp`;
  await writeFile(mine, `${process.pid}\n`);
  try {
    for (let attempt = 0; attempt < 5; attempt += 1) {
      try {
        await link(mine, path);
        return { release: () => unlink(path).catch(() => undefined) };
      } catch (error) {
        if (errorCode(error) !== 'EEXIST') throw error;
      }
      const ownerPid = await readPid(path);
      if (Number.isInteger(ownerPid) && ownerPid > 0 && processAlive(ownerPid)) throw new DataDirLockedError(dir, ownerPid);
      await takeOver(path, ownerPid);
    }
    throw new Error(`could not lock data directory ${dir}`);
  } finally {
    await unlink(mine).catch(() => undefined);
  }
}
