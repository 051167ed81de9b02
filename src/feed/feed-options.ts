// What a feed (feed.ts) is given: where its records come from, where it starts, how it shows them
// and how much it may buffer; and how it ended. Apart from the feed itself, which only runs it.
import type { CommitListener } from '../log/capabilities.js';
import type { Cursor, EventLog, LogRecord } from '../log/event-log.js';
import type { LogKind } from '../log/positions.js';
import type { FeedFormat } from './feed-frames.js';
import type { ShownLine } from './shown-line.js';

/** Where a feed's records come from: the projector's applied records, and the log for the history before them. */
export interface FeedSource {
  readonly log: Pick<EventLog, 'readBatches'>;
  /** The projected cursor now: every record before it has been applied (and handed to listeners added before it moved). */
  cursor(): Cursor;
  /** Hands `listener` every batch the projector applies from now on; returns the unsubscribe function. */
  onApplied(listener: CommitListener): () => void;
}

export interface FeedOptions {
  readonly source: FeedSource;
  /** The next offset of each partition to send (absent: from the partition's start). */
  readonly from: Cursor;
  readonly format: FeedFormat;
  readonly kind: LogKind;
  /** A record as sent (shown-line.ts). */
  readonly show: (record: LogRecord) => Promise<ShownLine>;
  readonly bufferBytes: number;
  readonly heartbeatMs: number;
  /** How long a client the server ends gets to take the last line before its connection is closed (default: heartbeatMs). */
  readonly endGraceMs?: number;
  /**
   * Whether the request's token still grants `read`, asked before each event and heartbeat: a
   * token a reload removed or narrowed ends the feed at once (absent: always).
   */
  readonly allowed?: () => boolean;
}

/** Why a feed whose token a reload took away ends. */
export const TOKEN_WITHDRAWN =
  "the request's token no longer grants read (a reload of the tokens removed or narrowed it)";

/** Why a feed ended: the client went away, the server ended it (cut off, shutting down). */
export type FeedEnd =
  { readonly by: 'client' } | { readonly by: 'server'; readonly reason: string; readonly after: string | null };
