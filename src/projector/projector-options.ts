// What a Projector is built from, and what it tells of how far it got.
import type { Logger } from 'pino';
import type { Cursor, EventLog } from '../log/event-log.js';
import type { ErasedKey, ReadModel } from '../read-model/read-model.js';
import type { EncodedEvents } from './encoded-events.js';
import type { ProjectionHealth } from './health.js';

export interface ProjectorOptions {
  readonly log: EventLog;
  readonly logger: Logger;
  readonly model?: ReadModel;
  /** Told what is applied and when the model caught up (default: one with a 10 s stall limit). */
  readonly health?: ProjectionHealth;
  /** Called after every batch of applied records with their number (snapshot scheduling). */
  readonly onApplied?: (records: number) => void;
  /**
   * Called once the model has caught up with the head seen at start, before it is ready: an error
   * keeps it from ever being ready, and caughtUp() rejects with it (the start's checks of what it
   * folded failed; the server stops).
   */
  readonly beforeReady?: () => Error | undefined;
  /** Called once, when the model has caught up with the head seen at start (and is ready). */
  readonly onCaughtUp?: () => void;
  /** Told, once caught up, the key of content each folded event ends (read-model.ts ErasedKey): to be destroyed. */
  readonly onErased?: ErasedKey;
  /**
   * Told the same while catching up at start (a catch-up told so folds on one thread): what a
   * crash may have left unerased (a delete whose key was not destroyed yet) is among it.
   */
  readonly onEndedInCatchUp?: ErasedKey;
  /**
   * A catch-up of at least SHARDED_FOLD_RECORDS records at start is folded by foldLog, sharded
   * across this many threads when it starts from an empty model on a file log (absent: the follow
   * loop folds everything itself).
   */
  readonly foldThreads?: number;
  /** How long to wait before following again after the log failed. */
  readonly retryDelayMs?: number;
  readonly now?: () => number;
  /** The events this process encoded for its appends (a new table unless given). */
  readonly encoded?: EncodedEvents;
}

export interface ProjectorProgress {
  readonly cursor: Cursor;
  /** Records applied by this projector (not those that came from a snapshot). */
  readonly applied: number;
  readonly invalid: number;
}
