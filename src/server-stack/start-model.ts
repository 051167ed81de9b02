// The read model a start folds onto: the newest snapshot of this log's history, so that only the
// tail of the log is folded, or an empty model when there is none.
import type { Logger } from 'pino';
import type { EventLog } from '../log/event-log.js';
import { createReadModel, type ReadModel } from '../read-model/read-model.js';
import type { Snapshot } from '../snapshot/snapshot-format.js';
import { loadNewestSnapshot, type SnapshotFile } from '../snapshot/snapshot-store.js';

export interface StartModelSources {
  /** The snapshot directory. */
  readonly dir: string;
  readonly log: EventLog;
  readonly logger: Logger;
  /** The newest snapshot, read before the log was opened. */
  readonly newest: SnapshotFile | undefined;
}

export interface StartModel {
  readonly model: ReadModel;
  /** The snapshot the model was loaded from, if any. */
  readonly snapshot: Snapshot | undefined;
}

export async function loadStartModel({ dir, log, logger, newest }: StartModelSources): Promise<StartModel> {
  const snapshot = await loadNewestSnapshot({
    dir,
    log,
    head: await log.head(),
    logger,
    ...(newest ? { newest } : {}),
  });
  if (snapshot)
    logger.info(
      { events: snapshot.model.counts.records, reports: snapshot.model.reports.size, createdAt: snapshot.createdAt },
      'loaded a snapshot; folding only the tail of the log',
    );
  return { model: snapshot?.model ?? createReadModel(), snapshot };
}
