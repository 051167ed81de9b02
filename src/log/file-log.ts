// The embedded event log: one append-only file in the data directory, one partition.
// Group commit: appends that arrive while a write+fsync is in flight wait for the next batch, and
// one fdatasync acknowledges the whole batch. Readers only ever see records that are on disk.
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { encodeFrame, FILE_MAGIC, MAX_RECORD_BYTES } from './file-frames.js';
import { BATCH_HEADER_BYTES, encodeBatch } from './file-batches.js';
import { convertToBatches } from './file-convert.js';
import { readChunk, type FrameIndex } from './file-read.js';
import { Batcher, DEFAULT_MAX_PENDING_APPENDS } from './batcher.js';
import { lockDir, type DirLock } from './file-lock.js';
import { ensurePrivateDir, PRIVATE_FILE_MODE, syncDir } from './file-dir.js';
import { checkMagic, CorruptLogError, scanFrames, scanLog } from './file-recovery.js';
import { LogUnavailableError, RecordTooLargeError, payloadBytes, type AppendOptions, type Cursor, type EventLog, type LogMessage, type LogHealth, type LogPosition, type LogStats, type LogRecord, type ReadOptions } from './event-log.js';

export interface FileLogOptions {
  readonly dir: string;
  readonly logger: Logger;
  readonly now?: () => number;
  /** Appends allowed to wait for the next write+fsync (REPORTS_MAX_PENDING_APPENDS). */
  readonly maxPendingAppends?: number;
}

export interface FileLogStats extends LogStats {
  /** Each flush of the file log is one fdatasync. */
  readonly fsyncs: number;
}

export interface FileLog extends EventLog {
  stats(): FileLogStats;
}

/**
 * Opens the log of `dir` for reading only, next to a server that may be writing it (no lock, no
 * repair): an incomplete last frame is taken for a write in progress and read once it is whole;
 * damage followed by valid frames is refused as at a normal open.
 */
export async function openFileLogReader({ dir, logger, now = Date.now, pollMs = 200 }: FileLogOptions & { pollMs?: number }): Promise<FileLog> {
  const path = join(dir, 'events.log');
  const file = await open(path, 'r').catch((error: NodeJS.ErrnoException) => {
    throw error.code === 'ENOENT' ? new Error(`no event log at ${path} (REPORTS_DATA_DIR)`) : error;
  });
  try {
    const magic = await checkMagic(file);
    if (magic === 'bad') throw new Error(`${path} is not a report store log (bad magic bytes)`);
    const log = new EmbeddedLog(path, file, undefined, [], FILE_MAGIC.length, now, pollMs);
    if (magic === 'ok') await log.refresh();
    logger.debug({ path, records: (await log.head()).get(0) }, 'opened the embedded event log for reading');
    return log;
  } catch (error) {
    await file.close();
    throw error;
  }
}

export async function openFileLog({ dir, logger, now = Date.now, maxPendingAppends = DEFAULT_MAX_PENDING_APPENDS }: FileLogOptions): Promise<FileLog> {
  await ensurePrivateDir(dir);
  const lock = await lockDir(dir);
  const path = join(dir, 'events.log');
  let file: FileHandle | undefined;
  try {
    file = await open(path, 'a+', PRIVATE_FILE_MODE);
    await file.close();
    // The log's directory entry must be on disk before any append is acknowledged.
    await syncDir(dir);
    file = await open(path, 'r+');
    let scan = await scanLog(file, path);
    if (scan.tornTail) {
      logger.warn({ path, ...scan.tornTail }, 'cut a torn tail off the event log (an append that was never acknowledged)');
    }
    if (scan.format === 1) {
      await convertToBatches(path, scan.starts, scan.validBytes);
      await file.close();
      file = await open(path, 'r+');
      scan = await scanLog(file, path);
      logger.info({ path, records: scan.starts.length }, 'converted the event log to format 2 (group-commit batches with boundaries)');
    }
    logger.info({ path, records: scan.starts.length }, 'opened the embedded event log');
    const log = new EmbeddedLog(path, file, lock, scan.starts, scan.validBytes, now, 0, maxPendingAppends);
    await log.learnIdentity();
    return log;
  } catch (error) {
    await file?.close().catch(() => undefined);
    await lock.release();
    throw error;
  }
}

class EmbeddedLog implements FileLog, FrameIndex {
  readonly description: string;
  readonly maxRecordBytes = MAX_RECORD_BYTES;
  /** CRC of the first record: tells this history from another file put in its place. */
  private firstRecordCrc: number | undefined;
  /** Group commit: appends that arrive while a write+fsync is in flight go together in the next one. */
  private readonly batcher: Batcher<readonly LogMessage[], LogPosition[]>;
  private closed = false;
  private failure: Error | undefined;
  private appendCount = 0;
  private fsyncCount = 0;
  private readonly listeners = new Set<() => void>();

