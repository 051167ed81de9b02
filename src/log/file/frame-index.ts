// The frame index of the embedded log, shared by its writer and its readers: the byte position of
// every record, all of them checked (batch and frame CRCs) before they were indexed, either by the
// scan at open or by the writer that just wrote them. Reading by offset is one positional read per
// chunk of records; frames are not CRC-checked a second time. A writer that resumed where a
// snapshot's history ends indexes the records before that point only when one is read.
import type { FileHandle } from 'node:fs/promises';
import { LogUnavailableError, type Cursor, type LogRecord } from '../event-log.js';
import type { FileRange } from './file-range.js';
import { BATCH_HEADER_BYTES, checkBatchHeader, type EncodedBatch } from './batches.js';
import { decodeFrame, FILE_MAGIC, FRAME_HEADER_BYTES } from './frames.js';
import { CorruptLogError, scanFrames, type BatchPoint } from './recovery.js';

/** One read covers about this much of the log (sequential reads of a long history stay large). */
const READ_CHUNK_BYTES = 4 * 1024 * 1024;

export class FrameIndex {
  /** CRC of the first record: tells this history from another file put in its place. */
  private firstRecordCrc: number | undefined;

  /** Where the last batch starts: a scan can resume there for a history folded into it. */
  lastBatch: BatchPoint | undefined;
  /** Scanning the records before `base` (started by the first read of one). */
  private prefix: Promise<void> | undefined;

  constructor(
    readonly path: string,
    readonly file: FileHandle,
    /** Byte position of record `base + i`, in offset order (the scan adds to it). */
    private starts: number[],
    /** Where the last indexed record ends (where the next batch goes). */
    public endByte: number,
    /** The offset of `starts[0]`: 0, or where the scan at open resumed. */
    private base = 0,
    /** Where the records before `base` end (the batch of record `base` starts). */
    private readonly baseByte = FILE_MAGIC.length,
  ) {}

  get records(): number {
    return this.base + this.starts.length;
  }

  /** The byte positions the scan of new records appends to (a reader's refresh). */
  get scanned(): number[] {
    return this.starts;
  }

  /** The records before `base`, checked and indexed once, when first read. */
  private loadPrefix(): Promise<void> {
    this.prefix ??= (async () => {
      const scan = await scanFrames(this.file, FILE_MAGIC.length, [], { until: this.baseByte });
      if (scan.problem !== undefined || scan.starts.length !== this.base) {
        const {
          bytePosition = this.baseByte,
          recordOffset = scan.starts.length,
          reason = `${scan.starts.length} records where the snapshot's position says ${this.base}`,
        } = scan.problem ?? {};
        throw new CorruptLogError(this.path, bytePosition, recordOffset, reason);
      }
      this.starts = scan.starts.concat(this.starts);
      this.base = 0;
    })();
    return this.prefix;
  }

  /** Names the history (`EventLog.identity`): snapshots are only used on the log they came from. */
  get identity(): string {
    return `file:events.log#${this.firstRecordCrc === undefined ? 'empty' : this.firstRecordCrc.toString(16).padStart(8, '0')}`;
  }

  /** Reads the first record's CRC once there is a first record. */
  async learnIdentity(): Promise<void> {
    if (this.firstRecordCrc !== undefined || this.records === 0) return;
    if (this.base === 0) {
      const crc = Buffer.alloc(4);
      await this.file.read(crc, 0, 4, (this.starts[0] as number) + 4);
      this.firstRecordCrc = crc.readUInt32BE(0);
      return;
    }
    // Not indexed yet: the first record is the first frame of the first batch.
    const head = Buffer.alloc(BATCH_HEADER_BYTES + FRAME_HEADER_BYTES);
    await this.file.read(head, 0, head.length, FILE_MAGIC.length);
    if (checkBatchHeader(head, 0).kind !== 'header') {
      await this.loadPrefix();
      return this.learnIdentity();
    }
    this.firstRecordCrc = head.readUInt32BE(BATCH_HEADER_BYTES + 4);
  }

  /**
   * Where a later open may resume its scan for a history folded up to `offset` (exclusive): the
   * last batch, when it holds the last record folded (the one a snapshot's anchor names).
   */
  resumePoint(offset: number): string | undefined {
    const batch = this.lastBatch;
    if (batch === undefined || offset <= batch.offset || offset > this.records) return undefined;
    return formatBatchPoint(batch);
  }

