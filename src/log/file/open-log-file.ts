// The writer's open of events.log: create it if need be, check it is a regular file, scan it (from
// a snapshot's point when that holds), cut what was never acknowledged (a torn tail, a batch whose
// keys are missing), and index what is left. Only the directory's holder (the lock) may call it.
import { lstat, open, type FileHandle } from 'node:fs/promises';
import type { Logger } from 'pino';
import { openDurable, type DurableFile } from '../../data-dir/durable-write.js';
import { PRIVATE_FILE_MODE, syncDir } from '../../data-dir/data-dir.js';
import { expectRegularFile } from '../../regular-file.js';
import type { FileKeyStore } from '../../keys/file-key-store.js';
import type { ResumeFrom } from '../capabilities.js';
import { FrameIndex, parseBatchPoint } from './frame-index.js';
import { FILE_MAGIC } from './frames.js';
import { scanLog, type ResumeCheck } from './recovery.js';
import { cutUnkeyedBatch } from './unkeyed-tail.js';

export interface LogFileOptions {
  /** The data directory holding `path`. */
  readonly dir: string;
  readonly path: string;
  readonly logger: Logger;
  /** keys.db, already open: a last batch whose keys it lacks was never acknowledged. */
  readonly keys: FileKeyStore;
  readonly resumeFrom: ResumeFrom | undefined;
}

/** The log file, recovered and indexed: `durable` writes to `index.file`, which the caller closes. */
export interface LogFile {
  readonly durable: DurableFile;
  readonly index: FrameIndex;
}

/**
 * events.log is missing, or shorter than its magic bytes, while keys.db holds keys: a log that was
 * there (its magic is written when it is made, and a key is put only once the log is open) is gone,
 * deleted, emptied (`: > events.log`) or left behind in a move. Started empty, the store would
 * answer 404 for every report, and the start's sweep would destroy every key as unused, so that
 * even the log put back could no longer be read: the start stops instead.
 */
export class EventLogMissingError extends Error {
  constructor(
    readonly path: string,
    readonly keySlots: number,
    readonly state: 'missing' | 'empty' = 'missing',
  ) {
    super(
      `${path} is ${state === 'missing' ? 'missing' : 'empty (shorter than its magic bytes)'}, but keys.db beside it holds ${keySlots} key slot${keySlots === 1 ? '' : 's'} of reports written to it: refusing to start on an empty log, which would destroy those keys as unused. Put events.log back (or restore a backup with \`reports restore\`); a new store belongs in a new data directory`,
    );
    this.name = 'EventLogMissingError';
  }
}

export async function openLogFile({ dir, path, logger, keys, resumeFrom }: LogFileOptions): Promise<LogFile> {
  let file: FileHandle | undefined;
  try {
    if (keys.slots > 0) {
      const size = await sizeOf(path);
      if (size === undefined) throw new EventLogMissingError(path, keys.slots);
      if (size < FILE_MAGIC.length) throw new EventLogMissingError(path, keys.slots, 'empty');
    }
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
    return { durable, index };
  } catch (error) {
    await file?.close().catch(() => undefined);
    throw error;
  }
}

/** The size of the file at `path` (not following a symbolic link); undefined when there is none. */
async function sizeOf(path: string): Promise<number | undefined> {
  try {
    return (await lstat(path)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function resumeCheck(resume: ResumeFrom | undefined): ResumeCheck | undefined {
  const point = parseBatchPoint(resume?.point);
  return resume === undefined || point === undefined
    ? undefined
    : { point, lastRecord: resume.records - 1, lastRecordDigest: resume.lastRecordDigest };
}
