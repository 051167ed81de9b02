// The walk over the file log's records for a reader that has the bytes but should not know their
// format: the threads of a sharded fold. The walker reads the file itself (large synchronous reads:
// such a thread has nothing else to do meanwhile), steps over batch headers and hands each frame's
// parts to a visitor. The frames were checked by the log's scan at open, so CRCs are not checked
// again; a frame that does not fit the file throws: the file changed under the reader.
import { closeSync, openSync, readSync } from 'node:fs';
import { BATCH_HEADER_BYTES, batchFrameCount } from './batches.js';
import { FRAME_HEADER_BYTES, frameParts, type FrameParts } from './frames.js';

/**
 * Hears one record of the walk: its offset from the start of the log, and where its parts lie in
 * `buffer`, which is valid only during the call. Returns false to stop the walk.
 */
export type RecordVisitor = (buffer: Buffer, offset: number, parts: FrameParts) => boolean;

/** What to walk: the log file, where its first batch lies and where its records end, and how many there are. */
export interface LogFileRange {
  readonly path: string;
  readonly startByte: number;
  readonly endByte: number;
  readonly records: number;
}

/** Bytes read at a time: large sequential reads. */
const READ_BYTES = 4 * 1024 * 1024;

/**
 * Walks the records of `range` in order, handing each to `visit` until it returns false or every
 * record was visited; `progress` hears the count walked after each read. Returns the count walked.
 */
export function walkLogFile(
  range: LogFileRange,
  visit: RecordVisitor,
  progress: (walked: number) => void = () => undefined,
): number {
  const walker = new ChunkWalker(range.records, visit);
  const file = openSync(range.path, 'r');
  try {
    let buffer = Buffer.allocUnsafeSlow(READ_BYTES);
    let position = range.startByte;
    while (!walker.done) {
      const length = Math.min(buffer.length, range.endByte - position);
      const bytesRead = length > 0 ? readSync(file, buffer, 0, length, position) : 0;
      if (bytesRead === 0)
        throw new Error(
          `${range.path}: the log ends at byte ${position}, before record #${walker.walked} (was it truncated?)`,
        );
      const consumed = walker.walk(buffer.subarray(0, bytesRead));
      if (consumed === 0) {
        if (bytesRead < buffer.length)
          throw new Error(
            `${range.path}: record #${walker.walked} runs past the end of the log (did the file change?)`,
          );
        // A frame larger than the buffer: read it whole next time.
        buffer = Buffer.allocUnsafeSlow(buffer.length * 2);
      }
      position += consumed;
      progress(walker.walked);
    }
  } finally {
    closeSync(file);
  }
  return walker.walked;
}

/** Walks chunk after chunk of a log's batches, each chunk starting where the last one's walk stopped. */
export class ChunkWalker {
  walked = 0;
  private stopped = false;
  /** Frames left in the batch the last chunk ended inside; the walk goes on there. */
  private framesLeftInBatch = 0;

  constructor(
    private readonly records: number,
    private readonly visit: RecordVisitor,
  ) {}

  get done(): boolean {
    return this.stopped || this.walked >= this.records;
  }

  /** Walks the frames whole at the start of `chunk` (a batch or frame boundary); returns the bytes consumed. */
  walk(chunk: Buffer): number {
    let at = 0;
    while (!this.done) {
      if (this.framesLeftInBatch === 0) {
        if (chunk.length - at < BATCH_HEADER_BYTES) return at;
        this.framesLeftInBatch = batchFrameCount(chunk, at);
        at += BATCH_HEADER_BYTES;
        continue;
      }
      if (chunk.length - at < FRAME_HEADER_BYTES) return at;
      const frameBytes = FRAME_HEADER_BYTES + chunk.readUInt32BE(at);
      if (chunk.length - at < frameBytes) return at;
      const offset = this.walked;
      let parts: FrameParts;
      try {
        parts = frameParts(chunk, at);
      } catch (error) {
        throw new RangeError(`record #${offset}: ${(error as Error).message}`);
      }
      this.walked += 1;
      at += frameBytes;
      this.framesLeftInBatch -= 1;
      if (!this.visit(chunk, offset, parts)) this.stopped = true;
    }
    return at;
  }
}