  /** Indexes the frames of a batch just written (and synced) by the writer at `batchByte`. */
  add({ bytes, frameBytes }: EncodedBatch, batchByte: number): void {
    if (frameBytes.length === 0) return;
    if (this.records === 0) this.firstRecordCrc ??= bytes.readUInt32BE(BATCH_HEADER_BYTES + 4);
    this.lastBatch = { offset: this.records, byte: batchByte };
    let byte = batchByte + BATCH_HEADER_BYTES;
    for (const length of frameBytes) {
      this.starts.push(byte);
      byte += length;
    }
    this.endByte = byte;
  }

  /** Where records [0, records) lie in the file (FileBacked.fileRange). */
  async fileRange(records: number): Promise<FileRange | undefined> {
    if (records <= 0 || records > this.records) return undefined;
    if (this.base > 0) await this.loadPrefix();
    const endByte = records < this.records ? (this.starts[records] as number) : this.endByte;
    return { path: this.path, startByte: FILE_MAGIC.length, endByte, records };
  }

  /** Scans the records before `base` now if `offset` lies among them. */
  async scanFrom(offset: number): Promise<void> {
    if (offset < this.base) await this.loadPrefix();
  }

  /** Records [offset, end): about one chunk of bytes, at least one record. */
  async readBatch(offset: number, end: number): Promise<LogRecord[]> {
    if (offset < this.base) await this.loadPrefix();
    const { starts, base } = this;
    const at = (o: number) => starts[o - base] as number;
    const startByte = at(offset);
    let last = offset + 1;
    while (last < end && at(last) - startByte < READ_CHUNK_BYTES) last += 1;
    const chunkEnd = last < this.records ? at(last) : this.endByte;
    const buffer = Buffer.allocUnsafeSlow(chunkEnd - startByte);
    const { bytesRead } = await this.file.read(buffer, 0, buffer.length, startByte);
    if (bytesRead !== buffer.length)
      throw new LogUnavailableError(
        `${this.path}: the log is shorter than its index (was it truncated under the server?)`,
      );
    const records: LogRecord[] = [];
    for (let o = offset; o < last; o += 1) {
      // Batch headers lie between some frames: each frame is read where the index puts it.
      const frame = at(o) - startByte;
      const next = o + 1 < last ? at(o + 1) - startByte : buffer.length;
      if (FRAME_HEADER_BYTES + buffer.readUInt32BE(frame) > next - frame)
        throw new LogUnavailableError(
          `${this.path}: record #${o} does not match the index (the file changed under the server)`,
        );
      const { key, value, timestampMs } = decodeFrame(buffer, frame);
      records.push({ key, value, timestampMs, position: { partition: 0, offset: o } });
    }
    return records;
  }

  /** The records from `from` to `end` (exclusive), a chunk at a time. */
  async *batches(from: number, end: number, signal: AbortSignal | undefined): AsyncIterable<LogRecord[]> {
    for (let offset = from; offset < end && !signal?.aborted;) {
      const records = await this.readBatch(offset, end);
      yield records;
      offset += records.length;
    }
  }

  /**
   * The records from `from` on, a chunk at a time, while `following()`; at the end of the index
   * `more()` waits until it may have grown (the writer's next append, a reader's next look at the
   * file). `from` may be a live cursor that a commit hand-off moves on meanwhile: what it has
   * passed is not read again.
   */
  async *follow(from: Cursor, following: () => boolean, more: () => Promise<void>): AsyncIterable<LogRecord[]> {
    let offset = from.get(0) ?? 0;
    while (following()) {
      offset = Math.max(offset, from.get(0) ?? 0);
      if (offset < this.records) {
        const records = await this.readBatch(offset, this.records);
        yield records;
        offset += records.length;
      } else {
        await more();
      }
    }
  }
}

/** A resume point as the snapshot keeps it: `offset@byte`. */
export function formatBatchPoint({ offset, byte }: BatchPoint): string {
  return `${offset}@${byte}`;
}

export function parseBatchPoint(text: string | undefined): BatchPoint | undefined {
  const match = /^(\d{1,15})@(\d{1,15})$/.exec(text ?? '');
  return match ? { offset: Number(match[1]), byte: Number(match[2]) } : undefined;
}
