// The only port to storage. Two adapters implement it: the embedded file log (log/file/) and Kafka
// (log/kafka/). Positions are (partition, offset); the file log has a single partition 0.
//
// The port holds what every log does: append, head, read and follow in batches, health, stats,
// close. What only some logs can do is a capability (capabilities.ts: KeyedHeads, ResumableScan,
// CommitFeed; file/file-range.ts: FileBacked) that an adapter implements and a caller asks for
// with its type guard, doing without it where the log lacks it; so an optimisation for one adapter
// widens that adapter, not the port every caller and test depends on. Reading one record at a
// time is a helper over the batches (record-batches.ts), not a second method of every adapter.
import type { ContentKey } from '../keys/key-store.js';

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
   * The content key a sealed create's event needs. A log that carries keys (capabilities.ts
   * KeyCarrier: the embedded log) makes it durable with the message, in the same group commit;
   * with any other log the appender puts it in the key store first.
   */
  readonly contentKey?: ContentKey;
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

export interface EventLog {
  /** A short description for logs and errors, e.g. `file:/var/lib/reports` or `kafka:reports.events`. */
  readonly description: string;
  /** Names the history the positions belong to (snapshots are only used on the log they came from). */
  readonly identity: string;
  /**
   * The largest append (key and value bytes) the log takes; `append` refuses a larger one with
   * RecordTooLargeError before anything is written or sent, since it would be refused forever.
   */
  readonly maxRecordBytes: number;
  /**
   * Appends durably; resolves with one position per message, in order, once acknowledged.
   * Messages not yet sent when `signal` aborts or `timeoutMs` passes are dropped (the caller has
   * given up on them).
   */
  append(messages: readonly LogMessage[], options?: AppendOptions): Promise<LogPosition[]>;
  /** The offsets one past the last record of every partition, as of now. */
  head(): Promise<Cursor>;
  /**
   * Yields the records from `from` up to the head seen when the read started, several at a time
   * (a long fold pays one step per batch, not per record), then ends.
   */
  readBatches(from: Cursor, options?: ReadOptions): AsyncIterable<readonly LogRecord[]>;
  /**
   * Yields the records from `from` and then every new one, several at a time, until the signal
   * aborts. `from` may be the follower's live cursor: records it has passed meanwhile (through a
   * CommitFeed) are not read again, though a batch read before it moved may still hold some (a
   * follower skips those).
   */
  followBatches(from: Cursor, options?: ReadOptions): AsyncIterable<readonly LogRecord[]>;
  /** Whether the log can take writes right now, and why not (for /readyz). */
  health(): LogHealth;
  /** Counters since open: records appended and the flushes (fsyncs, produce requests) that carried them. */
  stats(): LogStats;
  close(): Promise<void>;
}

export interface LogStats {
  readonly appends: number;
  readonly flushes: number;
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
  /** The log has logged this state itself, once (a full disk, a read-only one): no line per refused write. */
  readonly announced: boolean;
  constructor(message: string, options?: { cause?: unknown; announced?: boolean }) {
    super(message, options);
    this.name = 'LogUnavailableError';
    this.announced = options?.announced ?? false;
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
  constructor(
    readonly limitBytes: number,
    readonly sizeBytes: number,
  ) {
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
