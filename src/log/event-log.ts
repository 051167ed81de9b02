// The only port to storage. Two adapters implement it: the embedded file log and Kafka.
// Positions are (partition, offset); the file log has a single partition 0.
import type { ReportEvent } from '../../projections/events.js';

export interface LogPosition {
  readonly partition: number;
  readonly offset: number;
}

/** Next offset to read, per partition. A partition absent from the map is read from offset 0. */
export type Cursor = ReadonlyMap<number, number>;

export interface LogMessage {
  /** The report id; keeps all events of one report in one partition, in order. */
  readonly key: string;
  readonly value: Buffer;
  /**
   * The event `value` encodes, when the appender in this process has it. It is never stored or
   * sent: only the commit hand-off passes it on, so the projector folds it without decoding.
   */
  readonly event?: ReportEvent;
}

/** The records of one durable flush, in log order, handed to a listener in this process. */
export type CommitListener = (records: readonly LogRecord[]) => void;

/** The listeners of one log's commit hand-off (`EventLog.onCommit`). */
export class CommitListeners {
  private readonly listeners = new Set<CommitListener>();

  /** Adds `listener`; returns the function that removes it. */
  add(listener: CommitListener): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Hands the records of a flush to every listener; `records` is built only when one listens. */
  notify(records: () => readonly LogRecord[]): void {
    if (this.listeners.size === 0) return;
    const handed = records();
    for (const listener of [...this.listeners]) listener(handed);
  }
}

export interface LogRecord extends LogMessage {
  readonly position: LogPosition;
  /** Milliseconds since the epoch at which the log accepted the record. */
  readonly timestampMs: number;
}

export interface AppendOptions {
  readonly signal?: AbortSignal;
  /**
   * The append settles within this many milliseconds: rejected with AppendTimeoutError when the
   * log has not acknowledged it by then. Messages not yet sent are dropped; messages already sent
   * may still be written (the caller answers "unknown outcome, retry").
   */
  readonly timeoutMs?: number;
}

/**
 * A resume point as a snapshot recorded it, with what identifies it: the snapshot's record count and
 * the digest of its last record (`recordDigest`). A log checks all of it before resuming there.
 */
export interface ResumeFrom {
  readonly point: string;
  readonly records: number;
  readonly lastRecordDigest: string;
}

/** Offsets that hold nothing a reader gets (Kafka transaction markers, aborted transactional records). */
export interface LogGap {
  readonly partition: number;
  /** The next offset that can hold a record on `partition`. */
  readonly next: number;
}

export interface ReadOptions {
  /** Stop the iteration (follow never ends by itself). */
  readonly signal?: AbortSignal;
  /**
   * Called, in order with the records, when the reader moved past offsets that hold no record, so
   * a cursor can pass them too: otherwise it would wait forever for a head it cannot reach.
   */
  readonly onGap?: (gap: LogGap) => void;
}

/** Where records [0, records) of a file log lie: checked batches of frames from `startByte`. */
export interface FileRange {
  readonly path: string;
  readonly startByte: number;
  /** At or after the end of record `records - 1`. */
  readonly endByte: number;
  readonly records: number;
}

export interface EventLog {
  /** A short description for logs and errors, e.g. `file:/var/lib/reports` or `kafka:reports.events`. */
  readonly description: string;
  /** Names the history the positions belong to (snapshots are only used on the log they came from). */
  readonly identity: string;
  /**
   * Appends durably; resolves with one position per message, in order, once acknowledged.
   * Messages not yet sent when `signal` aborts or `timeoutMs` passes are dropped (the caller has
   * given up on them).
   */
  append(messages: readonly LogMessage[], options?: AppendOptions): Promise<LogPosition[]>;
  /**
   * The head of the partition that holds `key`, as of now: what another instance may have written
   * for that key. Absent when this process is the only writer (its own head is always fresh).
   */
  latest?(key: string): Promise<Cursor>;
  /** The partition `key` belongs to (absent: one partition). A record elsewhere was written under another partition count. */
  partitionFor?(key: string): number;
  /** The offsets one past the last record of every partition, as of now. */
  head(): Promise<Cursor>;
  /**
   * Where a later open of this log may resume its start-up scan for a history folded up to
   * `cursor` (opaque; a snapshot keeps it). Absent, or undefined: the log has no such point.
   */
  resumePoint?(cursor: Cursor): string | undefined;
  /**
   * The file that holds records [0, `records`) of this log, checked, for threads that read it
   * themselves (a sharded fold of a long history). Absent (Kafka), or undefined: no such file.
   */
  fileRange?(records: number): Promise<FileRange | undefined>;
  /**
   * Makes sure the records from `from` on are scanned and readable (a log opened at a resume point
   * scans what lies before it only now), failing as the open would have on damage there.
   */
  scanFrom?(from: Cursor): Promise<void>;
  /** Yields the records from `from` up to the head seen when the read started, then ends. */
  read(from: Cursor, options?: ReadOptions): AsyncIterable<LogRecord>;
  /** Like `read`, several records at a time (a long fold pays one step per batch, not per record). */
  readBatches(from: Cursor, options?: ReadOptions): AsyncIterable<readonly LogRecord[]>;
  /**
   * The in-process hand-off: `listener` is called synchronously with the records of every flush
   * of this process's appends, in log order, once they are durable and before the appends they
   * acknowledge resolve. Returns the unsubscribe function. Absent: appends are only seen by following.
   */
  onCommit?(listener: CommitListener): () => void;
  /**
   * Yields the records from `from` and then every new one, until the signal aborts. `from` may be
   * the follower's live cursor: records it has passed meanwhile (through `onCommit`) are not read
   * again, though a batch read before it moved may still hold some (a follower skips those).
   */
  follow(from: Cursor, options?: ReadOptions): AsyncIterable<LogRecord>;
  /** Like `follow`, several records at a time. */
  followBatches(from: Cursor, options?: ReadOptions): AsyncIterable<readonly LogRecord[]>;
  /** Counters since open: records appended and the flushes (fsyncs, produce requests) that carried them. */
  stats(): LogStats;
  /**
   * The largest append (key and value bytes) the log takes; `append` refuses a larger one with
   * RecordTooLargeError before anything is written or sent, since it would be refused forever.
   */
  readonly maxRecordBytes: number;
  /** Whether the log can take writes right now, and why not (for /readyz). */
  health(): LogHealth;
  close(): Promise<void>;
}

