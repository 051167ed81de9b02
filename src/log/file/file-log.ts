// The embedded event log's writer: one append-only file in the data directory, one partition,
// held by one process (the lock). Group commit: appends that arrive while a write is in flight
// wait for the next batch, and one durable write (durable-write.ts: on disk when it resolves)
// acknowledges the whole batch. Followers only
// ever see records that are on disk. The projector of this process gets each batch handed over
// in memory as soon as it is durable (onCommit), the very buffers the appenders gave, so
// nothing written is read back or kept around; other followers read the file
// (file-log-reader.ts is the reader of another process).
import { open, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Logger } from 'pino';
import { MAX_RECORD_BYTES } from './frames.js';
import { encodeMessageBatch } from './batches.js';
import { openDurable, type DurableFile } from '../../data-dir/durable-write.js';
import { isReadOnlyError, readOnlyNow } from '../../data-dir/read-only.js';
import { isSpaceError, SpaceWatch } from './space-watch.js';
import { FrameIndex, parseBatchPoint } from './frame-index.js';
import { Batcher, DEFAULT_MAX_PENDING_APPENDS } from '../batcher.js';
import { lockDir, type DirLock } from './lock.js';
import { ensurePrivateDir, PRIVATE_FILE_MODE, syncDir } from '../../data-dir/data-dir.js';
import { scanLog, type ResumeCheck } from './recovery.js';
import { expectRegularFile } from '../../regular-file.js';
import {
  CommitListeners,
  type CommitFeed,
  type CommitListener,
  type KeyCarrier,
  type ResumableScan,
  type ResumeFrom,
} from '../capabilities.js';
import { openFileKeyStore, type FileKeyStore } from '../../keys/file-key-store.js';
import { cutUnkeyedBatch } from './unkeyed-tail.js';
import {
  LogUnavailableError,
  RecordTooLargeError,
  payloadBytes,
  type AppendOptions,
  type Cursor,
  type EventLog,
  type LogMessage,
  type LogHealth,
  type LogPosition,
  type LogStats,
  type LogRecord,
  type ReadOptions,
} from '../event-log.js';
import type { FileBacked, FileRange } from './file-range.js';

export interface FileLogOptions {
  /** The data directory; the log is `events.log` in it. */
  readonly dir: string;
  readonly logger: Logger;
  readonly now?: () => number;
  /** Appends allowed to wait for the next durable write (REPORTS_MAX_PENDING_APPENDS). */
  readonly maxPendingAppends?: number;
  /**
   * Where the newest snapshot's history ends (`ResumableScan.resumePoint`, with the snapshot's last
   * record): the scan at open starts there if it holds, and the records before it are scanned when
   * first read.
   */
  readonly resumeFrom?: ResumeFrom;
  /** Told once when a write fails because the file system is read-only (read-only.ts): the server lets go of the directory. */
  readonly onReadOnly?: () => void;
  /** Take over a lock this very process holds (opening the directory again after it went read-only). */
  readonly reclaimOwnLock?: boolean;
}

export interface FileLogStats extends LogStats {
  /** Each flush of the file log is one durable write (see durable-write.ts). */
  readonly fsyncs: number;
}

/** A file log, the writer or a reader: it resumes its scan at a snapshot's point and knows its file. */
export interface FileLog extends EventLog, ResumableScan, FileBacked {
  stats(): FileLogStats;
}

/** The event log's file in the data directory. */
export const EVENT_LOG_NAME = 'events.log';

