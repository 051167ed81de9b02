// `reports replay [--to POS]`: folds the history with projections/ and prints what it found,
// ending with the state digest (equal for equal histories, on either log).
import { loadConfig } from '../config.js';
import { createReadModel } from '../read-model/read-model.js';
import { defaultFoldThreads } from '../read-model/sharded-fold.js';
import { foldLog } from '../projector/fold-log.js';
import { digestAfterFold } from '../projector/digest-after-fold.js';
import { cursorFits, formatCursor, logKind, parseCursor } from '../log/positions.js';
import { startProgress } from './progress.js';
import { openToolLog, toolLogger, withToolKeys } from './tool-log.js';
import { stringOption, UsageError, type CliIo, type CommandSpec, type ParsedCommand } from './usage.js';

export const replayCommand = {
  name: 'replay',
  usage: 'reports replay [--to POS] [--json]',
  description: [
    'Folds the event log from the beginning (or up to POS, exclusive: N on the file log, P:O,P:O on Kafka)',
    'with the projections/ code, and prints events read, void events, live reports and the state digest',
    '(SHA-256 of the canonical read model). A progress bar shows on a terminal. --json prints one JSON object.',
  ].join('\n'),
  options: { to: { type: 'string' }, json: { type: 'boolean' } },
} satisfies CommandSpec;

export async function runReplay(parsed: ParsedCommand, io: CliIo): Promise<number> {
  const toText = stringOption(parsed, 'to');
  const to = toText === undefined ? undefined : parseCursor(toText);
  if (toText !== undefined && to === undefined)
    throw new UsageError(`--to must be N or P:O[,P:O...], got "${toText}"`, replayCommand.usage);
  const config = loadConfig(io.env);
  if (to !== undefined && !cursorFits(to, logKind(config)))
    throw new UsageError(`--to must be N on the file log (it has one partition), got "${toText}"`, replayCommand.usage);
  const log = await openToolLog(config, toolLogger(io, config));
  try {
    const head = await log.head();
    // A --to past the head stops at the head: said on stderr, so --json output stays one object.
    if (to !== undefined && [...to].some(([partition, offset]) => offset > (head.get(partition) ?? 0))) {
      io.stderr.write(
        `reports replay: --to ${toText} is past the head of the log (${formatCursor(head, logKind(config)) || 'an empty log'}): replayed up to the head\n`,
      );
    }
    let total = 0;
    for (const [partition, offset] of head) total += Math.min(offset, to?.get(partition) ?? offset);
    const progress = startProgress(io, 'replay', total);
    const started = performance.now();
    const model = createReadModel();
    const digest = await withToolKeys(config, toolLogger(io, config), (keys) =>
      digestAfterFold(
        keys,
        async () => {
          await foldLog(log, model, {
            ...(to ? { to } : {}),
            threads: defaultFoldThreads(),
            signal: io.signal,
            onProgress: ({ records }) => progress.update(records),
          });
          progress.stop();
        },
        model.reports,
        { early: to === undefined },
      ),
    );
    const summary = {
      events: model.counts.records,
      voidEvents: model.counts.voidEvents,
      invalidRecords: model.counts.invalid,
      liveReports: model.reports.size,
      digest,
      position: formatCursor(model.cursor, logKind(config)),
      seconds: (performance.now() - started) / 1000,
    };
    if (parsed.values['json'] === true) {
      io.stdout.write(`${JSON.stringify(summary)}\n`);
    } else {
      io.stdout.write(
        [
          `events read:     ${summary.events}`,
          `void events:     ${summary.voidEvents}`,
          `invalid records: ${summary.invalidRecords}`,
          `live reports:    ${summary.liveReports}`,
          `position:        ${summary.position || '(empty log)'}`,
          `state digest:    sha256:${summary.digest}`,
          '',
        ].join('\n'),
      );
    }
    return io.signal.aborted ? 130 : 0;
  } finally {
    await log.close();
  }
}
