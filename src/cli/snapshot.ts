// `reports snapshot`: writes a checksummed snapshot of the read model with its position, starting
// from the newest valid snapshot and folding only the tail. The server loads it at its next start.
import { loadConfig } from '../config.js';
import { createReadModel } from '../read-model/read-model.js';
import { foldLog, stateDigest } from '../projector/fold-log.js';
import { cursorTotal } from '../log/event-log.js';
import { defaultFoldThreads } from '../read-model/sharded-fold.js';
import { readAnchors } from '../snapshot/snapshot-anchor.js';
import { loadNewestSnapshot, snapshotDir, writeSnapshot } from '../snapshot/snapshot-store.js';
import { formatCursor, logKind } from '../log/positions.js';
import { startProgress } from './progress.js';
import { openToolLog, toolLogger, withToolKeys } from './tool-log.js';
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
    const progress = startProgress(io, 'snapshot', cursorTotal(head));
    await foldLog(log, model, {
      to: head,
      threads: defaultFoldThreads(),
      signal: io.signal,
      onProgress: ({ records }) => progress.update(records),
    });
    progress.stop();
    if (io.signal.aborted) return 130;
    const anchors = await readAnchors(log, model.cursor);
    const resume = hasResumableScan(log) ? log.resumePoint(model.cursor) : undefined;
    const digest = await withToolKeys(config, logger, async (keys) => stateDigest(model.reports, await keys.lookup()));
    const path = await writeSnapshot(dir, {
      log: log.identity,
      createdAt: new Date().toISOString(),
      anchors,
      ...(resume === undefined ? {} : { resume }),
      model,
    });
    io.stdout.write(
      [
        `snapshot:        ${path}`,
        `position:        ${formatCursor(model.cursor, logKind(config)) || '(empty log)'}`,
        `events folded:   ${model.counts.records}${previous ? ` (${model.counts.records - previousRecords} after the previous snapshot)` : ''}`,
        `live reports:    ${model.reports.size}`,
        `state digest:    sha256:${digest}`,
        '',
      ].join('\n'),
    );
    return 0;
  } finally {
    await log.close();
  }
}
