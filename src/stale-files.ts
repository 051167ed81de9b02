// Files that a writer leaves while it works and renames or removes when done (a snapshot's
// temporary file, a backup's partial directory): when the writer is killed they stay behind and
// take space. Each name carries its writer's pid; what belongs to a writer that no longer runs is
// removed (a pid equal to this process's own counts as gone: a container's process is always pid 1).
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { currentOwner, ownerAlive } from './data-dir/lock-owner.js';

export interface Removed {
  readonly files: number;
  readonly bytes: number;
}

/**
 * Removes the entries of `dir` whose name `pattern` matches, its first group being the writer's pid,
 * when that writer no longer runs; logs what it removed as `message`.
 */
export async function removeStaleFiles(
  dir: string,
  pattern: RegExp,
  logger: Logger,
  message: string,
): Promise<Removed> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const me = await currentOwner();
  let files = 0;
  let bytes = 0;
  for (const name of names) {
    const pid = Number(pattern.exec(name)?.[1] ?? Number.NaN);
    if (Number.isNaN(pid) || (await ownerAlive({ pid }, me))) continue;
    const path = join(dir, name);
    bytes += await stat(path).then(
      (info) => (info.isFile() ? info.size : 0),
      () => 0,
    );
    await rm(path, { recursive: true, force: true });
    files += 1;
  }
  if (files > 0) logger.info({ dir, files, bytes }, message);
  return { files, bytes };
}
