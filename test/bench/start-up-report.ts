// The tables `make bench-start` prints: every figure for each id shape beside its target, with
// pass or miss, and when both shapes ran, the snowflake-sized ids' cost as a ratio to the small ids';
// with BENCH_BASELINE, every figure of the baseline build and of this checkout on the same reports,
// this checkout ÷ the baseline, and the budgets the change was given. Each headed by the command.
import { textTable } from './text-table.js';

/** Ids from 1,000 and ids from 7×10^18: the same histories otherwise. */
export type IdShape = 'small' | 'snowflake';
/** With BENCH_BASELINE: the baseline build on the history in the clear, this checkout on the same history sealed. */
export type Build = 'baseline' | 'checkout';
/** What one column of the table measured. */
export type Subject = IdShape | Build;

/** What this checkout may cost against the baseline: a bound on this ÷ baseline, or on the bytes it adds (per report). */
export type Budget = { readonly ratio: number } | { readonly bytesMore: number };

export interface Figure {
  readonly name: string;
  /** Per id shape (or build) measured: the value and a note (the spread of runs). */
  readonly values: Partial<Record<Subject, { readonly value: number; readonly note?: string }>>;
  readonly unit: string;
  /** For N = 1,000,000 and small ids (the figures of docs/performance.md); undefined: no target. */
  readonly target?: number;
  /** Replay speed: the figure must reach the target; everything else must stay under it. */
  readonly higherIsBetter?: boolean;
  /** With BENCH_BASELINE: what the issue allows this checkout against the baseline (none: reported only). */
  readonly budget?: Budget;
}

export interface StartUpRun {
  /** The command that printed it (benchCommand), and the machine's load around the run. */
  readonly command: string;
  readonly load: string;
  readonly events: number;
  readonly liveReports: number;
  readonly shapes: readonly IdShape[];
  readonly logBytes: number;
  readonly writeSeconds: number;
  readonly runs: number;
  readonly figures: readonly Figure[];
  /** Lines printed after the table (what the per-report versions and deleted ids cost). */
  readonly notes: readonly string[];
}

/** A snowflake figure may cost this much more than the small-id one (issue 18). */
export const SHAPE_RATIO_TARGET = 1.15;

/** What every table means by its figures. */
const LEGEND = [
  '',
  'replay: events ÷ wall time of `reports replay` as a child process. ready: spawn to the first /readyz 200 (polled every',
  '10 ms). RSS: VmRSS once ready. heap per report: (heapUsed + external after two full GCs − the same on an empty log) ÷ live reports.',
];

function formatted(value: number, unit: string): string {
  const digits = unit === 's' || unit === '×' ? 2 : unit === 'MB' ? 1 : 0;
  return `${value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })} ${unit}`;
}

function row({ name, values, unit, target, higherIsBetter = false }: Figure, shapes: readonly IdShape[]): string[] {
  const cells = [name];
  for (const shape of shapes) {
    const value = values[shape]?.value ?? Number.NaN;
    cells.push(formatted(value, unit));
    if (shape === 'small')
      cells.push(
        target === undefined
          ? ''
          : `${higherIsBetter ? '≥' : '≤'} ${formatted(target, unit)} ${(higherIsBetter ? value >= target : value <= target) ? 'pass' : 'MISS'}`,
      );
  }
  const small = values.small?.value;
  const snowflake = values.snowflake?.value;
  if (small !== undefined && snowflake !== undefined) {
    // As a cost: time, bytes, or the inverse of a rate.
    const ratio = higherIsBetter ? small / snowflake : snowflake / small;
    cells.push(`${ratio.toFixed(2)}×`, ratio <= SHAPE_RATIO_TARGET ? 'pass' : 'MISS');
  }
  cells.push(
    shapes
      .map((shape) => values[shape]?.note ?? '')
      .filter(Boolean)
      .join(' | '),
  );
  return cells;
}

/** The lines of the shape comparison (without BENCH_BASELINE). */
export function startReportLines({
  command,
  load,
  events,
  liveReports,
  shapes,
  logBytes,
  writeSeconds,
  runs,
  figures,
  notes,
}: StartUpRun): string[] {
  const lines: string[] = [];
  const both = shapes.length === 2;
  lines.push('', `$ ${command}`, load);
  lines.push(
    `Start-up on a history of N = ${events.toLocaleString('en-US')} ReportCreated events (${liveReports.toLocaleString('en-US')} live reports,`,
  );
  lines.push(
    `events.log ${(logBytes / 1e6).toFixed(0)} MB, written in ${writeSeconds.toFixed(1)} s) for each id shape: ${shapes.map((shape) => (shape === 'small' ? 'ids from 1,000' : 'ids from 7×10^18')).join(', ')}.`,
  );
  lines.push(
    `BENCH_EVENTS sets N, BENCH_IDS the shapes (small, snowflake, both). Targets are for N = 1,000,000; medians of ${runs} run(s), shapes alternating.`,
  );
  const header = ['figure'];
  for (const shape of shapes)
    header.push(shape === 'small' ? 'small ids' : 'snowflake ids', ...(shape === 'small' ? ['target'] : []));
  if (both) header.push('snowflake ÷ small', `≤ ${SHAPE_RATIO_TARGET}×`);
  header.push('runs: fastest–slowest');
  lines.push(textTable([header, ...figures.map((figure) => row(figure, shapes))]), ...notes, ...LEGEND);
  return lines;
}

export function startReport(run: StartUpRun): void {
  console.log(startReportLines(run).join('\n'));
}

