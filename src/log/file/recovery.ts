// Start-up scan of the embedded log: checks every batch and frame, builds the offset index, and
// cuts a torn tail (a whole incomplete last batch). Damage followed by a whole batch is not a torn
// tail but lost history: the start is refused. A log of another format than this version's is
// refused too, naming the format found.
import type { FileHandle } from 'node:fs/promises';
import { BATCH_HEADER_BYTES, checkBatchBody, checkBatchHeader, findWholeBatch, scanBatch } from './batches.js';
import { decodeFrame, FILE_FORMAT, FILE_MAGIC, magicFormat } from './frames.js';
import { recordDigest } from '../record-digest.js';
import { readAt } from './read-at.js';

const CHUNK_BYTES = 4 * 1024 * 1024;

export class CorruptLogError extends Error {
  constructor(
    readonly path: string,
    readonly bytePosition: number,
    readonly recordOffset: number,
    reason: string,
  ) {
    super(
      `${path}: corrupt record #${recordOffset} at byte ${bytePosition} (${reason}); valid records follow it, so this is not a torn tail — refusing to start. Run \`reports verify\` and restore the file from a copy.`,
    );
    this.name = 'CorruptLogError';
  }
}

export interface ScanResult {
  /** Byte position of every record from `firstOffset` on, in offset order. */
  readonly starts: number[];
  /** The offset of `starts[0]`: 0, or where a resumed scan began. */
  readonly firstOffset: number;
  /** Where the scan began (the batch of record `firstOffset`). */
  readonly firstByte: number;
  readonly lastBatch?: BatchPoint;
  /** Byte length of the valid log (where the next frame goes). */
  readonly validBytes: number;
  /** Set when a torn tail was found: what was cut. */
  readonly tornTail?: {
    readonly bytePosition: number;
    readonly recordOffset: number;
    readonly cutBytes: number;
    readonly reason: string;
  };
}

/** A batch boundary: the batch at `byte` holds record `offset` first (or, at the end, the next batch goes there). */
export interface BatchPoint {
  readonly offset: number;
  readonly byte: number;
}

export interface ScanOptions {
  /** Scan up to this byte rather than the end of the file (a batch must end exactly there). */
  readonly until?: number;
  /** The offset of the first record at `from` (a scan that resumes where a snapshot's history ends). */
  readonly firstOffset?: number;
}

export interface FrameScan {
  readonly starts: number[];
  /** Where the valid frames end. */
  readonly validBytes: number;
  /** Where the last whole batch scanned starts. */
  readonly lastBatch?: BatchPoint;
  /** The first frame that failed its check, if any. */
  readonly problem?: {
    readonly bytePosition: number;
    readonly recordOffset: number;
    readonly reason: string;
    readonly validFramesFollow: boolean;
  };
}

/**
 * Checks the log from byte `from` to the end of the file, changing nothing. `starts` (the positions
 * of the frames before `from`) receives the byte position of every frame of every whole batch;
 * scanning stops at the first batch that is not whole.
 */
export async function scanFrames(
  file: FileHandle,
  from: number,
  starts: number[] = [],
  { until, firstOffset = 0 }: ScanOptions = {},
): Promise<FrameScan> {
  const size = until ?? (await file.stat()).size;
  let position = from;
  let lastBatch: BatchPoint | undefined;
  let chunk: Buffer = Buffer.alloc(0);
  let chunkStart = position;
  // The block after the chunk, read while the chunk is checked.
  let ahead: { readonly at: number; readonly read: Promise<Buffer> } | undefined;
  while (position < size) {
    const batchOffset = firstOffset + starts.length;
    const at = position - chunkStart;
    const check = scanBatch(chunk, at, chunkStart, size, starts);
    if (check.kind === 'batch') {
      lastBatch = { offset: batchOffset, byte: position };
      position += check.bytes;
    } else if (check.kind === 'incomplete') {
      const next = ahead?.at === position ? await ahead.read : undefined;
      chunkStart = position;
      chunk =
        next !== undefined && next.length >= check.needBytes
          ? next
          : await readAt(file, position, Math.max(CHUNK_BYTES, check.needBytes));
      const nextStart = chunkStart + wholeBatchesBytes(chunk);
      ahead = nextStart < size ? { at: nextStart, read: readAt(file, nextStart, CHUNK_BYTES) } : undefined;
      // A read ahead that is not used (the scan stops first) must not fail unhandled.
      ahead?.read.catch(() => undefined);
    } else {
      // Damage followed by a whole batch cannot be a torn write.
      const validFramesFollow = (await findWholeBatch(file, position + 1, size)) !== undefined;
      return {
        starts,
        validBytes: position,
        ...(lastBatch ? { lastBatch } : {}),
        problem: {
          bytePosition: position,
          recordOffset: firstOffset + starts.length,
          reason: check.reason,
          validFramesFollow,
        },
      };
    }
  }
  return { starts, validBytes: position, ...(lastBatch ? { lastBatch } : {}) };
}

