// `reports restore SRC`: puts a backup taken by `reports backup` in place of REPORTS_DATA_DIR's log
// and snapshots; refuses while a server runs on it (see src/backup/restore-backup.ts).
import { loadConfig } from '../config.js';
import { restoreBackup } from '../backup/restore-backup.js';
import { formatCursor } from './positions.js';
import { checkDataDirUser } from '../start-checks.js';
import { toolLogger } from './tool-log.js';
import { UsageError, type CliIo, type CommandSpec, type ParsedCommand } from './usage.js';

export const restoreCommand = {
  name: 'restore',
  usage: 'reports restore SRC',
  description: [
    'Puts the backup SRC (taken by `reports backup`) in place of the log and snapshots of REPORTS_DATA_DIR,',
    'after checking it again against its manifest. Refuses while a server runs on the directory, a SRC inside it,',
    'and to run as another user than the directory\'s (the service\'s). The replaced',
    'log is kept beside it as events.log.before-restore-<time>; the token file stays. The server then starts',
    'from the backup, with the state digest it printed.',
  ].join('\n'),
  options: {},
  positionals: { min: 1, max: 1 },
} satisfies CommandSpec;

export async function runRestore(parsed: ParsedCommand, io: CliIo): Promise<number> {
  const config = loadConfig(io.env);
  if (config.kafka) throw new UsageError('on Kafka the topic is the backup: there is nothing to restore into a data directory', restoreCommand.usage);
  await checkDataDirUser(config.dataDir);
  const restored = await restoreBackup({ src: parsed.positionals[0] as string, dataDir: config.dataDir, io, logger: toolLogger(io, config) });
  io.stdout.write(
    [
      `restored:        ${parsed.positionals[0] as string} into ${config.dataDir}`,
      `position:        ${formatCursor(new Map([[0, restored.records]]), 'file')}`,
      `snapshot:        ${restored.snapshot ?? '(none: the server folds the whole log at start)'}`,
      `live reports:    ${restored.liveReports}`,
      `state digest:    ${restored.digest}`,
      ...(restored.previousLog === undefined ? [] : [`previous log:    ${restored.previousLog} (delete it once the restored service is checked)`]),
      '',
    ].join('\n'),
  );
  return 0;
}
