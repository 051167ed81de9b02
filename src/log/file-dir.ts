// Files of the data directory: the directory is private (0700) and so is every file in it (0600).
// A new directory entry is durable only once its directory is fsynced: without that an OS crash
// right after a first start can lose the file that was just created (the log, the token).
import { mkdir, open } from 'node:fs/promises';
import { dirname } from 'node:path';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Makes a directory's entries (files created, renamed or removed in it) durable. */
export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Creates `dir` (mode 0700) when missing and makes its creation durable; an existing one is left as it is. */
export async function ensurePrivateDir(dir: string): Promise<void> {
  const created = await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (created === undefined) return;
  // mkdir -p may have created several levels: sync each new directory's parent, deepest last.
  for (let path = dir; ; path = dirname(path)) {
    await syncDir(dirname(path));
    if (path === created || dirname(path) === path) break;
  }
}
