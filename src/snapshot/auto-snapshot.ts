// The server's own snapshots: one when the read model has caught up after folding many records
// at start (none during the catch-up), then one every `every` records applied, or every
// MODEL_SHARE-th of the model's size when that is more. A snapshot costs as much as the model is
// big; taken every `every` records only, a model of millions of reports would be written out in
// full every few thousand writes (and each write would pay more the bigger the model grew). So
// the cost per write stays bounded, and a start folds at most that many records past the newest
// snapshot. The read model is taken as it is (it changes with the next record): its report table's
// bytes are held as they lie, a write meanwhile copying its id table segment first, and its
// idempotency keys encoded a slice per turn. Then the anchors of that cursor are read from the log
// and the file written in the background; one write at a time.
import { setImmediate } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { EventLog } from '../log/event-log.js';
import type { ReadModel } from '../read-model/read-model.js';
import { readAnchors } from './snapshot-anchor.js';
import type { UnerasedDeletion } from '../keys/deletion-records.js';
import { beginSnapshot, MAX_UNERASED } from './snapshot-format.js';
import { SnapshotSpaceError } from './snapshot-space.js';
import { writeEncodedSnapshot } from './snapshot-store.js';
import { hasResumableScan } from '../log/capabilities.js';

export interface AutoSnapshot {
  /** Records were applied (after the catch-up, every `every` records make a snapshot). */
  onApplied(records: number): void;
  /** The catch-up at start is done: a snapshot now if it folded at least `every` records. */
  onCaughtUp(): void;
  idle(): Promise<void>;
}

/**
 * Between two pieces written (256 KiB) or given back (1 MiB, an old snapshot removed): the disk is
 * the log's too, and a group commit that lands between two pieces does not queue behind a burst.
 * A snapshot of a million reports (62 MB) takes about a second longer to write.
 */
const PAUSE_MS = 2;

/** Idempotency keys encoded per turn (about 1 ms here): a million keys at once held the loop for a second. */
const KEYS_PER_TURN = 20_000;

/** The interval grows to this fraction of the model (reports and idempotency keys) in records. */
export const MODEL_SHARE = 4;

/**
 * What a snapshot of `model` writes, in entries: live reports, the deleted ids whose versions are
 * remembered, idempotency keys. Without the deleted ids, a store of millions of deletes and few
 * live reports was written out in full (tens of MB) every REPORTS_SNAPSHOT_EVERY writes.
 */
export function modelSize(model: Pick<ReadModel, 'reports' | 'keys'>): number {
  return model.reports.size + model.reports.deletedIds + model.keys.size;
}

/** Whether a snapshot is due after `sinceSnapshot` records, for a model holding `modelSize` reports and keys. */
export function snapshotDue(sinceSnapshot: number, every: number, modelSize: number): boolean {
  return every > 0 && sinceSnapshot >= Math.max(every, Math.floor(modelSize / MODEL_SHARE));
}

export interface AutoSnapshotOptions {
  readonly dir: string;
  readonly log: EventLog;
  readonly logger: Logger;
  readonly model: ReadModel;
  readonly every: number;
  /** How the encoding is sliced: idempotency keys per slice, and the wait between two (tests spread a small model's out). */
  readonly slices?: { readonly keys: number; readonly nextTurn: () => Promise<unknown> };
  /** The deletions folded whose keys are not confirmed destroyed yet, asked when the model is taken (snapshot-format.ts `unerased`). */
  readonly unerased?: () => readonly UnerasedDeletion[];
}

export function createAutoSnapshot({
  dir,
  log,
  logger,
  model,
  every,
  slices = { keys: KEYS_PER_TURN, nextTurn: () => setImmediate() },
  unerased = () => [],
}: AutoSnapshotOptions): AutoSnapshot {
  const { keys, nextTurn } = slices;
  let writing: Promise<void> | undefined;
  let caughtUp = false;
  let sinceSnapshot = 0;
  const write = () => {
    if (writing) return;
    sinceSnapshot = 0;
    writing = (async () => {
      // Taken with the model: the file log names its newest batch only (a later one moves it).
      const resume = hasResumableScan(log) ? log.resumePoint(model.cursor) : undefined;
      // The model as it is now (it changes with the next record), without holding the event loop
      // for the tens of ms a large one's keys take.
      // With the model: a deletion it folded is listed, or its key was destroyed before.
      const stillUnerased = unerased();
      if (stillUnerased.length > MAX_UNERASED) {
        // A snapshot that could not list them all would pass deletions whose keys are still held
        // and that the next start would fold no more. Without it, that start folds them again
        // from the last snapshot (which listed the ones before it) and erases them.
        logger.warn(
          { unerased: stillUnerased.length, listed: MAX_UNERASED },
          'skipped a snapshot: more deletions wait for their keys to be destroyed than a snapshot lists; the next start folds them again from the last snapshot',
        );
        return;
      }
      const snapshot = beginSnapshot(model);
      try {
        while (!snapshot.step(keys)) await nextTurn();
        const encoded = snapshot.finish();
        const anchors = await readAnchors(log, encoded.cursor);
        const path = await writeEncodedSnapshot(
          dir,
          {
            log: log.identity,
            createdAt: new Date().toISOString(),
            anchors,
            ...(resume === undefined ? {} : { resume }),
            unerased: stillUnerased,
          },
          encoded,
          { pauseMs: PAUSE_MS },
        );
        logger.info(
          { path, events: encoded.counts.records, reports: model.reports.size },
          'wrote a snapshot of the read model',
        );
      } finally {
        // Written or given up: writes to the model stop copying what the snapshot held.
        snapshot.release();
      }
    })()
      .catch((error: unknown) => {
        // Either way the log goes on taking writes: snapshots only shorten the next start.
        if (error instanceof SnapshotSpaceError)
          logger.warn(
            { snapshotBytes: error.snapshotBytes, freeBytes: error.freeBytes, reserveBytes: error.reserveBytes },
            'skipped a snapshot: it would leave the event log too little free space',
          );
        else logger.warn({ err: error }, 'could not write a snapshot');
      })
      .finally(() => {
        writing = undefined;
      });
  };
  const due = () => snapshotDue(sinceSnapshot, every, modelSize(model));
  return {
    onApplied(records) {
      sinceSnapshot += records;
      if (caughtUp && due()) write();
    },
    onCaughtUp() {
      caughtUp = true;
      if (due()) write();
    },
    idle: async () => {
      await writing;
    },
  };
}
