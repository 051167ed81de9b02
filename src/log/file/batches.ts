// Group-commit batches on disk (log format 2). Each durable write of the file log is one batch:
//   u32 BE mark 0x52534243 ("RSBC") | u32 BE body bytes | u32 BE frame count | u32 BE CRC-32 of
//   the preceding 12 bytes | body = the batch's frames
// None of a batch's records is acknowledged before the write that covers all of them is on disk, and
// after a power loss its pages may reach the disk in any order. So a batch counts only when whole:
// its header intact and all of its frames valid. A damaged last batch is an unacknowledged write;
// damage followed by a whole batch is lost history.
import type { FileHandle } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { frameBytesAt, frameSize, writeFrame } from './frames.js';
import { readAt } from './read-at.js';

export const BATCH_HEADER_BYTES = 16;
const BATCH_MARK = 0x52534243;
const MARK_BYTES = Buffer.from([0x52, 0x53, 0x42, 0x43]);
const SEARCH_CHUNK_BYTES = 1024 * 1024;

export function encodeBatch(frames: readonly Buffer[]): Buffer {
  const header = Buffer.allocUnsafe(BATCH_HEADER_BYTES);
  writeBatchHeader(
    header,
    frames.reduce((sum, frame) => sum + frame.length, 0),
    frames.length,
  );
  return Buffer.concat([header, ...frames]);
}

function writeBatchHeader(target: Buffer, bodyBytes: number, frameCount: number): void {
  target.writeUInt32BE(BATCH_MARK, 0);
  target.writeUInt32BE(bodyBytes, 4);
  target.writeUInt32BE(frameCount, 8);
  target.writeUInt32BE(crc32(target.subarray(0, 12)), 12);
}

export interface EncodedBatch {
  readonly bytes: Buffer;
  /** Each frame's length, in order. */
  readonly frameBytes: readonly number[];
}

/** The batch of one write: the frames of `messages`, all stamped `timestampMs`, encoded straight into one buffer. */
export function encodeMessageBatch(
  messages: readonly { readonly key: string; readonly value: Buffer }[],
  timestampMs: number,
): EncodedBatch {
  const keyBytes = messages.map(({ key }) => Buffer.byteLength(key, 'utf8'));
  const frameBytes = messages.map(({ value }, i) => frameSize(keyBytes[i] as number, value.length));
  const bodyBytes = frameBytes.reduce((sum, bytes) => sum + bytes, 0);
  const bytes = Buffer.allocUnsafe(BATCH_HEADER_BYTES + bodyBytes);
  writeBatchHeader(bytes, bodyBytes, messages.length);
  let at = BATCH_HEADER_BYTES;
  messages.forEach(({ key, value }, i) => {
    at += writeFrame(bytes, at, { key, value, timestampMs }, keyBytes[i] as number);
  });
  return { bytes, frameBytes };
}

export type BatchHeaderCheck =
  | { readonly kind: 'header'; readonly bodyBytes: number; readonly frameCount: number }
  | { readonly kind: 'bad'; readonly reason: string };

/** The frame count of the batch whose header (already checked) starts at `at`. */
export function batchFrameCount(buffer: Buffer, at: number): number {
  return buffer.readUInt32BE(at + 8);
}

/** Checks the 16 header bytes at `at` (the caller makes sure they are in `buffer`). */
export function checkBatchHeader(buffer: Buffer, at: number): BatchHeaderCheck {
  if (buffer.readUInt32BE(at) !== BATCH_MARK) return { kind: 'bad', reason: 'no batch header' };
  if (crc32(buffer.subarray(at, at + 12)) !== buffer.readUInt32BE(at + 12))
    return { kind: 'bad', reason: 'batch header CRC mismatch' };
  return { kind: 'header', bodyBytes: buffer.readUInt32BE(at + 4), frameCount: batchFrameCount(buffer, at) };
}

/** Byte offsets (within `body`) of the frames of a whole batch, or why it is not whole. */
export function checkBatchBody(
  body: Buffer,
  frameCount: number,
): { readonly frames: number[] } | { readonly reason: string } {
  const frames: number[] = [];
  const reason = batchFramesInto(body, 0, body.length, frameCount, frames, 0);
  return reason === undefined ? { frames } : { reason };
}

