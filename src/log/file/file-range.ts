// The file log's own capability: the file that holds its checked records, for threads that read it
// themselves (the sharded fold of a long history). Only the file log knows files, so this lives here
// and not in the port.
import { offers } from '../capabilities.js';
import type { EventLog } from '../event-log.js';

/** Where records [0, records) of a file log lie: checked batches of frames from `startByte`. */
export interface FileRange {
  readonly path: string;
  readonly startByte: number;
  /** At or after the end of record `records - 1`. */
  readonly endByte: number;
  readonly records: number;
}

export interface FileBacked {
  /** The file that holds records [0, `records`) of this log, checked; undefined: no such file. */
  fileRange(records: number): Promise<FileRange | undefined>;
}

export const isFileBacked = (log: EventLog): log is EventLog & FileBacked => offers<FileBacked>(log, ['fileRange']);
