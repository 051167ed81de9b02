// One process at a time holds a data directory. The lock is a sequence of generation files,
// LOCK.1, LOCK.2, …, each created whole and exclusively (written under a private name, then
// hard-linked into place; link() fails when the name exists). The highest generation says who
// holds the directory, or that it was released. A stale generation n (its writer is gone) is taken
// over only by creating generation n+1, which exactly one racer can do; a racer that finds a
// higher generation after creating its own lost and withdraws. The highest generation is never
// removed, so the generation only grows and a name cannot be created twice while it matters.
import { randomUUID } from 'node:crypto';
import { link, readdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PRIVATE_FILE_MODE } from '../../data-dir/data-dir.js';
import {
  currentOwner,
  describeHolder,
  lockHolder,
  ownerAlive,
  parseOwner,
  type LockHolder,
  type LockOwner,
} from '../../data-dir/lock-owner.js';

export class DataDirLockedError extends Error {
  /** Who holds it, as a refusal names it: "a server (process N)", "`reports restore` (process N)". */
  readonly holder: string;
  constructor(
    readonly dir: string,
    readonly ownerPid: number,
    holder: LockHolder | undefined = undefined,
  ) {
    const named = describeHolder(ownerPid, holder);
    super(`data directory ${dir} is in use by ${named} (only one process may hold it)`);
    this.holder = named;
    this.name = 'DataDirLockedError';
  }
}

export interface DirLock {
  release(): Promise<void>;
}

const GENERATION = /^LOCK\.(\d+)$/;
const RELEASED = '{"released":true}\n';
const errorCode = (error: unknown) => (error as NodeJS.ErrnoException).code;
const generationPath = (dir: string, generation: number) => join(dir, `LOCK.${generation}`);

async function generations(dir: string): Promise<number[]> {
  const names = await readdir(dir);
  return names
    .flatMap((name) => GENERATION.exec(name)?.[1] ?? [])
    .map(Number)
    .sort((a, b) => a - b);
}

/** Creates `path` holding `content`, atomically and only if it does not exist. */
async function createExclusive(dir: string, path: string, content: string): Promise<boolean> {
  const temporary = join(dir, `LOCK.tmp.${process.pid}.${randomUUID()}`);
  try {
    // Inside the try: a write that fails (a full disk) leaves no temporary file behind either.
    await writeFile(temporary, content, { mode: PRIVATE_FILE_MODE });
    await link(temporary, path);
    return true;
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false;
    throw error;
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
}

/** The live owner of generation `n`, or undefined when it was released or its writer is gone. */
async function liveOwner(dir: string, generation: number, me: LockOwner): Promise<LockOwner | undefined> {
  const text = await readFile(generationPath(dir, generation), 'utf8').catch(() => RELEASED);
  const owner = parseOwner(text);
  return owner !== undefined && (await ownerAlive(owner, me)) ? owner : undefined;
}

async function removeBelow(dir: string, generation: number): Promise<void> {
  // In increasing order, and never the highest generation.
  for (const older of await generations(dir))
    if (older < generation) await unlink(generationPath(dir, older)).catch(() => undefined);
}

/**
 * `reclaimOwn`: a generation this very process holds is taken over, as a stale one is: the server
 * opening its data directory again after it went read-only, when the release could not be written.
 */
export async function lockDir(
  dir: string,
  { reclaimOwn = false }: { readonly reclaimOwn?: boolean } = {},
): Promise<DirLock> {
  const me = await currentOwner();
  const content = `${JSON.stringify({ ...me, nonce: randomUUID() })}\n`;
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const current = (await generations(dir)).at(-1) ?? 0;
    const owner = current > 0 ? await liveOwner(dir, current, me) : undefined;
    if (owner && !(reclaimOwn && owner.pid === me.pid && owner.startTime === me.startTime))
      throw new DataDirLockedError(dir, owner.pid, await lockHolder(owner.pid));
    const mine = current + 1;
    if (
      !(await createExclusive(dir, generationPath(dir, mine), content).catch((error: unknown) => fullDisk(dir, error)))
    )
      continue;
    if (((await generations(dir)).at(-1) ?? 0) > mine) {
      // A name that was used and removed before: someone is already past it. Withdraw.
      await unlink(generationPath(dir, mine));
      continue;
    }
    await removeBelow(dir, mine);
    return { release: () => release(dir, mine) };
  }
  throw new Error(`could not lock data directory ${dir}`);
}

/** A full file system named as such, with the directory (write(2)'s own message names neither). */
function fullDisk(dir: string, error: unknown): never {
  const code = errorCode(error);
  if (code !== 'ENOSPC' && code !== 'EDQUOT') throw error;
  throw Object.assign(
    new Error(
      `cannot lock data directory ${dir}: its file system is full (${(error as Error).message}); free some space there`,
      {
        cause: error,
      },
    ),
    { code },
  );
}

async function release(dir: string, generation: number): Promise<void> {
  const released = await createExclusive(dir, generationPath(dir, generation + 1), RELEASED).catch(() => false);
  // A release that could not be written (a full disk) keeps this generation: the highest is never
  // removed, and a holder that has gone reads as stale to the next start, which takes it over.
  if (!released && !(await generations(dir)).some((other) => other > generation)) return;
  await removeBelow(dir, generation + 1);
}
