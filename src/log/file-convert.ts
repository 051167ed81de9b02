// Converts a log of format 1 (frames without batch boundaries) to format 2 once, when a writer
// opens it: every old frame becomes a batch of its own, the new file is synced and renamed over
// the old one, so a crash at any moment leaves one whole log of either format.
import { open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { encodeBatch } from './file-batches.js';
import { PRIVATE_FILE_MODE, syncDir } from './file-dir.js';
import { FILE_MAGIC } from './file-frames.js';

const CHUNK_BYTES = 1024 * 1024;

/** Rewrites the frames at `starts` (ending at `endByte`) of the format-1 log at `path` as format 2. */
export async function convertToBatches(path: string, starts: readonly number[], endByte: number): Promise<void> {
  const temporary = `${path}.format2.tmp`;
  const source = await open(path, 'r');
  const target = await open(temporary, 'w', PRIVATE_FILE_MODE);
  try {
    await target.write(FILE_MAGIC);
    for (let first = 0; first < starts.length; ) {
      const chunkStart = starts[first] as number;
      let last = first + 1;
      while (last < starts.length && (starts[last] as number) - chunkStart < CHUNK_BYTES) last += 1;
      const chunkEnd = last < starts.length ? (starts[last] as number) : endByte;
      const chunk = Buffer.allocUnsafe(chunkEnd - chunkStart);
      await source.read(chunk, 0, chunk.length, chunkStart);
      const batches: Buffer[] = [];
      for (let i = first; i < last; i += 1) {
        const end = i + 1 < starts.length ? (starts[i + 1] as number) : endByte;
        batches.push(encodeBatch([chunk.subarray((starts[i] as number) - chunkStart, end - chunkStart)]));
      }
      await target.write(Buffer.concat(batches));
      first = last;
    }
    await target.sync();
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  } finally {
    await target.close();
    await source.close();
  }
  await rename(temporary, path);
  await syncDir(dirname(path));
}
