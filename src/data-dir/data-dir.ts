// Files of the data directory: the directory is private (0700) and so is every file in it (0600).
// A new directory entry is durable only once its directory is fsynced: without that an OS crash
// right after a first start can lose the file that was just created (the log, the token).
import { chmod, lstat, mkdir, open, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Who stages a new log (and keys.db) in the data directory before putting it in place. */
export type StagingKind = 'restore' | 'seal-history';
/** A staging directory, its writer's pid the first group: what a killed writer left is removed by name. */
export const STAGING_DIR = /^(?:restore|seal-history)-(\d+)\.staging$/;

/** The staging directory of this process for `kind` in `dataDir`. */
export function stagingDir(dataDir: string, kind: StagingKind): string {
  return join(dataDir, `${kind}-${process.pid}.staging`);
}

/** Makes a directory's entries (files created, renamed or removed in it) durable. */
export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Creates `dir` (mode 0700) and any missing parents when missing, and makes their creation durable;
 * an existing one is left as it is. Not Node's `mkdir({recursive: true})`: where a directory cannot
 * hold children and says ENOENT (under /proc), it creates the parent (EEXIST), retries the child, and
 * spins forever on a thread of its own. Here each level is created once and the first refusal is
 * final; a parent that exists but is no directory (a dangling symbolic link, a file) is named.
 */
export async function ensurePrivateDir(dir: string): Promise<void> {
  const missing: string[] = [];
  for (let path = resolve(dir); !(await isDirectory(path)); path = dirname(path)) {
    if (dirname(path) === path) throw new Error(`${dir}: the root directory is missing`);
    missing.unshift(path);
  }
  for (const path of missing) {
    await mkdir(path, { mode: PRIVATE_DIR_MODE }).catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
      if (await isDirectory(path)) return;
      const dangling = await lstat(path).then(
        (info) => info.isSymbolicLink(),
        () => false,
      );
      throw new Error(dangling ? `${path} is a symbolic link to nothing` : `${path} exists but is not a directory`, {
        cause: error,
      });
    });
    // Sync each new directory's parent, outermost first, so every level's entry is durable.
    await syncDir(dirname(path));
  }
}

/**
 * The user who must write in the data directory, when this process is another: the owner of its log
 * (the service made it, or a restore as that user), or, with no log yet and this process root, the
 * owner of the directory. Everything written there is that user's alone (0600 in a 0700 directory),
 * so a file another user makes there is one the service cannot read: a `reports snapshot` as root
 * left a root-owned `snapshots/` and the next start failed on it, a restore as root a root-owned log.
 * Undefined when this process is that user, or there is nothing to compare with (another user
 * without root can make files only in a directory open to it, and a log it makes is its own).
 */
export async function foreignOwner(
  dir: string,
): Promise<{ readonly uid: number; readonly owner: number; readonly of: string } | undefined> {
  const uid = process.geteuid?.();
  if (uid === undefined) return undefined;
  const log = join(dir, 'events.log');
  const logOwner = await stat(log).then(
    (info) => info.uid,
    () => undefined,
  );
  const [owner, of] =
    logOwner !== undefined
      ? [logOwner, log]
      : uid === 0
        ? [
            await stat(dir).then(
              (info) => info.uid,
              () => undefined,
            ),
            dir,
          ]
        : [undefined, dir];
  return owner === undefined || owner === uid ? undefined : { uid, owner, of };
}

/** What `makePrivate` found: the mode a directory had, and whether it is 0700 now. */
export interface OpenDir {
  readonly mode: number;
  readonly madePrivate: boolean;
}

/**
 * Makes an existing directory private (0700) when group or others may use it: one created before,
 * by hand or by an image (`mkdir /data` gives 0755), kept its mode. Undefined when it was private
 * already; `madePrivate: false` when this process may not change it (another user's directory).
 */
export async function makePrivate(dir: string): Promise<OpenDir | undefined> {
  const mode = (await stat(dir)).mode & 0o777;
  if ((mode & 0o077) === 0) return undefined;
  const madePrivate = await chmod(dir, PRIVATE_DIR_MODE).then(
    () => true,
    () => false,
  );
  return { mode, madePrivate };
}

/** Whether `path` is a directory (following symbolic links); false when it is missing or cannot be looked at. */
async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (info) => info.isDirectory(),
    () => false,
  );
}