/** The writer also hands its commits over in memory, and carries the content keys of its events (keys.db). */
export async function openFileLog({
  dir,
  logger,
  now = Date.now,
  maxPendingAppends = DEFAULT_MAX_PENDING_APPENDS,
  resumeFrom,
  onReadOnly,
  reclaimOwnLock = false,
}: FileLogOptions): Promise<FileLog & CommitFeed & KeyCarrier> {
  await ensurePrivateDir(dir);
  const lock = await lockDir(dir, { reclaimOwn: reclaimOwnLock });
  const path = join(dir, EVENT_LOG_NAME);
  let file: FileHandle | undefined;
  let keys: FileKeyStore | undefined;
  try {
    // Opened under the lock: its open may cut a torn tail, which only the directory's holder may do.
    keys = await openFileKeyStore({ dir, logger, maxPending: maxPendingAppends, create: true });
    file = await open(path, 'a+', PRIVATE_FILE_MODE);
    // A FIFO or a directory in its place: named now, rather than a read that blocks or fails later.
    await expectRegularFile(file, path);
    await file.close();
    // The log's directory entry must be on disk before any append is acknowledged.
    await syncDir(dir);
    const durable = await openDurable(path);
    file = durable.handle;
    let scan = await scanLog(file, path, resumeCheck(resumeFrom));
    if (scan.tornTail) {
      logger.warn(
        { path, ...scan.tornTail },
        'cut a torn tail off the event log (an append that was never acknowledged)',
      );
    }
    scan = await cutUnkeyedBatch(file, scan, keys, path, logger);
    // A writer killed between its write and its sync leaves whole batches in the page cache only,
    // and the scan keeps them. An O_DSYNC write makes only its own bytes durable, so those would
    // stay in the cache under newer acknowledged batches (a hole after a power loss): flush them now.
    await file.datasync();
    const records = scan.firstOffset + scan.starts.length;
    logger.info(
      { path, records, ...(scan.firstOffset > 0 ? { scannedFrom: scan.firstOffset } : {}) },
      'opened the embedded event log',
    );
    const index = new FrameIndex(path, file, scan.starts, scan.validBytes, scan.firstOffset, scan.firstByte);
    index.lastBatch = scan.lastBatch;
    await index.learnIdentity();
    return new FileLogWriter(index, durable, keys, lock, now, maxPendingAppends, logger, onReadOnly);
  } catch (error) {
    await file?.close().catch(() => undefined);
    await keys?.close().catch(() => undefined);
    await lock.release();
    throw error;
  }
}

function resumeCheck(resume: ResumeFrom | undefined): ResumeCheck | undefined {
  const point = parseBatchPoint(resume?.point);
  return resume === undefined || point === undefined
    ? undefined
    : { point, lastRecord: resume.records - 1, lastRecordDigest: resume.lastRecordDigest };
}

class FileLogWriter implements FileLog, CommitFeed, KeyCarrier {
  readonly description: string;
  readonly maxRecordBytes = MAX_RECORD_BYTES;
  /** Group commit: appends that arrive while a durable write is in flight go together in the next one. */
  private readonly batcher: Batcher<readonly LogMessage[], LogPosition[]>;
  private closed = false;
  private failure: Error | undefined;
  private appendCount = 0;
  private fsyncCount = 0;
  /** Followers waiting for the next append. */
  private readonly listeners = new Set<() => void>();
  private readonly committed = new CommitListeners();
  /** While a write failed for want of space: watches for room, then takes writes again. */
  private readonly spaceWatch: SpaceWatch;
  /** Whether the server was told the file system is read-only (once). */
  private readOnlyTold = false;

  constructor(
    private readonly index: FrameIndex,
    /** The index's file, for the writes. */
    private readonly durable: DurableFile,
    /** keys.db: the content keys of the sealed creates, written with the batches that need them. */
    private readonly keys: FileKeyStore,
    private readonly lock: DirLock,
    private readonly now: () => number,
    maxPending: number,
    private readonly logger: Logger,
    private readonly onReadOnly: (() => void) | undefined,
  ) {
    this.description = `file:${index.path}`;
    this.batcher = new Batcher((appends) => this.writeBatch(appends), { maxPending });
    this.spaceWatch = new SpaceWatch({ path: dirname(index.path) });
  }

  get identity(): string {
    return this.index.identity;
  }

  stats(): FileLogStats {
    return { appends: this.appendCount, fsyncs: this.fsyncCount, flushes: this.fsyncCount };
  }

  append(messages: readonly LogMessage[], { signal, timeoutMs }: AppendOptions = {}): Promise<LogPosition[]> {
    if (this.closed) return Promise.reject(new LogUnavailableError('the event log is closed'));
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
    const messages = appends.flat();
    // One batch per durable write: recovery keeps or cuts it whole.
    const batch = encodeMessageBatch(messages, timestampMs);
    const batchByte = this.index.endByte;
    const contentKeys = messages.flatMap(({ contentKey }) => (contentKey === undefined ? [] : [contentKey]));
    // The batch and its keys at once, each with its own sync: acknowledged once both are durable.
    // Both settle before a failure is acted on, so no write is still running when the file is cut back.
    const [written, keyed] = await Promise.allSettled([
      this.durable.write(batch.bytes, batchByte),
      contentKeys.length === 0 ? undefined : this.keys.put(contentKeys),
    ]);
    const failed = written.status === 'rejected' ? written : keyed.status === 'rejected' ? keyed : undefined;
    if (failed !== undefined) throw this.failed(failed.reason);
    this.fsyncCount += 1;
    const first = this.index.records;
    this.index.add(batch, batchByte);
    this.appendCount += messages.length;
    this.committed.notify(() =>
      messages.map(({ key, value }, i): LogRecord => ({
        key,
        value,
        timestampMs,
        position: { partition: 0, offset: first + i },
      })),
    );
    for (const listener of [...this.listeners]) listener();
    let next = first;
    return appends.map((batch) => batch.map(() => ({ partition: 0, offset: next++ })));
  }

