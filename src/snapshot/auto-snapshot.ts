// The server's own snapshots: every N applied records the read model is encoded at once (the
// maps change with the next record), its anchors read from the log, and written in the background;
// one write at a time.
import type { Logger } from 'pino';
import type { EventLog } from '../log/event-log.js';
import type { Projector } from '../projector.js';
import { readAnchors } from './snapshot-anchor.js';
import { detachSnapshot } from './snapshot-format.js';
import { writeSnapshot } from './snapshot-store.js';

export function createAutoSnapshot({ dir, log, logger }: { dir: string; log: EventLog; logger: Logger }): { onSnapshotDue: (projector: Projector) => void; idle: () => Promise<void> } {
  let writing: Promise<void> | undefined;
  return {
    onSnapshotDue(projector) {
      if (writing) return;
      const view = detachSnapshot(projector.snapshotView());
      writing = readAnchors(log, view.cursor).then((anchors) => writeSnapshot(dir, { ...view, anchors })).then(
        (path) => logger.info({ path, events: view.events, reports: view.reports.size }, 'wrote a snapshot of the read model'),
        (error: unknown) => logger.warn({ err: error }, 'could not write a snapshot'),
      ).finally(() => {
        writing = undefined;
      });
    },
    idle: async () => {
      await writing;
    },
  };
}
