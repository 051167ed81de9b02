// Files of a backup and of a restore, made durable before anything depends on them: a copy of a
// range of bytes, written and fsynced (with a progress callback), and a small file written whole.
import { open, type FileHandle } from 'node:fs/promises';
import { PRIVATE_FILE_MODE } from '../data-dir/data-dir.js';

const COPY_CHUNK_BYTES = 4 * 1024 * 1024;

/** Copies bytes [0, `bytes`) of `source` to a new file at `target` and fsyncs it; `onCopied` gets the bytes copied so far. */
export async function copyDurably(
  source: FileHandle,
  bytes: number,
  target: string,
  onCopied: (copied: number) => void = () => undefined,
  signal?: AbortSignal,
): Promise<void> {
  const file = await open(target, 'wx', PRIVATE_FILE_MODE);
  try {
    const buffer = Buffer.allocUnsafe(Math.min(COPY_CHUNK_BYTES, Math.max(bytes, 1)));
    for (let at = 0; at < bytes;) {
      signal?.throwIfAborted();
      const { bytesRead } = await source.read(buffer, 0, Math.min(buffer.length, bytes - at), at);
      if (bytesRead === 0) throw new Error(`the file ended at byte ${at} of the ${bytes} to copy`);
      await file.write(buffer, 0, bytesRead, at);
      at += bytesRead;
      onCopied(at);
    }
    await file.sync();
  } finally {
    await file.close();
  }
}

/** Writes `bytes` as the new file `path` and fsyncs it (the caller syncs the directory). */
export async function writeDurableFile(path: string, bytes: Buffer): Promise<void> {
  const file = await open(path, 'wx', PRIVATE_FILE_MODE);
  try {
    await file.writeFile(bytes);
    await file.sync();
  } finally {
    await file.close();
  }
}
