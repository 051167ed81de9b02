// A new generation of the embedded log, written whole beside the live one and then put in its place
// (`reports seal-history`, `reports restore`): the magic, then the records in batches of the log's
// format (batches.ts), each batch a run of records with one timestamp (as the writer stamped a
// group commit), so every record keeps its place (its offset) and its time. Written without a sync
// per batch: nothing is acknowledged from it, and it is synced once, whole, before it is renamed
// over events.log (one atomic step: the old log or the new one, never a mix) and the directory
// synced.
import { open, rename, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { encodeMessageBatch } from './batches.js';
import { PRIVATE_FILE_MODE, syncDir } from '../../data-dir/data-dir.js';
import { FILE_MAGIC } from './frames.js';

/** The log's file in a data directory (or in a staging directory beside it). */
export const LOG_FILE = 'events.log';
/** Records per batch at most, and the bytes gathered before one write. */
const BATCH_RECORDS = 10_000;
const WRITE_BYTES = 4 * 1024 * 1024;

export interface GenerationRecord {
  readonly key: string;
  readonly value: Buffer;
  readonly timestampMs: number;
}

export interface LogGeneration {
  /** Appends the records after those written so far. */
  write(records: readonly GenerationRecord[]): Promise<void>;
  /** Records written so far. */
  readonly records: number;
  /** Writes what is gathered, syncs the file and closes it. */
  finish(): Promise<void>;
  /** Closes the file without finishing it (the caller removes it). */
  abandon(): Promise<void>;
}

/** Starts `dir`/events.log, a file that must not exist yet. */
export async function createLogGeneration(dir: string): Promise<LogGeneration> {
  const file = await open(join(dir, LOG_FILE), 'wx', PRIVATE_FILE_MODE);
  try {
    await file.write(FILE_MAGIC, 0, FILE_MAGIC.length, 0);
  } catch (error) {
    await file.close();
    throw error;
  }
  return new GenerationWriter(file, FILE_MAGIC.length);
}

/** Makes the generation written in `fromDir` the log of `dataDir`, in one rename; the directory synced. */
export async function installGeneration(fromDir: string, dataDir: string): Promise<void> {
  await rename(join(fromDir, LOG_FILE), join(dataDir, LOG_FILE));
  await syncDir(dataDir);
}

class GenerationWriter implements LogGeneration {
  records = 0;
  private gathered: Buffer[] = [];
  private gatheredBytes = 0;

  constructor(
    private readonly file: FileHandle,
    private position: number,
  ) {}

  async write(records: readonly GenerationRecord[]): Promise<void> {
    for (let first = 0; first < records.length;) {
      const timestampMs = (records[first] as GenerationRecord).timestampMs;
      let end = first + 1;
      while (
        end < records.length &&
        end - first < BATCH_RECORDS &&
        (records[end] as GenerationRecord).timestampMs === timestampMs
      )
        end += 1;
      const { bytes } = encodeMessageBatch(records.slice(first, end), timestampMs);
      this.gathered.push(bytes);
      this.gatheredBytes += bytes.length;
      this.records += end - first;
      first = end;
      if (this.gatheredBytes >= WRITE_BYTES) await this.flush();
    }
  }

  private async flush(): Promise<void> {
    if (this.gatheredBytes === 0) return;
    const bytes = Buffer.concat(this.gathered, this.gatheredBytes);
    this.gathered = [];
    this.gatheredBytes = 0;
    for (let written = 0; written < bytes.length;) {
      const { bytesWritten } = await this.file.write(bytes, written, bytes.length - written, this.position + written);
      if (bytesWritten === 0) throw new Error('the disk accepted no bytes');
      written += bytesWritten;
    }
    this.position += bytes.length;
  }

  async finish(): Promise<void> {
    try {
      await this.flush();
      await this.file.sync();
    } finally {
      await this.file.close();
    }
  }

  async abandon(): Promise<void> {
    await this.file.close().catch(() => undefined);
  }
}
