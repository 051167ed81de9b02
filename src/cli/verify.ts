// `reports verify`: checks the whole log — frames and CRCs on the file log; on both logs every
// record against the envelope schema, its key against the report it names, event ids unique, and
// the fold (a void event on the single-writer file log is a fault); then every live report's sealed
// content against the key store. Names the first problem and exits 1 on any.
import { loadConfig } from '../config.js';
import type { ReadModel } from '../read-model/read-model.js';
import { pause } from '../pause.js';
import { KEY_WRITE_GRACE_MS } from './event-keys.js';
import { checkContentKeys, reportsChangedSince, type ContentFindings } from './key-checks.js';
import { checkFrames, checkRecords, type Findings } from '../verify/log-checks.js';
import { toolRun } from './progress.js';
import { openToolLog, toolLogger, withToolKeys } from './tool-log.js';
import type { CliIo, CommandSpec, ParsedCommand } from './usage.js';

export const verifyCommand = {
  name: 'verify',
  usage: 'reports verify [--json]',
  description: [
    'Checks the whole event log: frames and CRCs (file log); on both logs, every record against the',
    'event schema, its key against its subject, unique event ids, and the fold rules (a void event is',
    'a fault on the single-writer file log, and counted on Kafka, where racing instances write them).',
    'Then every live report whose name and tag are sealed: its key is in the key store (keys.db, or the',
    'key topic) and opens them; each one that fails is named on stderr by report id and key id.',
    'Prints the first problem and exits 1 on any, 0 when the log is sound.',
  ].join('\n'),
  options: { json: { type: 'boolean' } },
} satisfies CommandSpec;

const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;
/** Reports named one by one on stderr; the rest are counted. */
const NAMED_PROBLEMS = 100;

export async function runVerify(parsed: ParsedCommand, io: CliIo): Promise<number> {
  const config = loadConfig(io.env);
  const logger = toolLogger(io, config);
  const findings: Findings = { records: 0, voidEvents: 0, problems: 0 };
  const content: ContentFindings = { sealedReports: 0, unopenedReports: 0, changedMeanwhile: 0 };
  const frameProblem = config.kafka ? undefined : await checkFrames(config.dataDir);
  if (frameProblem) {
    findings.problems += 1;
    findings.first = { position: frameProblem.position, reason: frameProblem.reason };
  }
  if (!frameProblem?.fatal) {
    const log = await openToolLog(config, logger);
    let named = 0;
    try {
      const model: ReadModel = await checkRecords(log, config.kafka === undefined, toolRun(io), findings, (line) =>
        io.stderr.write(`${line}\n`),
      );
      // Read after the log: every key its events need was durable before them (the grace: see KEY_WRITE_GRACE_MS).
      await pause(KEY_WRITE_GRACE_MS, io.signal);
      const problem = (id: string, reason: string) => {
        findings.problems += 1;
        findings.first ??= { position: `report ${id}`, reason };
        if ((named += 1) <= NAMED_PROBLEMS) io.stderr.write(`${reason}\n`);
      };
      Object.assign(
        content,
        await withToolKeys(config, logger, async (keys) => {
          const held = await keys.lookup();
          // Beside a running server a report deleted after the fold has its key destroyed, and was
          // named "lost" (every run failed under deletes): its delete is in the log by then, read now.
          const changed = await reportsChangedSince(log, model.cursor, io.signal);
          return checkContentKeys(model.reports.entries(), held, problem, changed);
        }),
      );
    } finally {
      await log.close();
    }
    if (named > NAMED_PROBLEMS)
      io.stderr.write(`… and ${named - NAMED_PROBLEMS} more live reports whose sealed content fails its check\n`);
  }
  if (parsed.values['json'] === true) {
    io.stdout.write(`${JSON.stringify({ ok: findings.problems === 0, ...findings, ...content })}\n`);
  } else if (frameProblem?.fatal) {
    // Nothing past the damage can be read, so no record was read at all: say that, not "in 0 records".
    io.stdout.write(
      `FAILED: the log cannot be read past ${frameProblem.position}: ${frameProblem.reason}; its records were not checked\n`,
    );
  } else if (findings.first) {
    io.stdout.write(
      `FAILED: ${count(findings.problems, 'problem')} in ${count(findings.records, 'record')}; first at ${findings.first.position}: ${findings.first.reason}\n`,
    );
  } else {
    io.stdout.write(
      `OK: ${findings.records} records, ${findings.voidEvents} void events${copiesNote(findings.copies)}, ${count(content.sealedReports, 'live sealed report')} opened with ${content.sealedReports === 1 ? 'its key' : 'their keys'}${content.changedMeanwhile === 0 ? '' : ` (and ${count(content.changedMeanwhile, 'report')} the server changed while this ran, not checked)`}\n`,
    );
  }
  return findings.problems === 0 ? 0 : 1;
}

/** Of the void events, the copies a Kafka producer's retry wrote (only when there are some). */
function copiesNote(copies: number | undefined): string {
  if (copies === undefined || copies === 0) return '';
  return ` (${copies === 1 ? '1 of them a copy' : `${copies} of them copies`} of an earlier record, written again by a retry of Kafka's producer)`;
}