  constructor(
    readonly path: string,
    readonly file: FileHandle,
    /** Absent for a reader (openFileLogReader), which may not append. */
    private readonly lock: DirLock | undefined,
    readonly starts: number[],
    public endByte: number,
    private readonly now: () => number,
    private readonly pollMs = 0,
    maxPending = DEFAULT_MAX_PENDING_APPENDS,
  ) {
    this.description = `file:${path}`;
    this.batcher = new Batcher((appends) => this.writeBatch(appends), { maxPending });
  }

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

  stats(): FileLogStats {
    return { appends: this.appendCount, fsyncs: this.fsyncCount, flushes: this.fsyncCount };
  }

  append(messages: readonly LogMessage[], { signal, timeoutMs }: AppendOptions = {}): Promise<LogPosition[]> {
    if (this.closed) return Promise.reject(new LogUnavailableError('the event log is closed'));
    if (!this.lock) return Promise.reject(new LogUnavailableError('the event log is open for reading only'));
    if (this.failure) return Promise.reject(this.failure);
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (messages.length === 0) return Promise.resolve([]);
    const size = Math.max(...messages.map(payloadBytes));
    if (size > this.maxRecordBytes) return Promise.reject(new RecordTooLargeError(this.maxRecordBytes, size));
    // The batcher drops an append whose caller gave up (signal aborted) before its batch is written.
    return this.batcher.add(messages, signal, timeoutMs);
  }

  private async writeBatch(appends: readonly (readonly LogMessage[])[]): Promise<LogPosition[][]> {
    if (this.failure) throw this.failure;
    const timestampMs = this.now();
    const frames = appends.flatMap((messages) => messages.map((m) => encodeFrame({ ...m, timestampMs })));
    // One batch per write+fsync: recovery keeps or cuts it whole.
    const bytes = encodeBatch(frames);
    try {
      // write(2) may write less than asked (a full disk, a signal): carry on until all is written.
      for (let written = 0; written < bytes.length; ) {
        const { bytesWritten } = await this.file.write(bytes, written, bytes.length - written, this.endByte + written);
        if (bytesWritten === 0) throw new Error('the disk accepted no bytes');
        written += bytesWritten;
      }
      await this.file.datasync();
    } catch (cause) {
      // After a failed write or fsync the page cache and the disk may disagree; appending on top
      // could acknowledge data that is not there. Fail every append until a restart re-scans.
      this.failure = new LogUnavailableError(`the event log ${this.path} failed to write; restart the service`, { cause });
      throw this.failure;
    }
    this.fsyncCount += 1;
    if (this.starts.length === 0) this.firstRecordCrc ??= (frames[0] as Buffer).readUInt32BE(4);
    const first = this.starts.length;
    let byte = this.endByte + BATCH_HEADER_BYTES;
    for (const frame of frames) {
      this.starts.push(byte);
      byte += frame.length;
    }
    this.endByte = byte;
    this.appendCount += frames.length;
    for (const listener of [...this.listeners]) listener();
    let next = first;
    return appends.map((messages) => messages.map(() => ({ partition: 0, offset: next++ })));
  }

  health(): LogHealth {
    if (this.failure) return { available: false, reason: this.failure.message };
    if (this.closed) return { available: false, reason: 'the event log is closed' };
    return { available: true };
  }

  /** For a reader: takes in the frames another process appended since the last look. */
  async refresh(): Promise<void> {
    if (this.lock || this.closed) return;
    const scan = await scanFrames(this.file, this.endByte, this.starts);
    this.endByte = scan.validBytes;
    await this.learnIdentity();
    const problem = scan.problem;
    if (problem?.validFramesFollow) throw new CorruptLogError(this.path, problem.bytePosition, problem.recordOffset, problem.reason);
  }

  async head(): Promise<Cursor> {
    await this.refresh();
    return new Map([[0, this.starts.length]]);
  }

  async *read(from: Cursor, options: ReadOptions = {}): AsyncIterable<LogRecord> {
    await this.refresh();
    const end = this.starts.length;
    let offset = from.get(0) ?? 0;
    while (offset < end && !options.signal?.aborted) {
      const records = await readChunk(this,offset, end);
      for (const record of records) yield record;
      offset += records.length;
    }
  }

  async *follow(from: Cursor, options: ReadOptions = {}): AsyncIterable<LogRecord> {
    let offset = from.get(0) ?? 0;
    const { signal } = options;
    while (!signal?.aborted && !this.closed) {
      if (offset < this.starts.length) {
        const records = await readChunk(this,offset, this.starts.length);
        for (const record of records) yield record;
        offset += records.length;
      } else if (this.lock) {
        await this.nextAppend(signal);
      } else {
        await this.pause(signal);
        await this.refresh();
      }
    }
  }

  /** A reader has no append to wait for: it looks at the file again after `pollMs`. */
  private pause(signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.pollMs);
      function done() {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  private nextAppend(signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.listeners.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      this.listeners.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Appends already accepted are written and synced before the file is closed.
    await this.batcher.idle();
    for (const listener of [...this.listeners]) listener();
    await this.file.close();
    await this.lock?.release();
  }
}
