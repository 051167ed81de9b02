// Start-up scan of the embedded log: checks every frame, builds the offset index, and cuts a torn
// tail. Damage followed by valid frames is not a torn tail but lost history: the start is refused.
import type { FileHandle } from 'node:fs/promises';
import { checkFrame, FILE_MAGIC, findValidFrame } from './file-frames.js';

const CHUNK_BYTES = 1024 * 1024;
/** How much of a damaged tail is searched for later valid frames before assuming the worst. */
const MAX_TAIL_SEARCH_BYTES = 64 * 1024 * 1024;

export class CorruptLogError extends Error {
  constructor(readonly path: string, readonly bytePosition: number, readonly recordOffset: number, reason: string) {
    super(`${path}: corrupt record #${recordOffset} at byte ${bytePosition} (${reason}); valid records follow it, so this is not a torn tail — refusing to start. Run \`reports verify\` and restore the file from a copy.`);
    this.name = 'CorruptLogError';
  }
}

export interface ScanResult {
  /** Byte position of every record, in offset order. */
  readonly starts: number[];
  /** Byte length of the valid log (where the next frame goes). */
  readonly validBytes: number;
  /** Set when a torn tail was found: what was cut. */
  readonly tornTail?: { readonly bytePosition: number; readonly recordOffset: number; readonly cutBytes: number; readonly reason: string };
}

async function readAt(file: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(length);
  const { bytesRead } = await file.read(buffer, 0, length, position);
  return buffer.subarray(0, bytesRead);
}

export async function scanLog(file: FileHandle, path: string): Promise<ScanResult> {
  const size = (await file.stat()).size;
  // A file shorter than the magic that holds a prefix of it: a first start that crashed while
  // creating the file. Nothing was ever acknowledged, so it starts empty.
  const partialMagic = size < FILE_MAGIC.length && (await readAt(file, 0, size)).equals(FILE_MAGIC.subarray(0, size));
  if (size === 0 || partialMagic) {
    await file.truncate(0);
    await file.write(FILE_MAGIC, 0, FILE_MAGIC.length, 0);
    await file.sync();
    return { starts: [], validBytes: FILE_MAGIC.length };
  }
  const magic = await readAt(file, 0, FILE_MAGIC.length);
  if (!magic.equals(FILE_MAGIC)) throw new Error(`${path} is not a report store log (bad magic bytes)`);

  const starts: number[] = [];
  let position = FILE_MAGIC.length;
  let chunk: Buffer = Buffer.alloc(0);
  let chunkStart = position;
  while (position < size) {
    const at = position - chunkStart;
    const check = checkFrame(chunk, at, chunkStart + chunk.length >= size);
    if (check.kind === 'frame') {
      starts.push(position);
      position += check.bytes;
    } else if (check.kind === 'incomplete') {
      chunkStart = position;
      chunk = await readAt(file, position, Math.max(CHUNK_BYTES, check.needBytes));
    } else {
      return cutOrRefuse(file, path, { position, size, starts, reason: check.reason });
    }
  }
  return { starts, validBytes: position };
}

async function cutOrRefuse(
  file: FileHandle,
  path: string,
  { position, size, starts, reason }: { position: number; size: number; starts: number[]; reason: string },
): Promise<ScanResult> {
  const tailBytes = size - position;
  if (tailBytes > MAX_TAIL_SEARCH_BYTES) throw new CorruptLogError(path, position, starts.length, reason);
  const tail = await readAt(file, position + 1, tailBytes - 1);
  if (findValidFrame(tail) !== undefined) throw new CorruptLogError(path, position, starts.length, reason);
  await file.truncate(position);
  await file.sync();
  return { starts, validBytes: position, tornTail: { bytePosition: position, recordOffset: starts.length, cutBytes: tailBytes, reason } };
}
