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

export interface FrameScan {
  readonly starts: number[];
  /** Where the valid frames end. */
  readonly validBytes: number;
  /** The first frame that failed its check, if any. */
  readonly problem?: { readonly bytePosition: number; readonly recordOffset: number; readonly reason: string; readonly validFramesFollow: boolean };
}

/**
 * Checks frames from byte `from` to the end of the file, changing nothing. `starts` (the positions
 * of the frames before `from`) receives the byte position of every valid frame; scanning stops at
 * the first bad one.
 */
export async function scanFrames(file: FileHandle, from: number, starts: number[] = []): Promise<FrameScan> {
  const size = (await file.stat()).size;
  let position = from;
  let chunk: Buffer = Buffer.alloc(0);
  let chunkStart = position;
  while (position < size) {
    const check = checkFrame(chunk, position - chunkStart, chunkStart + chunk.length >= size);
    if (check.kind === 'frame') {
      starts.push(position);
      position += check.bytes;
    } else if (check.kind === 'incomplete') {
      chunkStart = position;
      chunk = await readAt(file, position, Math.max(CHUNK_BYTES, check.needBytes));
    } else {
      const tailBytes = size - position;
      // Damage followed by a valid frame cannot be a torn write; too large a tail is assumed to hold one.
      const validFramesFollow = tailBytes > MAX_TAIL_SEARCH_BYTES || findValidFrame(await readAt(file, position + 1, tailBytes - 1)) !== undefined;
      return { starts, validBytes: position, problem: { bytePosition: position, recordOffset: starts.length, reason: check.reason, validFramesFollow } };
    }
  }
  return { starts, validBytes: position };
}

/** Whether the file starts with the magic bytes; a file shorter than them holding their prefix is "partial". */
export async function checkMagic(file: FileHandle): Promise<'ok' | 'empty' | 'partial' | 'bad'> {
  const size = (await file.stat()).size;
  if (size === 0) return 'empty';
  const head = await readAt(file, 0, Math.min(size, FILE_MAGIC.length));
  if (size < FILE_MAGIC.length) return head.equals(FILE_MAGIC.subarray(0, size)) ? 'partial' : 'bad';
  return head.equals(FILE_MAGIC) ? 'ok' : 'bad';
}

/** The writer's scan at open: checks every frame, cuts a torn tail, refuses mid-log damage. */
export async function scanLog(file: FileHandle, path: string): Promise<ScanResult> {
  const magic = await checkMagic(file);
  if (magic === 'bad') throw new Error(`${path} is not a report store log (bad magic bytes)`);
  if (magic !== 'ok') {
    // Empty, or cut inside the magic by a first start that crashed: nothing was ever acknowledged.
    await file.truncate(0);
    await file.write(FILE_MAGIC, 0, FILE_MAGIC.length, 0);
    await file.sync();
    return { starts: [], validBytes: FILE_MAGIC.length };
  }
  const scan = await scanFrames(file, FILE_MAGIC.length);
  if (!scan.problem) return { starts: scan.starts, validBytes: scan.validBytes };
  const { bytePosition, recordOffset, reason, validFramesFollow } = scan.problem;
  if (validFramesFollow) throw new CorruptLogError(path, bytePosition, recordOffset, reason);
  const cutBytes = (await file.stat()).size - bytePosition;
  await file.truncate(bytePosition);
  await file.sync();
  return { starts: scan.starts, validBytes: bytePosition, tornTail: { bytePosition, recordOffset, cutBytes, reason } };
}
