// Opening a file that is to be read, and is to be a regular file: what a backup or a snapshots
// directory holds can be anything a user put there. Opening a FIFO for reading blocks until a writer
// comes, in one of libuv's threads: `reports restore` on a backup whose events.log was a FIFO hung
// for ever holding the data directory's lock, and the process could not even exit (Node's exit waits
// for that thread). O_NONBLOCK makes that open return at once; the file's type is then checked on
// the descriptor itself, so nothing can be swapped in between.
import { constants, open, type FileHandle } from 'node:fs/promises';
import type { Stats } from 'node:fs';

/** A path that is something other than a regular file (a FIFO, a directory, a socket, a device). */
export class NotRegularFileError extends Error {
  constructor(
    readonly path: string,
    readonly kind: string,
  ) {
    super(`${path} is ${kind}, not a regular file`);
    this.name = 'NotRegularFileError';
  }
}

function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  return 'not a file';
}

/** Opens `path` for reading; NotRegularFileError when it is not a regular file (symbolic links are followed). */
export async function openRegularFile(path: string): Promise<FileHandle> {
  const file = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stats = await file.stat();
    if (!stats.isFile()) throw new NotRegularFileError(path, kindOf(stats));
    return file;
  } catch (error) {
    await file.close();
    throw error;
  }
}

/** The whole of the regular file `path`. */
export async function readRegularFile(path: string): Promise<Buffer> {
  const file = await openRegularFile(path);
  try {
    return await file.readFile();
  } finally {
    await file.close();
  }
}

/** Throws NotRegularFileError unless the open `file` at `path` is a regular file. */
export async function expectRegularFile(file: FileHandle, path: string): Promise<void> {
  const stats = await file.stat();
  if (!stats.isFile()) throw new NotRegularFileError(path, kindOf(stats));
}