/** The settings `make bench-start` reads, in the order the header names them. */
const SETTINGS = [
  'BENCH_BASELINE',
  'BENCH_BASELINE_HISTORY',
  'BENCH_EVENTS',
  'BENCH_RUNS',
  'BENCH_IDS',
  'BENCH_TAIL_S',
  'BENCH_CPU_PROF',
] as const;

/** The command line that ran the bench, as far as the environment tells: its BENCH_ settings, then make's, npm's or node's invocation. */
export function benchCommand(env: NodeJS.ProcessEnv): string {
  const quoted = (value: string) => (/^[\w./:@=+,-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`);
  const settings = SETTINGS.flatMap((name) => (env[name] === undefined ? [] : [`${name}=${quoted(env[name])}`]));
  const invocation =
    env['MAKELEVEL'] !== undefined
      ? 'make bench-start'
      : env['npm_lifecycle_event'] !== undefined
        ? `npm run ${env['npm_lifecycle_event']}`
        : 'node dist/test/bench/start-up.js';
  return [...settings, invocation].join(' ');
}

/** The machine's load averages before and after the measurements: on a shared machine, what the figures were taken beside. */
export function loadLine(before: readonly number[], after: readonly number[], cores: number): string {
  const averages = (values: readonly number[]) => values.map((value) => value.toFixed(2)).join(' / ');
  return `load average (1 / 5 / 15 min): ${averages(before)} before the measurements, ${averages(after)} after; ${cores} cores.`;
}

export interface BaselineRun {
  readonly command: string;
  readonly load: string;
  /** The baseline's commit (abbreviated) and how BENCH_BASELINE named it. */
  readonly baseline: { readonly name: string; readonly revision: string };
  /** The id shape both histories use. */
  readonly shape: IdShape;
  /** Whether the baseline read the history sealed too (BENCH_BASELINE_HISTORY=sealed), not in the clear. */
  readonly baselineSealed?: boolean;
  readonly events: number;
  readonly liveReports: number;
  /** events.log of each history; keys.db beside this checkout's. */
  readonly logBytes: Readonly<Record<Build, number>>;
  readonly keysBytes: number;
  readonly writeSeconds: Readonly<Record<Build, number>>;
  readonly runs: number;
  readonly figures: readonly Figure[];
  readonly notes: readonly string[];
}

/** A budget as the table states it, and whether this checkout kept it. */
function budgetCell(budget: Budget | undefined, ratio: number, more: number, higherIsBetter: boolean): string {
  if (budget === undefined) return '';
  if ('ratio' in budget)
    return `${higherIsBetter ? '≥' : '≤'} ${budget.ratio.toFixed(2)}× ${(higherIsBetter ? ratio >= budget.ratio : ratio <= budget.ratio) ? 'pass' : 'MISS'}`;
  return `≤ +${budget.bytesMore} bytes ${more <= budget.bytesMore ? 'pass' : 'MISS'}`;
}

/** One row of the baseline table: both values, this ÷ baseline, the difference of a memory figure (bytes), the budget. */
export function baselineRow({ name, values, unit, higherIsBetter = false, budget }: Figure): string[] {
  const base = values.baseline?.value ?? Number.NaN;
  const ours = values.checkout?.value ?? Number.NaN;
  const ratio = ours / base;
  const more = ours - base;
  const difference = unit === 'bytes' ? `${more >= 0 ? '+' : '−'}${Math.abs(more).toFixed(1)} bytes` : '';
  const notes = [values.baseline?.note, values.checkout?.note].filter(Boolean).join(' | ');
  return [
    name,
    formatted(base, unit),
    formatted(ours, unit),
    `${ratio.toFixed(2)}×`,
    difference,
    budgetCell(budget, ratio, more, higherIsBetter),
    notes,
  ];
}

/** The lines of a BENCH_BASELINE run: this checkout (sealed history) against the baseline build (the same history in the clear). */
export function baselineReportLines({
  command,
  load,
  baseline,
  shape,
  baselineSealed = false,
  events,
  liveReports,
  logBytes,
  keysBytes,
  writeSeconds,
  runs,
  figures,
  notes,
}: BaselineRun): string[] {
  const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
  const header = [
    'figure',
    `baseline ${baseline.name}`,
    'this checkout',
    'this ÷ baseline',
    'this − baseline',
    'budget',
    'runs: fastest–slowest (baseline | this)',
  ];
  return [
    '',
    `$ ${command}`,
    load,
    `Start-up of this checkout against the baseline ${baseline.name} (BENCH_BASELINE=${baseline.revision}) on N = ${events.toLocaleString('en-US')} ReportCreated events`,
    `(${liveReports.toLocaleString('en-US')} live reports, ${shape === 'small' ? 'ids from 1,000' : 'ids from 7×10^18'}; BENCH_IDS picks the shape): the same reports and ids, written ${baselineSealed ? 'sealed' : 'in the clear'} for the`,
    `baseline (events.log ${mb(logBytes.baseline)}, written in ${writeSeconds.baseline.toFixed(1)} s${baselineSealed ? ', BENCH_BASELINE_HISTORY=sealed' : ''}) and sealed for this checkout (events.log ${mb(logBytes.checkout)}, keys.db ${mb(keysBytes)},`,
    `written in ${writeSeconds.checkout.toFixed(1)} s). Medians of ${runs} run(s), the two builds taking turns run by run.`,
    textTable([header, ...figures.map(baselineRow)]),
    ...notes,
    ...LEGEND,
    'this ÷ baseline: of the values as printed (events/s: above 1 is faster; s, MB, bytes: above 1 costs more). this − baseline: per report.',
    "budget: what the change may cost against the baseline (the issue's); figures without one are reported only.",
  ];
}

export function baselineReport(run: BaselineRun): void {
  console.log(baselineReportLines(run).join('\n'));
}
