// `reports backup DEST`: an online backup of the embedded log, beside the running server (see
// src/backup/take-backup.ts). On Kafka the topic itself is the backup (docs/operations.md: Backups).
import { loadConfig } from '../config.js';
import { takeBackup } from '../backup/take-backup.js';
import { formatCursor } from '../log/positions.js';
import { toolLogger } from './tool-log.js';
import { UsageError, type CliIo, type CommandSpec, type ParsedCommand } from './usage.js';
import { toolRun } from './progress.js';

export const backupCommand = {
  name: 'backup',
  usage: 'reports backup DEST',
  description: [
    'Copies the embedded log (REPORTS_DATA_DIR) up to its last whole, durable batch, and the newest snapshot',
    'usable for that copy, into the new directory DEST, while the server keeps running and writing. The copy is',
    'fsynced and checked as `reports verify` checks a log (frames, CRCs, every event, the fold; the snapshot',
    'must fold to the same state); then it prints its position and state digest. An interrupted backup leaves',
    'no DEST. DEST may not lie inside REPORTS_DATA_DIR. `reports restore DEST` puts it back. On Kafka the topic',
    'is the backup: see docs/operations.md.',
  ].join('\n'),
  options: {},
  positionals: { min: 1, max: 1 },
} satisfies CommandSpec;

export async function runBackup(parsed: ParsedCommand, io: CliIo): Promise<number> {
  const config = loadConfig(io.env);
  if (config.kafka)
    throw new UsageError(
      'on Kafka the topic is the backup (replicated by the brokers); `reports migrate --to-topic NAME` copies it',
      backupCommand.usage,
    );
  const backup = await takeBackup({
    dataDir: config.dataDir,
    dest: parsed.positionals[0] as string,
    run: toolRun(io),
    logger: toolLogger(io, config),
  });
  io.stdout.write(
    [
      `backup:          ${backup.dir}`,
      `position:        ${formatCursor(new Map([[0, backup.records]]), 'file')} (${backup.bytes} bytes, ending on a whole, durable batch)`,
      `snapshot:        ${backup.snapshot ?? '(none usable: a restore folds the whole log)'}`,
      `live reports:    ${backup.liveReports}`,
      ...(backup.deletedWhileTaken.length === 0
        ? []
        : [
            `deleted meanwhile: ${backup.deletedWhileTaken.length} of them (their keys are not in the backup; a restore deletes them again): ${backup.deletedWhileTaken.slice(0, 50).join(', ')}${backup.deletedWhileTaken.length > 50 ? ', …' : ''}`,
          ]),
      `state digest:    ${backup.digest}`,
      '',
    ].join('\n'),
  );
  return 0;
}
