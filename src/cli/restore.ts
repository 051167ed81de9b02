// `reports restore SRC`: puts a backup taken by `reports backup` in place of REPORTS_DATA_DIR's log,
// keys and snapshots, applying again every deletion made since it was taken; refuses while a server
// runs on it (see src/backup/restore-backup.ts).
import { loadConfig } from '../config.js';
import { restoreBackup, type Restored } from '../backup/restore-backup.js';
import { formatCursor } from '../log/positions.js';
import { checkDataDirUser } from '../start-checks.js';
import { toolLogger } from './tool-log.js';
import { UsageError, type CliIo, type CommandSpec, type ParsedCommand } from './usage.js';
import { toolRun } from './progress.js';

export const restoreCommand = {
  name: 'restore',
  usage: 'reports restore SRC',
  description: [
    'Puts the backup SRC (taken by `reports backup`) in place of the log, keys and snapshots of REPORTS_DATA_DIR,',
    'after checking it again against its manifest. Refuses while a server runs on the directory, a SRC inside it,',
    "and to run as another user than the directory's (the service's). A restore never brings a deleted report",
    "back: every deletion made since the backup was taken (recorded in the directory's keys.db) is applied again,",
    'and every create written in the clear is sealed. The replaced log is kept beside it as',
    'events.log.before-restore-<time> when it holds nothing in the clear; the token file stays.',
  ].join('\n'),
  options: {},
  positionals: { min: 1, max: 1 },
} satisfies CommandSpec;

/** Ids shown of the reports deleted again; the count is always whole. */
const SHOWN_IDS = 50;

/** "none", and on what it rests: a directory with neither keys.db nor a log of this history knows of no deletion. */
function noneDeleted({ keys, log }: Restored['deletionsFrom']): string {
  if (!keys && !log)
    return "none known (this data directory held no keys.db and no log of the backup's history: reports deleted since the backup was taken, elsewhere, are not deleted again)";
  return 'none (no report of the backup was deleted since it was taken)';
}

export async function runRestore(parsed: ParsedCommand, io: CliIo): Promise<number> {
  const config = loadConfig(io.env);
  if (config.kafka)
    throw new UsageError(
      'on Kafka the topic is the backup: there is nothing to restore into a data directory',
      restoreCommand.usage,
    );
  await checkDataDirUser(config.dataDir);
  const src = parsed.positionals[0] as string;
  const restored = await restoreBackup({
    src,
    dataDir: config.dataDir,
    eventSource: config.eventSource,
    run: toolRun(io),
    logger: toolLogger(io, config),
  });
  const { manifest, deletedAgain, sealed } = restored;
  const sealedCount = sealed.live + sealed.deleted + sealed.void;
  io.stdout.write(
    [
      `restored:        ${src} into ${config.dataDir}`,
      `position:        ${formatCursor(new Map([[0, restored.records]]), 'file')}${deletedAgain.length > 0 ? ` (the backup's ${manifest.records} records, then ${deletedAgain.length} deletes)` : ''}`,
      `snapshot:        ${restored.snapshot ?? '(none: the server folds the whole log at start)'}`,
      `live reports:    ${restored.liveReports}`,
      `deleted again:   ${deletedAgain.length === 0 ? noneDeleted(restored.deletionsFrom) : `${deletedAgain.length} report${deletedAgain.length === 1 ? '' : 's'} deleted since the backup was taken: ${idList(deletedAgain)}`}`,
      ...(sealedCount === 0 ? [] : [`sealed:          ${sealedCount} creates written in the clear (before erasure)`]),
      `state digest:    ${restored.digest}${restored.digest === manifest.digest ? '' : ` (the backup printed ${manifest.digest}${deletedAgain.length > 0 ? ', before the deletes' : ''})`}`,
      ...previousLogLines(restored),
      '',
    ].join('\n'),
  );
  return 0;
}

function idList(ids: readonly string[]): string {
  return `${ids.slice(0, SHOWN_IDS).join(', ')}${ids.length > SHOWN_IDS ? ', …' : ''}`;
}

function previousLogLines({ previousLog }: Restored): string[] {
  if (previousLog === undefined) return [];
  if ('kept' in previousLog)
    return [`previous log:    ${previousLog.kept} (delete it once the restored service is checked)`];
  return [`previous log:    not kept: ${previousLog.notKept}`];
}
