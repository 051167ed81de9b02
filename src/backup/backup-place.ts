// Where a backup may be: never inside the data directory it is a backup of. A restore replaces that
// directory's log and removes its snapshots; a restore from `data/snapshots/backup` replaced the log,
// then removed the backup it was copying from, and failed half done. And a backup inside the
// directory is lost with it.
import { realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { BackupError } from './backup-manifest.js';

/** The real path of `path` (symbolic links resolved), or of its nearest existing ancestor followed by the rest (a path yet to be made). */
async function realPlace(path: string): Promise<string> {
  const absolute = resolve(path);
  const real = await realpath(absolute).catch(() => undefined);
  if (real !== undefined) return real;
  const parent = dirname(absolute);
  return parent === absolute ? absolute : join(await realPlace(parent), basename(absolute));
}

/** Whether `path` is `dir` or lies inside it, after symbolic links. */
export async function isWithin(path: string, dir: string): Promise<boolean> {
  const [place, root] = await Promise.all([realPlace(path), realPlace(dir)]);
  const rel = relative(root, place);
  return rel === '' || !(rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel));
}

/** Throws BackupError when `path` (a backup's directory, given as `role`) lies inside the data directory `dataDir`. */
export async function refuseInsideDataDir(
  path: string,
  dataDir: string,
  role: 'back up into' | 'restore from',
): Promise<void> {
  if (!(await isWithin(path, dataDir))) return;
  throw new BackupError(
    `refusing to ${role} ${resolve(path)}: it is inside the data directory ${dataDir} (REPORTS_DATA_DIR), whose log and snapshots a restore replaces; keep backups outside it`,
  );
}