/**
 * How many bytes at the start of `chunk` the batches that lie wholly in it take, going by their
 * lengths alone: where the scan will want the next read, which is started before the chunk is
 * checked. A wrong guess (damage) costs only a read.
 */
function wholeBatchesBytes(chunk: Buffer): number {
  let at = 0;
  while (at + BATCH_HEADER_BYTES <= chunk.length) {
    const bytes = BATCH_HEADER_BYTES + chunk.readUInt32BE(at + 4);
    if (at + bytes > chunk.length) break;
    at += bytes;
  }
  return at;
}

/** A report store log of a format this version does not read: refused, never repaired or rewritten. */
export class UnknownLogFormatError extends Error {
  constructor(
    readonly path: string,
    readonly format: number,
  ) {
    super(`${path} is a report store log of format ${format}; this version reads format ${FILE_FORMAT} only`);
    this.name = 'UnknownLogFormatError';
  }
}

/**
 * Whether the file at `path` starts with the magic bytes; a file shorter than them holding their
 * prefix is "partial". The magic of another format throws UnknownLogFormatError.
 */
export async function checkMagic(file: FileHandle, path: string): Promise<'ok' | 'empty' | 'partial' | 'bad'> {
  const size = (await file.stat()).size;
  if (size === 0) return 'empty';
  const head = await readAt(file, 0, Math.min(size, FILE_MAGIC.length));
  if (size < FILE_MAGIC.length) return head.equals(FILE_MAGIC.subarray(0, size)) ? 'partial' : 'bad';
  const format = magicFormat(head);
  if (format === undefined) return 'bad';
  if (format !== FILE_FORMAT) throw new UnknownLogFormatError(path, format);
  return 'ok';
}

/** A resume point, the last record a snapshot folded (in the batch at the point) and its digest. */
export interface ResumeCheck {
  readonly point: BatchPoint;
  readonly lastRecord: number;
  readonly lastRecordDigest: string;
}

/**
 * The writer's scan at open: checks every frame, cuts a torn tail, refuses mid-log damage. With
 * `resume` only the log from its point is scanned, once the point holds as a whole (resumeHolds);
 * the records before it are scanned when something reads them (FrameIndex).
 */
export async function scanLog(file: FileHandle, path: string, resume?: ResumeCheck): Promise<ScanResult> {
  const magic = await checkMagic(file, path);
  if (magic === 'bad') throw new Error(`${path} is not a report store log (bad magic bytes)`);
  if (magic !== 'ok') {
    // Empty, or cut inside the magic by a first start that crashed: nothing was ever acknowledged.
    await file.truncate(0);
    await file.write(FILE_MAGIC, 0, FILE_MAGIC.length, 0);
    await file.sync();
    return { starts: [], firstOffset: 0, firstByte: FILE_MAGIC.length, validBytes: FILE_MAGIC.length };
  }
  const from =
    resume !== undefined && (await resumeHolds(file, resume)) ? resume.point : { offset: 0, byte: FILE_MAGIC.length };
  const scan = await scanFrames(file, from.byte, [], { firstOffset: from.offset });
  const found = {
    starts: scan.starts,
    firstOffset: from.offset,
    firstByte: from.byte,
    ...(scan.lastBatch ? { lastBatch: scan.lastBatch } : {}),
  };
  if (!scan.problem) return { ...found, validBytes: scan.validBytes };
  const { bytePosition, recordOffset, reason, validFramesFollow } = scan.problem;
  if (validFramesFollow) throw new CorruptLogError(path, bytePosition, recordOffset, reason);
  const cutBytes = (await file.stat()).size - bytePosition;
  await file.truncate(bytePosition);
  await file.sync();
  return { ...found, validBytes: bytePosition, tornTail: { bytePosition, recordOffset, cutBytes, reason } };
}

/**
 * Whether the resume point is the one the snapshot recorded, as a whole: a whole batch starts
 * at its byte, and holds the snapshot's last record where the point's record number puts
 * it, with that record's digest. A log restored from a copy and written on can have a batch at the
 * same byte with another number of records before it; its records there are others (new event ids),
 * so the digest tells. (Counting the records before the point would mean reading all of them: they
 * are counted when first read, FrameIndex.)
 */
async function resumeHolds(file: FileHandle, { point, lastRecord, lastRecordDigest }: ResumeCheck): Promise<boolean> {
  if (point.byte < FILE_MAGIC.length) return false;
  const header = await readAt(file, point.byte, BATCH_HEADER_BYTES);
  const check = header.length === BATCH_HEADER_BYTES ? checkBatchHeader(header, 0) : undefined;
  if (check?.kind !== 'header') return false;
  const body = await readAt(file, point.byte + BATCH_HEADER_BYTES, check.bodyBytes);
  const batch = body.length === check.bodyBytes ? checkBatchBody(body, check.frameCount) : undefined;
  const frame = batch !== undefined && 'frames' in batch ? batch.frames[lastRecord - point.offset] : undefined;
  return frame !== undefined && recordDigest(decodeFrame(body, frame)) === lastRecordDigest;
}
