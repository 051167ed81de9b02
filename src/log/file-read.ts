// Reading records back from the embedded log: one positional read per chunk of frames, each
// frame checked again (the scan at open checked them; a failure means the file changed under us).
import type { FileHandle } from 'node:fs/promises';
import { LogUnavailableError, type LogRecord } from './event-log.js';
import { checkFrame, decodeFrame } from './file-frames.js';

const READ_CHUNK_BYTES = 1024 * 1024;

export interface FrameIndex {
  readonly path: string;
  readonly file: FileHandle;
  /** Byte position of every record. */
  readonly starts: readonly number[];
  /** Where the last record ends. */
  readonly endByte: number;
}

/** Reads records [offset, end): about one chunk of bytes, at least one record. */
export async function readChunk({ path, file, starts, endByte }: FrameIndex, offset: number, end: number): Promise<LogRecord[]> {
  const startByte = starts[offset] as number;
  let last = offset + 1;
  while (last < end && (starts[last] as number) - startByte < READ_CHUNK_BYTES) last += 1;
  const chunkEnd = last < starts.length ? (starts[last] as number) : endByte;
  const buffer = Buffer.allocUnsafe(chunkEnd - startByte);
  await file.read(buffer, 0, buffer.length, startByte);
  const records: LogRecord[] = [];
  for (let o = offset; o < last; o += 1) {
    // Batch headers lie between some frames: each frame is read where the index puts it.
    const at = (starts[o] as number) - startByte;
    const check = checkFrame(buffer, at, true);
    if (check.kind !== 'frame') throw new LogUnavailableError(`${path}: record #${o} failed its check on read (${check.kind === 'bad' ? check.reason : 'short'})`);
    const { key, value, timestampMs } = decodeFrame(buffer, at);
    records.push({ key, value, timestampMs, position: { partition: 0, offset: o } });
  }
  return records;
}
