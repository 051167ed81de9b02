// The server's own snapshots: every N applied records the read model is encoded at once (the
// maps change with the next record) and written in the background; one write at a time.
import type { Logger } from 'pino';
import type { Projector } from '../projector.js';
import { encodeSnapshot } from './snapshot-format.js';
import { writeSnapshot } from './snapshot-store.js';

export function createAutoSnapshot({ dir, logger }: { dir: string; logger: Logger }): { onSnapshotDue: (projector: Projector) => void; idle: () => Promise<void> } {
  let writing: Promise<void> | undefined;
  return {
    onSnapshotDue(projector) {
      if (writing) return;
      const view = projector.snapshotView();
      const encoded = encodeSnapshot(view);
      writing = writeSnapshot(dir, view, encoded).then(
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
