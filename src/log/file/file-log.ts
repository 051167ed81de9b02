// The embedded event log, as the rest of the service sees it: its options, the interface its
// writer and its reader (file-log-reader.ts) share, and the writer's open. The open takes the data
// directory's lock first, then keys.db, then events.log (open-log-file.ts: the scan and the cut of
// what was never acknowledged), and hands them to the writer (file-log-writer.ts: group commit,
// reads, follow); write-health.ts holds what a failed write leaves the writer in.
import { join } from 'node:path';
import type { Logger } from 'pino';
import { DEFAULT_MAX_PENDING_APPENDS } from '../batcher.js';
import { lockDir } from './lock.js';
import { ensurePrivateDir } from '../../data-dir/data-dir.js';
import type { CommitFeed, KeyCarrier, ResumableScan, ResumeFrom } from '../capabilities.js';
import { openFileKeyStore, type FileKeyStore } from '../../keys/file-key-store.js';
import type { EventLog, LogStats } from '../event-log.js';
import type { FileBacked } from './file-range.js';
import { openLogFile, type LogFile } from './open-log-file.js';
import { FileLogWriter } from './file-log-writer.js';

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
  let logFile: LogFile | undefined;
  let keys: FileKeyStore | undefined;
  try {
    // Opened under the lock: its open may cut a torn tail, which only the directory's holder may do.
    keys = await openFileKeyStore({ dir, logger, maxPending: maxPendingAppends, create: true });
    logFile = await openLogFile({ dir, path, logger, keys, resumeFrom });
    const { index, durable } = logFile;
    return new FileLogWriter(index, durable, keys, lock, now, maxPendingAppends, logger, onReadOnly);
  } catch (error) {
    await logFile?.index.file.close().catch(() => undefined);
    await keys?.close().catch(() => undefined);
    await lock.release();
    throw error;
  }
}
