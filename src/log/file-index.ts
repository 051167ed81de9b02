// The frame index of the embedded log, shared by its writer and its readers: the byte position of
// every record, all of them checked (batch and frame CRCs) before they were indexed, either by the
// scan at open or by the writer that just wrote them. Reading by offset is one positional read per
// chunk of records; frames are not CRC-checked a second time.
import type { FileHandle } from 'node:fs/promises';
import { LogUnavailableError, type LogRecord } from './event-log.js';
import { decodeFrame, FRAME_HEADER_BYTES } from './file-frames.js';

/** One read covers about this much of the log (sequential reads of a long history stay large). */
const READ_CHUNK_BYTES = 4 * 1024 * 1024;

export class FrameIndex {
  /** CRC of the first record: tells this history from another file put in its place. */
  private firstRecordCrc: number | undefined;

  constructor(
    readonly path: string,
    readonly file: FileHandle,
    /** Byte position of every record, in offset order. */
    readonly starts: number[],
    /** Where the last indexed record ends (where the next batch goes). */
    public endByte: number,
  ) {}

  get records(): number {
    return this.starts.length;
  }

  /** Names the history (`EventLog.identity`): snapshots are only used on the log they came from. */
  get identity(): string {
    return `file:events.log#${this.firstRecordCrc === undefined ? 'empty' : this.firstRecordCrc.toString(16).padStart(8, '0')}`;
  }

  /** Reads the first record's CRC once there is a first record. */
  async learnIdentity(): Promise<void> {
    if (this.firstRecordCrc !== undefined || this.starts.length === 0) return;
    const crc = Buffer.alloc(4);
    await this.file.read(crc, 0, 4, (this.starts[0] as number) + 4);
    this.firstRecordCrc = crc.readUInt32BE(0);
  }

  /** Indexes frames just written (and synced) by the writer, the first at `byte`. */
  add(frames: readonly Buffer[], byte: number): void {
    if (this.starts.length === 0 && frames.length > 0) this.firstRecordCrc ??= (frames[0] as Buffer).readUInt32BE(4);
    for (const frame of frames) {
      this.starts.push(byte);
      byte += frame.length;
    }
    this.endByte = byte;
  }

  /** Records [offset, end): about one chunk of bytes, at least one record. */
  async readBatch(offset: number, end: number): Promise<LogRecord[]> {
    const { starts } = this;
    const startByte = starts[offset] as number;
    let last = offset + 1;
    while (last < end && (starts[last] as number) - startByte < READ_CHUNK_BYTES) last += 1;
    const chunkEnd = last < starts.length ? (starts[last] as number) : this.endByte;
    const buffer = Buffer.allocUnsafeSlow(chunkEnd - startByte);
    const { bytesRead } = await this.file.read(buffer, 0, buffer.length, startByte);
    if (bytesRead !== buffer.length) throw new LogUnavailableError(`${this.path}: the log is shorter than its index (was it truncated under the server?)`);
    const records: LogRecord[] = [];
    for (let o = offset; o < last; o += 1) {
      // Batch headers lie between some frames: each frame is read where the index puts it.
      const at = (starts[o] as number) - startByte;
      const next = o + 1 < last ? (starts[o + 1] as number) - startByte : buffer.length;
      if (FRAME_HEADER_BYTES + buffer.readUInt32BE(at) > next - at) throw new LogUnavailableError(`${this.path}: record #${o} does not match the index (the file changed under the server)`);
      const { key, value, timestampMs } = decodeFrame(buffer, at);
      records.push({ key, value, timestampMs, position: { partition: 0, offset: o } });
    }
    return records;
  }

  /** The records from `from` to `end` (exclusive), a chunk at a time. */
  async *batches(from: number, end: number, signal: AbortSignal | undefined): AsyncIterable<LogRecord[]> {
    for (let offset = from; offset < end && !signal?.aborted; ) {
      const records = await this.readBatch(offset, end);
      yield records;
      offset += records.length;
    }
  }
}
