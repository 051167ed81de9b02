// A rename into the data directory (or a removal) replaces a symbolic link there, not what it
// points to: a restore or a rewrite of the history would leave the old keys.db, events.log or
// snapshots behind at the link's target (keys a later delete no longer reaches, content in the clear that the rewrite was
// to forget), on the volume the operator chose for it, without a word. Such files are refused first.
import { lstat, readlink } from 'node:fs/promises';
import { join } from 'node:path';

/** Throws, naming the file and its target, when any of `names` in `dataDir` is a symbolic link. */
export async function refuseLinkedFiles(dataDir: string, names: readonly string[], doing: string): Promise<void> {
  for (const name of names) {
    const path = join(dataDir, name);
    const info = await lstat(path).catch(() => undefined);
    if (info?.isSymbolicLink() !== true) continue;
    const target = await readlink(path).catch(() => 'where it points');
    throw new Error(
      `refusing to ${doing}: ${path} is a symbolic link to ${target}, and the old ${name} is replaced (a new one renamed into its place, or removed), which would leave the one at ${target} as it is, with what it holds; move the file into the data directory (or make the link's volume the data directory itself), then run this again; nothing was changed`,
    );
  }
}