  /**
   * After a failed durable write the page cache and the disk may disagree; appending on top could
   * acknowledge data that is not there. Every append fails until a restart re-scans, or, when the
   * disk was full, until space is freed and the file is cut back to what was acknowledged.
   */
  private failed(cause: unknown): Error {
    if (isReadOnlyError(cause)) return this.readOnly(cause);
    if (!isSpaceError(cause)) {
      this.failure = new LogUnavailableError(`the event log ${this.index.path} failed to write; restart the service`, {
        cause,
      });
      // A failing disk's EIO comes first, and the kernel remounts the file system read-only with it.
      void this.readOnlyNow(cause);
      return this.failure;
    }
    this.failure = new LogUnavailableError(
      `the disk of the event log ${this.index.path} is full: writes are refused until space is freed, then resume by themselves`,
      { cause },
    );
    this.logger.error(
      { path: this.index.path, err: cause },
      'the disk of the event log is full: writes answer 503 until space is freed',
    );
    this.spaceWatch.start(() => this.resumeAfterFullDisk());
    return this.failure;
  }

  /** Every write refused until the file system is writable again; the server is told once, and lets go of the directory. */
  private readOnly(cause: unknown): Error {
    const told = this.readOnlyTold;
    this.readOnlyTold = true;
    this.failure = new LogUnavailableError(
      `the file system of the event log ${this.index.path} is read-only: writes are refused until it is writable again`,
      { cause },
    );
    if (!told) {
      this.spaceWatch.stop();
      this.logger.error(
        { path: this.index.path, err: cause },
        'the data directory is read-only: writes answer 503 until it is writable again',
      );
      this.onReadOnly?.();
    }
    return this.failure;
  }

  /** After another failure: the read-only path too, if the directory now refuses a new file as read-only. */
  private async readOnlyNow(cause: unknown): Promise<boolean> {
    if (this.closed || this.readOnlyTold || !(await readOnlyNow(dirname(this.index.path)))) return false;
    this.readOnly(cause);
    return true;
  }

  private async resumeAfterFullDisk(): Promise<boolean> {
    if (this.closed) return true;
    if (await this.readOnlyNow(this.failure)) return true;
    if (!(await this.keys.resumeAfterFullDisk())) return false;
    // The failed batch's bytes (in the page cache, or some on disk) lie past the acknowledged end.
    await this.index.file.truncate(this.index.endByte);
    await this.index.file.datasync();
    this.failure = undefined;
    this.logger.info({ path: this.index.path }, 'the event log takes writes again: space was freed');
    return true;
  }

  onCommit(listener: CommitListener): () => void {
    return this.committed.add(listener);
  }

  keyStore(): FileKeyStore {
    return this.keys;
  }

  fileRange(records: number): Promise<FileRange | undefined> {
    return this.index.fileRange(records);
  }

  scanFrom(from: Cursor): Promise<void> {
    return this.index.scanFrom(from.get(0) ?? 0);
  }

  resumePoint(cursor: Cursor): string | undefined {
    return this.index.resumePoint(cursor.get(0) ?? 0);
  }

  health(): LogHealth {
    if (this.failure) return { available: false, reason: this.failure.message };
    if (this.closed) return { available: false, reason: 'the event log is closed' };
    return { available: true };
  }

  head(): Promise<Cursor> {
    return Promise.resolve(new Map([[0, this.index.records]]));
  }

  readBatches(from: Cursor, options: ReadOptions = {}): AsyncIterable<readonly LogRecord[]> {
    return this.index.batches(from.get(0) ?? 0, this.index.records, options.signal);
  }

  followBatches(from: Cursor, { signal }: ReadOptions = {}): AsyncIterable<readonly LogRecord[]> {
    return this.index.follow(
      from,
      () => !signal?.aborted && !this.closed,
      () => this.nextAppend(signal),
    );
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
    this.spaceWatch.stop();
    // Appends already accepted are written and synced before the file is closed.
    await this.batcher.idle();
    for (const listener of [...this.listeners]) listener();
    await this.index.file.close();
    await this.keys.close();
    await this.lock.release();
  }
}
