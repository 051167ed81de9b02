// The embedded event log's writer: one append-only file in the data directory, one partition,
// held by one process (the lock). Group commit: appends that arrive while a write is in flight
// wait for the next batch, and one durable write (durable-write.ts: on disk when it resolves)
// acknowledges the whole batch. Followers only
// ever see records that are on disk. The projector of this process gets each batch handed over
// in memory as soon as it is durable (onCommit), the very buffers the appenders gave, so
// nothing written is read back or kept around; other followers read the file
// (file-log-reader.ts is the reader of another process).
import type { Logger } from 'pino';
import { MAX_RECORD_BYTES } from './frames.js';
import { encodeMessageBatch } from './batches.js';
import type { DurableFile } from '../../data-dir/durable-write.js';
import type { FrameIndex } from './frame-index.js';
import { Batcher } from '../batcher.js';
import type { DirLock } from './lock.js';
import { CommitListeners, type CommitFeed, type CommitListener, type KeyCarrier } from '../capabilities.js';
import type { FileKeyStore } from '../../keys/file-key-store.js';
import {
  LogUnavailableError,
  RecordTooLargeError,
  payloadBytes,
  type AppendOptions,
  type Cursor,
  type LogMessage,
  type LogHealth,
  type LogPosition,
  type LogRecord,
  type ReadOptions,
} from '../event-log.js';
import type { FileRange } from './file-range.js';
import type { FileLog, FileLogStats } from './file-log.js';
import { WriteHealth } from './write-health.js';
import { AppendWaiters } from './append-waiters.js';
import { PlaceWatch } from './place-watch.js';

export class FileLogWriter implements FileLog, CommitFeed, KeyCarrier {
  readonly description: string;
  readonly maxRecordBytes = MAX_RECORD_BYTES;
  /** Group commit: appends that arrive while a durable write is in flight go together in the next one. */
  private readonly batcher: Batcher<readonly LogMessage[], LogPosition[]>;
  private closed = false;
  private appendCount = 0;
  private fsyncCount = 0;
  private readonly appendWaiters = new AppendWaiters();
  private readonly committed = new CommitListeners();
  /** The failure writes are refused with, and the way back from it. */
  private readonly writeHealth: WriteHealth;
  /** Whether the log's name still leads to the file written (a directory moved or deleted under the server). */
  private readonly placeWatch: PlaceWatch;

  constructor(
    private readonly index: FrameIndex,
    /** The index's file, for the writes. */
    private readonly durable: DurableFile,
    /** keys.db: the content keys of the sealed creates, written with the batches that need them. */
    private readonly keys: FileKeyStore,
    private readonly lock: DirLock,
    private readonly now: () => number,
    maxPending: number,
    logger: Logger,
    onReadOnly: (() => void) | undefined,
  ) {
    this.description = `file:${index.path}`;
    this.batcher = new Batcher((appends) => this.writeBatch(appends), { maxPending });
    this.writeHealth = new WriteHealth({ index, keys, logger, onReadOnly });
    this.placeWatch = new PlaceWatch(index.path, index.file, (what) => this.writeHealth.lost(what));
    this.placeWatch.start();
  }

  get identity(): string {
    return this.index.identity;
  }

  stats(): FileLogStats {
    return { appends: this.appendCount, fsyncs: this.fsyncCount, flushes: this.fsyncCount };
  }

  append(messages: readonly LogMessage[], { signal, timeoutMs }: AppendOptions = {}): Promise<LogPosition[]> {
    if (this.closed) return Promise.reject(new LogUnavailableError('the event log is closed'));
    const failure = this.writeHealth.failure;
    if (failure) return Promise.reject(failure);
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (messages.length === 0) return Promise.resolve([]);
    const size = Math.max(...messages.map(payloadBytes));
    if (size > this.maxRecordBytes) return Promise.reject(new RecordTooLargeError(this.maxRecordBytes, size));
    // The batcher drops an append whose caller gave up (signal aborted) before its batch is written.
    return this.batcher.add(messages, signal, timeoutMs);
  }

  private async writeBatch(appends: readonly (readonly LogMessage[])[]): Promise<LogPosition[][]> {
    const failure = this.writeHealth.failure;
    if (failure) throw failure;
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
    if (failed !== undefined)
      throw this.writeHealth.failed(
        failed.reason,
        contentKeys.map(({ id }) => id),
      );
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
    this.appendWaiters.wakeAll();
    let next = first;
    return appends.map((batch) => batch.map(() => ({ partition: 0, offset: next++ })));
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
    const failure = this.writeHealth.failure;
    if (failure) return { available: false, reason: failure.message };
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
      () => this.appendWaiters.next(signal),
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.placeWatch.stop();
    this.writeHealth.close();
    // Appends already accepted are written and synced before the file is closed.
    await this.batcher.idle();
    this.appendWaiters.wakeAll();
    await this.index.file.close();
    await this.keys.close();
    await this.lock.release();
  }
}
