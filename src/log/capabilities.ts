// What some logs offer beyond the port (event-log.ts), each as a small interface with a type guard.
// An adapter implements the capabilities it has; a caller asks for the one it uses, by type, and
// does without it when the log lacks it (kafkajs' factories and Emmett's event-store features
// work the same way). A guard looks at the methods themselves, so a log wrapped by a test
// (Object.create over a real one) keeps what its prototype offers.
import type { Cursor, EventLog, LogRecord } from './event-log.js';
import type { KeyStore } from '../keys/key-store.js';

/**
 * Other instances write to this log too (Kafka): what one of them may have written for a key is
 * learnt by asking the head of the key's partition.
 */
export interface KeyedHeads {
  /** The head of the partition that holds `key`, as of now. */
  latest(key: string): Promise<Cursor>;
  /** The partition `key` belongs to; a record elsewhere was written under another partition count. */
  partitionFor(key: string): number;
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

/** The start-up scan of this log can resume where a snapshot's history ends (the file log). */
export interface ResumableScan {
  /**
   * Where a later open of this log may resume its start-up scan for a history folded up to
   * `cursor` (opaque; a snapshot keeps it). Undefined: the log has no such point.
   */
  resumePoint(cursor: Cursor): string | undefined;
  /**
   * Makes sure the records from `from` on are scanned and readable (a log opened at a resume point
   * scans what lies before it only now), failing as the open would have on damage there.
   */
  scanFrom(from: Cursor): Promise<void>;
}

/**
 * The log keeps the content keys of its sealed events itself (the embedded log: keys.db beside
 * events.log, under the same lock): `contentKey` of an appended message is made durable in the same
 * group commit as the message, and `keyStore()` is that store.
 */
export interface KeyCarrier {
  keyStore(): KeyStore;
}

/** The records of one durable flush, in log order, handed to a listener in this process. */
export type CommitListener = (records: readonly LogRecord[]) => void;

/** The in-process hand-off of this process's appends (without it, appends are only seen by following). */
export interface CommitFeed {
  /**
   * `listener` is called synchronously with the records of every flush of this process's appends,
   * in log order, once they are durable and before the appends they acknowledge resolve. Returns
   * the unsubscribe function.
   */
  onCommit(listener: CommitListener): () => void;
}

/** The listeners of one log's commit hand-off (`CommitFeed.onCommit`). */
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

/** Whether `log` has every one of `methods` (the guards below name their capability's methods). */
export function offers<C>(log: EventLog, methods: readonly (keyof C & string)[]): log is EventLog & C {
  const members = log as unknown as Record<string, unknown>;
  return methods.every((method) => typeof members[method] === 'function');
}

/** A client of brokers (Kafka's event log, its key store) counts the times one of them became unreachable from it. */
export interface BrokerFigures {
  brokerOutages(): number;
}

export const hasBrokerFigures = <T extends object>(client: T): client is T & BrokerFigures =>
  typeof (client as Partial<BrokerFigures>).brokerOutages === 'function';
export const hasKeyedHeads = (log: EventLog): log is EventLog & KeyedHeads =>
  offers<KeyedHeads>(log, ['latest', 'partitionFor']);
export const hasResumableScan = (log: EventLog): log is EventLog & ResumableScan =>
  offers<ResumableScan>(log, ['resumePoint', 'scanFrom']);
export const hasCommitFeed = (log: EventLog): log is EventLog & CommitFeed => offers<CommitFeed>(log, ['onCommit']);
export const hasKeyCarrier = (log: EventLog): log is EventLog & KeyCarrier => offers<KeyCarrier>(log, ['keyStore']);
