// The embedded log read by another process than its writer (the CLI beside a running server): no
// lock, no repair. An incomplete last batch is taken for a write in progress and read once it is
// whole; damage followed by whole batches is refused as at a normal open. New records are found by
// looking at the file again every `pollMs`. A follow that finds another file under the log's name
// (`reports restore`, `reports seal-history`) stops with LogReplacedError once it has read the rest
// of the file it held: it went on reading a file nothing writes to, silent for ever.
// With `waitForKeys` (the tools beside a server): the writer writes a batch and its content keys
// side by side and acknowledges both at once, so a last batch whose keys keys.db does not hold yet
// is read once they are there, as an incomplete batch is. It may never be: refused for want of
// room in keys.db, or left by a crash, it is cut (by the writer once space is freed, or at the next
// start) and another batch is written at its bytes.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import {
  LogUnavailableError,
  type Cursor,
  type LogHealth,
  type LogMessage,
  type LogPosition,
  type LogRecord,
  type ReadOptions,
} from '../event-log.js';
import type { FileRange } from './file-range.js';
import { FILE_MAGIC, MAX_RECORD_BYTES } from './frames.js';
import { FrameIndex } from './frame-index.js';
import type { FileLog, FileLogOptions, FileLogStats } from './file-log.js';
import { checkMagic, CorruptLogError, scanFrames, type BatchPoint } from './recovery.js';
import { batchLacksKeys } from './unkeyed-tail.js';
import { keysPutNow } from '../../keys/read-file-keys.js';
import { pause } from '../../pause.js';
import { openRegularFile } from '../../regular-file.js';

export async function openFileLogReader({
  dir,
  logger,
  pollMs = 200,
  waitForKeys = false,
}: Pick<FileLogOptions, 'dir' | 'logger'> & { pollMs?: number; waitForKeys?: boolean }): Promise<FileLog> {
  const path = join(dir, 'events.log');
  const file = await openRegularFile(path).catch((error: NodeJS.ErrnoException) => {
    throw error.code === 'ENOENT' ? new Error(`no event log at ${path} (REPORTS_DATA_DIR)`) : error;
  });
  try {
    const magic = await checkMagic(file, path);
    if (magic === 'bad') throw new Error(`${path} is not a report store log (bad magic bytes)`);
    const { dev, ino } = await file.stat();
    const keyed = async (batch: BatchPoint) =>
      !waitForKeys || !(await batchLacksKeys(file, batch, { wasPut: (ids) => keysPutNow(dir, ids) }));
    const reader = new FileLogReader(new FrameIndex(path, file, [], FILE_MAGIC.length), pollMs, { dev, ino }, keyed);
    if (magic === 'ok') await reader.refresh();
    logger.debug({ path, records: (await reader.head()).get(0) }, 'opened the embedded event log for reading');
    return reader;
  } catch (error) {
    await file.close();
    throw error;
  }
}

/** Another file is under the log's name than the one a follow was reading: the history it follows ended there. */
export class LogReplacedError extends Error {
  constructor(path: string) {
    super(
      `${path} was replaced while this followed it (reports restore or reports seal-history): every event of ` +
        'the file it read is printed; the new one may give those positions to other events after a restore, ' +
        'so run this again',
    );
    this.name = 'LogReplacedError';
  }
}

interface FileId {
  readonly dev: number;
  readonly ino: number;
}

class FileLogReader implements FileLog {
  readonly description: string;
  readonly maxRecordBytes = MAX_RECORD_BYTES;
  private closed = false;
  /** Set once the log's name was found to lead to another file: the records left are read, then the follow stops. */
  private replaced = false;

  constructor(
    private readonly index: FrameIndex,
    private readonly pollMs: number,
    /** The file opened, to tell it from another put under its name later. */
    private readonly held: FileId,
    /** Whether keys.db holds every key the batch at `batch` names (the writer may be writing them). */
    private readonly keyed: (batch: BatchPoint) => Promise<boolean>,
  ) {
    this.description = `file:${index.path}`;
  }

  get identity(): string {
    return this.index.identity;
  }

  stats(): FileLogStats {
    return { appends: 0, fsyncs: 0, flushes: 0 };
  }

  append(_messages: readonly LogMessage[]): Promise<LogPosition[]> {
    return Promise.reject(new LogUnavailableError('the event log is open for reading only'));
  }

  resumePoint(cursor: Cursor): string | undefined {
    return this.index.resumePoint(cursor.get(0) ?? 0);
  }

  /** A reader scans the whole file at open: every record is scanned already. */
  scanFrom(from: Cursor): Promise<void> {
    return this.index.scanFrom(from.get(0) ?? 0);
  }

  health(): LogHealth {
    return this.closed ? { available: false, reason: 'the event log is closed' } : { available: true };
  }

  /** Takes in the batches the writer appended since the last look. */
  async refresh(): Promise<void> {
    if (this.closed) return;
    const { index } = this;
    const known = index.scanned.length;
    let scan = await scanFrames(index.file, index.endByte, index.scanned);
    // Only the last batch can lack keys: the writer starts a batch once the one before is durable in both files.
    const last = scan.lastBatch;
    if (last !== undefined && scan.problem === undefined && !(await this.keyed(last))) {
      index.scanned.length = known;
      scan = await scanFrames(index.file, index.endByte, index.scanned, { until: last.byte });
    }
    index.endByte = scan.validBytes;
    if (scan.lastBatch) index.lastBatch = scan.lastBatch;
    await index.learnIdentity();
    const problem = scan.problem;
    if (problem?.validFramesFollow)
      throw new CorruptLogError(index.path, problem.bytePosition, problem.recordOffset, problem.reason);
  }

  async head(): Promise<Cursor> {
    await this.refresh();
    return new Map([[0, this.index.records]]);
  }

  async *readBatches(from: Cursor, options: ReadOptions = {}): AsyncIterable<readonly LogRecord[]> {
    await this.refresh();
    yield* this.index.batches(from.get(0) ?? 0, this.index.records, options.signal);
  }

  async fileRange(records: number): Promise<FileRange | undefined> {
    await this.refresh();
    return this.index.fileRange(records);
  }

  followBatches(from: Cursor, { signal }: ReadOptions = {}): AsyncIterable<readonly LogRecord[]> {
    // A reader has no append to wait for: it looks at the file again after pollMs.
    const more = async () => {
      if (this.replaced) throw new LogReplacedError(this.index.path);
      await pause(this.pollMs, signal);
      // Looked at before the last read of the file: what its writer wrote before it was replaced is read first.
      this.replaced = !(await this.stillNamed());
      await this.refresh();
    };
    return this.index.follow(from, () => !signal?.aborted && !this.closed, more);
  }

  /** Whether the log's name still leads to the file this reader holds. */
  private async stillNamed(): Promise<boolean> {
    const named = await stat(this.index.path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    return named !== undefined && named.dev === this.held.dev && named.ino === this.held.ino;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.index.file.close();
  }
}