/**
 * Checks the `frameCount` frames of the batch body `buffer[start, end)` and pushes each one's
 * position plus `base` to `into`; or says why the batch is not whole (then `into` is as it was).
 */
function batchFramesInto(
  buffer: Buffer,
  start: number,
  end: number,
  frameCount: number,
  into: number[],
  base: number,
): string | undefined {
  const before = into.length;
  let at = start;
  for (let frame = 0; frame < frameCount; frame += 1) {
    const bytes = frameBytesAt(buffer, at, end);
    if (typeof bytes === 'string') {
      into.length = before;
      return `${bytes} in frame ${frame + 1} of ${frameCount} of the batch`;
    }
    into.push(base + at);
    at += bytes;
  }
  if (at === end) return undefined;
  into.length = before;
  return 'batch length does not match its frames';
}

export type BatchCheck =
  | { readonly kind: 'batch'; readonly bytes: number }
  | { readonly kind: 'incomplete'; readonly needBytes: number }
  | { readonly kind: 'bad'; readonly reason: string };

/**
 * Checks the batch that starts at `at` in `buffer`, which starts at byte `bufferStart` of a file of
 * `fileBytes` bytes. The file positions of a whole batch's frames go straight into `starts` (left
 * as they were when the batch is not whole): the scan at open runs this on every batch of the log.
 */
export function scanBatch(
  buffer: Buffer,
  at: number,
  bufferStart: number,
  fileBytes: number,
  starts: number[],
): BatchCheck {
  const available = buffer.length - at;
  const atFileEnd = bufferStart + buffer.length >= fileBytes;
  if (available < BATCH_HEADER_BYTES)
    return atFileEnd
      ? { kind: 'bad', reason: 'batch header cut short' }
      : { kind: 'incomplete', needBytes: BATCH_HEADER_BYTES };
  const header = checkBatchHeader(buffer, at);
  if (header.kind === 'bad') return header;
  const bytes = BATCH_HEADER_BYTES + header.bodyBytes;
  if (bufferStart + at + bytes > fileBytes) return { kind: 'bad', reason: 'batch cut short' };
  if (available < bytes) return { kind: 'incomplete', needBytes: bytes };
  const reason = batchFramesInto(buffer, at + BATCH_HEADER_BYTES, at + bytes, header.frameCount, starts, bufferStart);
  return reason === undefined ? { kind: 'batch', bytes } : { kind: 'bad', reason };
}

/** Whether a whole batch starts at `position` of the file. */
async function wholeBatchAt(
  file: FileHandle,
  position: number,
  header: BatchHeaderCheck,
  size: number,
): Promise<boolean> {
  if (header.kind !== 'header' || position + BATCH_HEADER_BYTES + header.bodyBytes > size) return false;
  return (
    'frames' in checkBatchBody(await readAt(file, position + BATCH_HEADER_BYTES, header.bodyBytes), header.frameCount)
  );
}

/**
 * Where the first whole batch at or after `from` starts, if any. Linear in the tail's size: only
 * positions holding the 4-byte mark and a header with a valid CRC are examined further.
 */
export async function findWholeBatch(file: FileHandle, from: number, size: number): Promise<number | undefined> {
  for (let chunkStart = from; chunkStart < size; chunkStart += SEARCH_CHUNK_BYTES) {
    // Read a header's length past the chunk so a header across the boundary is seen whole.
    const chunk = await readAt(file, chunkStart, SEARCH_CHUNK_BYTES + BATCH_HEADER_BYTES);
    for (
      let at = chunk.indexOf(MARK_BYTES);
      at !== -1 && at < SEARCH_CHUNK_BYTES;
      at = chunk.indexOf(MARK_BYTES, at + 1)
    ) {
      if (at + BATCH_HEADER_BYTES > chunk.length) break;
      if (await wholeBatchAt(file, chunkStart + at, checkBatchHeader(chunk, at), size)) return chunkStart + at;
    }
  }
  return undefined;
}