export interface LogStats {
  readonly appends: number;
  readonly flushes: number;
  /** Times one of the log's servers (a Kafka broker) became unreachable; absent for a log without servers. */
  readonly brokerOutages?: number;
}

export interface LogHealth {
  readonly available: boolean;
  readonly reason?: string;
  /** A reason safe to show clients (names no file or address), when the operator must act. */
  readonly publicReason?: string;
}

/** Thrown by adapters when the log cannot take or serve records now; maps to 503. */
export class LogUnavailableError extends Error {
  readonly retriable = true;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'LogUnavailableError';
  }
}

/** Writes are refused until an operator acts (the topic changed under the history); maps to 503 with this message. */
export class LogRefusingWritesError extends LogUnavailableError {
  constructor(message: string) {
    super(message);
    this.name = 'LogRefusingWritesError';
  }
}

/** Thrown when too many appends already wait for the log (it is slow or stuck); maps to 503 with Retry-After. */
export class LogOverloadedError extends Error {
  readonly retriable = true;
  constructor(readonly maxPending: number) {
    super(`${maxPending} appends are already waiting for the event log`);
    this.name = 'LogOverloadedError';
  }
}

/** Thrown when the log did not acknowledge an append within its `timeoutMs`; maps to 503 with Retry-After. */
export class AppendTimeoutError extends Error {
  readonly retriable = true;
  constructor(readonly timeoutMs: number) {
    super(`the event log did not acknowledge the append within ${timeoutMs} ms`);
    this.name = 'AppendTimeoutError';
  }
}

/**
 * The log answered without saying where an append's records went, so whether they were written is
 * not known; maps to 503 (retrying is safe: the fold voids whichever copy comes second). The log
 * itself is fine.
 */
export class AppendOutcomeUnknownError extends Error {
  readonly retriable = true;
  constructor(message: string) {
    super(message);
    this.name = 'AppendOutcomeUnknownError';
  }
}

/** Bytes of a message as the logs count them against their limits: key and value. */
export function payloadBytes({ key, value }: LogMessage): number {
  return Buffer.byteLength(key) + value.length;
}

/** Thrown when one append can never be taken (larger than the log accepts); maps to 413. */
export class RecordTooLargeError extends Error {
  readonly retriable = false;
  constructor(readonly limitBytes: number, readonly sizeBytes: number) {
    super(`an event of ${sizeBytes} bytes is larger than the ${limitBytes} bytes the event log accepts`);
    this.name = 'RecordTooLargeError';
  }
}

/** Whether `cursor` has passed `position` (the record at `position` has been consumed). */
export function cursorPassed(cursor: Cursor, position: LogPosition): boolean {
  return (cursor.get(position.partition) ?? 0) > position.offset;
}

/** Records before `cursor`: its offsets summed (every partition counts from offset 0). */
export function cursorTotal(cursor: Cursor): number {
  let total = 0;
  for (const offset of cursor.values()) total += offset;
  return total;
}

/** Records of `target` that `cursor` has not reached yet, summed over the partitions of `target`. */
export function cursorLag(cursor: Cursor, target: Cursor): number {
  let lag = 0;
  for (const [partition, offset] of target) lag += Math.max(0, offset - (cursor.get(partition) ?? 0));
  return lag;
}

/** Whether `cursor` has reached `target` on every partition of `target`. */
export function cursorReached(cursor: Cursor, target: Cursor): boolean {
  for (const [partition, offset] of target) if ((cursor.get(partition) ?? 0) < offset) return false;
  return true;
}
