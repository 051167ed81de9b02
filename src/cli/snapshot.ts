// `reports snapshot`: writes a checksummed snapshot of the read model with its position, starting
// from the newest valid snapshot and folding only the tail. The server loads it at its next start.
import { loadConfig } from '../config.js';
import { createReadModel } from '../read-model/read-model.js';
import { foldLog, stateDigest } from '../projector/fold-log.js';
import { cursorTotal } from '../log/event-log.js';
import { defaultFoldThreads } from '../read-model/sharded-fold.js';
import { readAnchors } from '../snapshot/snapshot-anchor.js';
import { loadNewestSnapshot, snapshotDir, writeSnapshot } from '../snapshot/snapshot-store.js';
import { MAX_UNERASED } from '../snapshot/snapshot-format.js';
import { formatCursor, logKind } from '../log/positions.js';
import { startProgress } from './progress.js';
import { openToolLog, toolLogger, withToolKeys } from './tool-log.js';
import { UnerasedList } from './unerased-list.js';
import type { CliIo, CommandSpec, ParsedCommand } from './usage.js';
import { hasResumableScan } from '../log/capabilities.js';
import { checkDataDirUser } from '../start-checks.js';

export const snapshotCommand = {
  name: 'snapshot',
  usage: 'reports snapshot',
  description: [
    'Writes a snapshot of the read model (reports and idempotency keys) with its log position to',
    'REPORTS_DATA_DIR/snapshots/, checksummed. Starts from the newest valid snapshot and folds the rest',
    'of the log. The server loads the newest valid snapshot at start and folds only the tail after it.',
    "Safe to run beside a running server. Runs only as the user the data directory belongs to (the service's).",
  ].join('\n'),
  options: {},
} satisfies CommandSpec;

export async function runSnapshot(_parsed: ParsedCommand, io: CliIo): Promise<number> {
  const config = loadConfig(io.env);
  await checkDataDirUser(config.dataDir);
  const logger = toolLogger(io, config);
  const log = await openToolLog(config, logger);
  try {
    const dir = snapshotDir(config.dataDir);
    const head = await log.head();
    const previous = await loadNewestSnapshot({ dir, log, head, logger });
    const model = previous?.model ?? createReadModel();
    const previousRecords = model.counts.records;
    const written = await withToolKeys(config, logger, async (keys) => {
      // On Kafka, the deletions folded whose keys the key topic still holds (a writer that crashed
      // before destroying them): listed in the snapshot, since a start from it does not fold them
      // again. keys.db needs no list: the start sweeps every key no live report uses.
      const unerased = config.kafka === undefined ? undefined : new UnerasedList(await keys.lookup(), previous);
      const progress = startProgress(io, 'snapshot', cursorTotal(head));
      await foldLog(log, model, {
        to: head,
        threads: defaultFoldThreads(),
        signal: io.signal,
        onProgress: ({ records }) => progress.update(records),
        ...(unerased === undefined ? {} : { onEnded: unerased.onEnded }),
      });
      progress.stop();
      if (io.signal.aborted) return undefined;
      const lookup = await keys.lookup();
      return { digest: stateDigest(model.reports, lookup), unerased: unerased?.stillHeld(lookup) };
    });
    if (written === undefined) return 130;
    const { digest, unerased } = written;
    // One that could not list them all would pass deletions whose keys the next start never destroys.
    if (unerased !== undefined && unerased.length > MAX_UNERASED)
      throw new Error(
        `not writing a snapshot: the key topic still holds the keys of ${unerased.length} deleted reports, more than a snapshot lists (${MAX_UNERASED}); a server started from the last snapshot folds those deletes again and destroys their keys: take the snapshot once reports_erasures_pending is 0`,
      );
    const anchors = await readAnchors(log, model.cursor);
    const resume = hasResumableScan(log) ? log.resumePoint(model.cursor) : undefined;
    const path = await writeSnapshot(dir, {
      log: log.identity,
      createdAt: new Date().toISOString(),
      anchors,
      ...(resume === undefined ? {} : { resume }),
      ...(unerased === undefined ? {} : { unerased }),
      model,
    });
    io.stdout.write(
      [
        `snapshot:        ${path}`,
        `position:        ${formatCursor(model.cursor, logKind(config)) || '(empty log)'}`,
        `events folded:   ${model.counts.records}${previous ? ` (${model.counts.records - previousRecords} after the previous snapshot)` : ''}`,
        `live reports:    ${model.reports.size}`,
        ...(unerased !== undefined && unerased.length > 0
          ? [
              `keys to destroy: ${unerased.length} (deleted reports' keys still in the key topic; the next start destroys them)`,
            ]
          : []),
        `state digest:    sha256:${digest}`,
        '',
      ].join('\n'),
    );
    return 0;
  } finally {
    await log.close();
  }
}
