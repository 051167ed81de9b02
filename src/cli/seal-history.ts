// `reports seal-history`: rewrites a stopped embedded log so that no create holds a name or a tag
// in the clear (src/history/seal-history.ts); what makes a store written before erasure forget the
// content of the reports deleted from it.
import { loadConfig } from '../config.js';
import { sealHistory } from '../history/seal-history.js';
import { toolLogger } from './tool-log.js';
import { UsageError, type CliIo, type CommandSpec, type ParsedCommand } from './usage.js';
import { toolRun } from './progress.js';

export const sealHistoryCommand = {
  name: 'seal-history',
  usage: 'reports seal-history',
  description: [
    "Rewrites the embedded log of REPORTS_DATA_DIR (the server stopped: it takes the directory's lock) so that",
    "every create written in the clear, by a version before erasure, is sealed: a live report's under a new key",
    "in keys.db, a deleted report's or a void create's under a key destroyed at once, so its content can no longer",
    'be read from the log. Record for record (positions unchanged); the new log is checked to fold to the same',
    'state digest, then put in place of the old one in one rename, and the snapshots are removed. Killed at any',
    'moment, it leaves a usable store; run it again. Backups taken before it still hold the content: see',
    'docs/erasure.md.',
  ].join('\n'),
  options: {},
} satisfies CommandSpec;

export async function runSealHistory(_parsed: ParsedCommand, io: CliIo): Promise<number> {
  const config = loadConfig(io.env);
  if (config.kafka)
    throw new UsageError(
      'seal-history rewrites the embedded log; on Kafka the key topic and the event topic are another matter (docs/erasure.md)',
      sealHistoryCommand.usage,
    );
  const started = performance.now();
  const result = await sealHistory({ dataDir: config.dataDir, run: toolRun(io), logger: toolLogger(io, config) });
  const seconds = (performance.now() - started) / 1000;
  const { sealed } = result;
  io.stdout.write(
    [
      sealed === undefined
        ? 'sealed:          nothing: every create in the log is sealed already'
        : `sealed:          ${sealed.live + sealed.deleted + sealed.void} creates written in the clear: ${sealed.live} of live reports (under new keys), ${sealed.deleted} of deleted reports and ${sealed.void} void (under keys destroyed at once)`,
      `events:          ${result.records}${sealed === undefined ? '' : ' (positions unchanged)'}`,
      ...(sealed === undefined
        ? []
        : [`snapshots:       ${result.snapshotsRemoved} removed (the server writes new ones)`]),
      `state digest:    ${result.digest}${sealed === undefined ? '' : ' (before and after)'}`,
      ...(result.keptLogs.length === 0
        ? []
        : [
            `kept logs:       ${result.keptLogs.join(', ')}: kept by earlier restores and not rewritten; they may hold content in the clear: delete them`,
          ]),
      `took:            ${seconds.toFixed(1)} s (${Math.round(result.records / Math.max(seconds, 0.001))} events/s)`,
      '',
    ].join('\n'),
  );
  return 0;
}
