// Start-up scan of the embedded log: checks every batch and frame, builds the offset index, and
// cuts a torn tail (a whole incomplete last batch). Damage followed by a whole batch is not a torn
// tail but lost history: the start is refused. Logs of format 1 (no batch boundaries, written by
// earlier versions) are read frame by frame, each frame a batch of its own.
import type { FileHandle } from 'node:fs/promises';
import { checkBatch, findWholeBatch } from './file-batches.js';
import { checkFrame, FILE_MAGIC, FILE_MAGIC_V1, findValidFrame } from './file-frames.js';

const CHUNK_BYTES = 1024 * 1024;

export type LogFormat = 1 | 2;

export class CorruptLogError extends Error {
  constructor(readonly path: string, readonly bytePosition: number, readonly recordOffset: number, reason: string) {
    super(`${path}: corrupt record #${recordOffset} at byte ${bytePosition} (${reason}); valid records follow it, so this is not a torn tail — refusing to start. Run \`reports verify\` and restore the file from a copy.`);
    this.name = 'CorruptLogError';
  }
}

export interface ScanResult {
  readonly format: LogFormat;
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
  readonly format: LogFormat;
  readonly starts: number[];
  /** Where the valid frames end. */
  readonly validBytes: number;
  /** The first frame that failed its check, if any. */
  readonly problem?: { readonly bytePosition: number; readonly recordOffset: number; readonly reason: string; readonly validFramesFollow: boolean };
}

/** The format named by the magic bytes (call after checkMagic answered 'ok'). */
export async function logFormat(file: FileHandle): Promise<LogFormat> {
  return (await readAt(file, 0, FILE_MAGIC_V1.length)).equals(FILE_MAGIC_V1) ? 1 : 2;
}

/**
 * Checks the log from byte `from` to the end of the file, changing nothing. `starts` (the positions
 * of the frames before `from`) receives the byte position of every frame of every whole batch;
 * scanning stops at the first batch that is not whole.
 */
export async function scanFrames(file: FileHandle, from: number, starts: number[] = []): Promise<FrameScan> {
  const format = await logFormat(file);
  const size = (await file.stat()).size;
  let position = from;
  let chunk: Buffer = Buffer.alloc(0);
  let chunkStart = position;
  while (position < size) {
    const check = format === 1 ? singleFrameBatch(chunk, position - chunkStart, chunkStart + chunk.length >= size) : checkBatch(chunk, position - chunkStart, chunkStart, size);
    if (check.kind === 'batch') {
      for (const frame of check.frames) starts.push(position + frame);
      position += check.bytes;
    } else if (check.kind === 'incomplete') {
      chunkStart = position;
      chunk = await readAt(file, position, Math.max(CHUNK_BYTES, check.needBytes));
    } else {
      // Damage followed by a whole batch (or frame) cannot be a torn write.
      const validFramesFollow = format === 1 ? findValidFrame(await readAt(file, position + 1, size - position - 1)) !== undefined : (await findWholeBatch(file, position + 1, size)) !== undefined;
      return { format, starts, validBytes: position, problem: { bytePosition: position, recordOffset: starts.length, reason: check.reason, validFramesFollow } };
    }
  }
  return { format, starts, validBytes: position };
}

/** Format 1: every frame is a batch of its own. */
function singleFrameBatch(buffer: Buffer, at: number, bufferIsFileEnd: boolean): ReturnType<typeof checkBatch> {
  const check = checkFrame(buffer, at, bufferIsFileEnd);
  return check.kind === 'frame' ? { kind: 'batch', bytes: check.bytes, frames: [0] } : check;
}

/** Whether the file starts with the magic bytes; a file shorter than them holding their prefix is "partial". */
export async function checkMagic(file: FileHandle): Promise<'ok' | 'empty' | 'partial' | 'bad'> {
  const size = (await file.stat()).size;
  if (size === 0) return 'empty';
  const head = await readAt(file, 0, Math.min(size, FILE_MAGIC.length));
  const either = (magic: Buffer) => (size < magic.length ? head.equals(magic.subarray(0, size)) : head.equals(magic));
  if (!either(FILE_MAGIC) && !either(FILE_MAGIC_V1)) return 'bad';
  return size < FILE_MAGIC.length ? 'partial' : 'ok';
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
    return { format: 2, starts: [], validBytes: FILE_MAGIC.length };
  }
  const scan = await scanFrames(file, FILE_MAGIC.length);
  if (!scan.problem) return { format: scan.format, starts: scan.starts, validBytes: scan.validBytes };
  const { bytePosition, recordOffset, reason, validFramesFollow } = scan.problem;
  if (validFramesFollow) throw new CorruptLogError(path, bytePosition, recordOffset, reason);
  const cutBytes = (await file.stat()).size - bytePosition;
  await file.truncate(bytePosition);
  await file.sync();
  return { format: scan.format, starts: scan.starts, validBytes: bytePosition, tornTail: { bytePosition, recordOffset, cutBytes, reason } };
}
