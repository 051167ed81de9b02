// The fault table `make chaos` prints: per scenario, over its runs, what the checker counted.
import type { RunVerdict } from './check/verdict.js';

export interface ScenarioRow {
  readonly scenario: string;
  readonly verdicts: readonly RunVerdict[];
}

const seconds = (ms: number | undefined) => (ms === undefined ? '-' : (ms / 1000).toFixed(1));
const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);
const max = (values: readonly (number | undefined)[]) => {
  const known = values.filter((value): value is number => value !== undefined);
  return known.length === 0 ? undefined : Math.max(...known);
};

/** Problems the suite asserts are absent (besides the availability and readiness targets). */
export function safetyProblems(verdict: RunVerdict): number {
  return (
    verdict.lost.length +
    verdict.misanswered.length +
    verdict.reordered.length +
    verdict.twoBodies.length +
    verdict.stale.length +
    verdict.contradictions.length +
    verdict.unexplainedEvents +
    verdict.digests.problems.length
  );
}

function row({ scenario, verdicts }: ScenarioRow): string[] {
  const faults = verdicts.flatMap((verdict) => verdict.faults);
  const settled = faults.map((fault) => fault.settled);
  const settledTotal = sum(settled.map((s) => s.acknowledged + s.failed));
  return [
    scenario,
    String(verdicts.length),
    String(sum(verdicts.map((v) => v.requests))),
    String(sum(verdicts.map((v) => v.lost.length))),
    String(sum(verdicts.map((v) => v.contradictions.length))),
    String(sum(verdicts.map((v) => v.stale.length))),
    `${sum(verdicts.map((v) => v.landed.landedAfterAnswer))}/${sum(verdicts.map((v) => v.landed.unknown))} (max ${seconds(max(verdicts.map((v) => v.landed.maxLateMs)))} s)`,
    seconds(max(faults.map((f) => f.healthyGapMs))),
    seconds(max(faults.map((f) => f.stuckGapMs))),
    settledTotal === 0 ? '-' : `${Math.round((100 * sum(settled.map((s) => s.acknowledged))) / settledTotal)} %`,
    seconds(max(faults.map((f) => f.recoveryMs))),
    String(sum(verdicts.map((v) => v.readiness.reduce((n, p) => n + p.polls, 0)))),
    verdicts.every((v) => v.digests.problems.length === 0) ? 'yes' : 'NO',
    String(
      sum(verdicts.map((v) => v.misanswered.length + v.reordered.length + v.twoBodies.length + v.unexplainedEvents)),
    ),
  ];
}

const HEADER = [
  'scenario',
  'runs',
  'requests',
  'ack lost',
  'contradictions',
  'stale answers',
  '503s landed late',
  'gap healthy s',
  'gap stuck s',
  'ok from 8 s',
  'recovery s',
  'bad /readyz',
  'digests agree',
  'other',
];

/** A Markdown table (pastes into docs/kafka.md as it is). */
export function formatTable(rows: readonly ScenarioRow[]): string {
  const cells = [HEADER, ...rows.map(row)];
  const widths = HEADER.map((_, column) => Math.max(...cells.map((line) => (line[column] ?? '').length)));
  const line = (values: readonly string[]) =>
    `| ${values.map((value, column) => value.padEnd(widths[column] ?? 0)).join(' | ')} |`;
  return [
    line(HEADER),
    `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`,
    ...cells.slice(1).map(line),
  ].join('\n');
}

/** The details behind a run's counts, one line each. */
export function describeRun(verdict: RunVerdict, notes: readonly string[]): string[] {
  return [
    ...notes,
    ...verdict.lost.map((p) => `lost: ${p.detail}`),
    ...verdict.misanswered.map((p) => `misanswered: ${p.detail}`),
    ...verdict.reordered.map((p) => `reordered: ${p.detail}`),
    ...verdict.twoBodies.map((p) => `two bodies: ${p.detail}`),
    ...verdict.stale.map((p) => `stale answer: ${p.detail}`),
    ...verdict.contradictions.map((c) => `contradiction on ${c.id}: ${c.detail}`),
    ...verdict.digests.problems.map((p) => `digest: ${p}`),
    ...verdict.readiness.map(
      (p) =>
        `readiness: instance ${p.instance} ${p.kind} for ${seconds(p.toMs - p.fromMs)} s (${p.polls} polls)${p.reasons.length > 0 ? `: ${p.reasons.join('; ')}` : ''}`,
    ),
    ...verdict.faults.map(
      (f) =>
        `fault ${f.fault} [${f.targets.join(', ')}] ${seconds(f.durationMs)} s: gap healthy ${seconds(f.healthyGapMs)} s, stuck ${seconds(f.stuckGapMs)} s; ` +
        `from 8 s ${f.settled.acknowledged} ok / ${f.settled.failed} failed; recovery ${seconds(f.recoveryMs)} s; slowest stuck answer ${seconds(f.stuckSlowestAnswerMs)} s (${f.stuckUnanswered} unanswered)`,
    ),
    `writes: ${verdict.requests} requests, ${verdict.acknowledged} acknowledged; ${verdict.landed.unknown} unacknowledged, ${verdict.landed.landed} of them landed (${verdict.landed.applied} took effect, ${verdict.landed.landedAfterAnswer} after their answer, up to ${seconds(verdict.landed.maxLateMs)} s late)`,
  ];
}
