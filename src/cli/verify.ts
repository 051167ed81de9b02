// `reports verify`: checks the whole log — frames and CRCs on the file log; on both logs every
// record against the envelope schema, its key against the report it names, event ids unique, and
// the fold (a void event on the single-writer file log is a fault). Names the first bad position
// and exits 1 on any problem.
import { loadConfig } from '../config.js';
import { checkFrames, checkRecords, type Findings } from './log-checks.js';
import { openToolLog, toolLogger } from './tool-log.js';
import type { CliIo, CommandSpec, ParsedCommand } from './usage.js';

export const verifyCommand = {
  name: 'verify',
  usage: 'reports verify [--json]',
  description: [
    'Checks the whole event log: frames and CRCs (file log); on both logs, every record against the',
    'event schema, its key against its subject, unique event ids, and the fold rules (a void event is',
    'a fault on the single-writer file log, and counted on Kafka, where racing instances write them).',
    'Prints the first bad position and exits 1 on any problem, 0 when the log is sound.',
  ].join('\n'),
  options: { json: { type: 'boolean' } },
} satisfies CommandSpec;

export async function runVerify(parsed: ParsedCommand, io: CliIo): Promise<number> {
  const config = loadConfig(io.env);
  const findings: Findings = { records: 0, voidEvents: 0, problems: 0 };
  const frameProblem = config.kafka ? undefined : await checkFrames(config.dataDir);
  if (frameProblem) {
    findings.problems += 1;
    findings.first = { position: frameProblem.position, reason: frameProblem.reason };
  }
  if (!frameProblem?.fatal) {
    const log = await openToolLog(config, toolLogger(io, config));
    try {
      await checkRecords(log, config.kafka === undefined, io, findings);
    } finally {
      await log.close();
    }
  }
  if (parsed.values['json'] === true) {
    io.stdout.write(`${JSON.stringify({ ok: findings.problems === 0, ...findings })}\n`);
  } else if (findings.first) {
    io.stdout.write(`FAILED: ${findings.problems} problem(s) in ${findings.records} records; first at ${findings.first.position}: ${findings.first.reason}\n`);
  } else {
    io.stdout.write(`OK: ${findings.records} records, ${findings.voidEvents} void events\n`);
  }
  return findings.problems === 0 ? 0 : 1;
}
