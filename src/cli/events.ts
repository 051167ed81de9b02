// `reports events [--from POS] [--follow] [--type TYPE]`: the log as NDJSON, one CloudEvent a
// line with its position; with --follow it keeps streaming until interrupted. A sealed create
// prints opened with its key (what the client stored), or without its content, marked erased.
import { loadConfig } from '../config.js';
import { eventKeys } from './event-keys.js';
import { shownLine } from '../feed/shown-line.js';
import { cursorFits, describeMisfit, logKind, parseCursor, startMisfit } from '../log/positions.js';
import { openToolLog, toolLogger, withToolKeys } from './tool-log.js';
import { stringOption, UsageError, type CliIo, type CommandSpec, type ParsedCommand } from './usage.js';
import { followRecords, readRecords } from '../log/record-batches.js';

const TYPES = ['ReportCreated', 'ReportDeleted'] as const;

export const eventsCommand = {
  name: 'events',
  usage: 'reports events [--from POS] [--follow] [--type ReportCreated|ReportDeleted]',
  description: [
    'Prints the event log as NDJSON: {"position":"N" ("P:O" on Kafka),"time":...,"event":<CloudEvent>} a line.',
    'A sealed ReportCreated prints opened with its key: {...,"opened":"<key id>","event":...} whose data holds',
    'name and tag in place of "sealed". One whose key is not in the key store (the report was deleted, or the',
    'create was void) prints {...,"erased":true,"event":...} with data {id, sealed: {key}}: the content is gone;',
    'one whose key does not open it, {...,"unopenable":true,...} likewise (run `reports verify`).',
    'A record that is not a valid event prints as {"position":...,"invalid":"<reason>"} (left out by --type).',
    '--from POS starts at a position (N on the file log, P:O,P:O on Kafka); --follow keeps streaming',
    'new events until interrupted (Ctrl-C). On the file log, a --follow whose log `reports restore` or',
    '`reports seal-history` replaced prints the rest of the old one and exits 1: run it again.',
  ].join('\n'),
  options: { from: { type: 'string' }, follow: { type: 'boolean' }, type: { type: 'string' } },
} satisfies CommandSpec;

/** Writes and waits when the pipe is full, so a slow reader (e.g. `| less`) is not buffered in memory. */
function write(io: CliIo, text: string): Promise<void> | undefined {
  if (io.stdout.write(`${text}\n`)) return undefined;
  return new Promise((resolve) => io.stdout.once('drain', () => resolve()));
}

export async function runEvents(parsed: ParsedCommand, io: CliIo): Promise<number> {
  const fromText = stringOption(parsed, 'from');
  const from = fromText === undefined ? new Map<number, number>() : parseCursor(fromText);
  if (from === undefined)
    throw new UsageError(`--from must be N or P:O[,P:O...], got "${fromText}"`, eventsCommand.usage);
  const type = stringOption(parsed, 'type');
  if (type !== undefined && !TYPES.some((known) => known === type))
    throw new UsageError(`--type must be ${TYPES.join(' or ')}, got "${type}"`, eventsCommand.usage);
  const config = loadConfig(io.env);
  if (!cursorFits(from, logKind(config)))
    throw new UsageError(
      `--from must be N on the file log (it has one partition), got "${fromText}"`,
      eventsCommand.usage,
    );
  const logger = toolLogger(io, config);
  const log = await openToolLog(config, logger);
  try {
    // Past the end, --follow would skip every event written up to it (positions.ts, startMisfit).
    const misfit = from.size === 0 ? undefined : startMisfit(from, await log.head());
    if (misfit !== undefined)
      throw new UsageError(`--from ${describeMisfit(misfit, logKind(config))}`, eventsCommand.usage);
    return await withToolKeys(config, logger, async (toolKeys) => {
      const keys = await eventKeys(log, toolKeys, io.signal);
      const records =
        parsed.values['follow'] === true
          ? followRecords(log, from, { signal: io.signal })
          : readRecords(log, from, { signal: io.signal });
      for await (const record of records) {
        const { text, type: recordType } = await shownLine(record, logKind(config), (position, id) =>
          keys.keyFor(position, id),
        );
        if (type !== undefined && recordType !== type) continue;
        await write(io, text);
      }
      return 0;
    });
  } finally {
    await log.close();
  }
}
