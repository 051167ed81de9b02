// The tables `make bench-start` prints: every figure for each id shape beside its target, with
// pass or miss, and when both shapes ran, the snowflake-sized ids' cost as a ratio to the small ids'.
import { textTable } from './text-table.js';

/** Ids from 1,000 and ids from 7×10^18: the same histories otherwise. */
export type IdShape = 'small' | 'snowflake';

export interface Figure {
  readonly name: string;
  /** Per id shape measured: the value and a note (the spread of runs). */
  readonly values: Partial<Record<IdShape, { readonly value: number; readonly note?: string }>>;
  readonly unit: string;
  /** For N = 1,000,000 and small ids (the figures of docs/performance.md); undefined: no target. */
  readonly target?: number;
  /** Replay speed: the figure must reach the target; everything else must stay under it. */
  readonly higherIsBetter?: boolean;
}

export interface StartUpRun {
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

function formatted(value: number, unit: string): string {
  const digits = unit === 's' ? 2 : unit === 'MB' ? 1 : 0;
  return `${value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })} ${unit}`;
}

function row({ name, values, unit, target, higherIsBetter = false }: Figure, shapes: readonly IdShape[]): string[] {
  const cells = [name];
  for (const shape of shapes) {
    const value = values[shape]?.value ?? Number.NaN;
    cells.push(formatted(value, unit));
    if (shape === 'small') cells.push(target === undefined ? '' : `${higherIsBetter ? '≥' : '≤'} ${formatted(target, unit)} ${(higherIsBetter ? value >= target : value <= target) ? 'pass' : 'MISS'}`);
  }
  const small = values.small?.value;
  const snowflake = values.snowflake?.value;
  if (small !== undefined && snowflake !== undefined) {
    // As a cost: time, bytes, or the inverse of a rate.
    const ratio = higherIsBetter ? small / snowflake : snowflake / small;
    cells.push(`${ratio.toFixed(2)}×`, ratio <= SHAPE_RATIO_TARGET ? 'pass' : 'MISS');
  }
  cells.push(shapes.map((shape) => values[shape]?.note ?? '').filter(Boolean).join(' | '));
  return cells;
}

export function startReport({ events, liveReports, shapes, logBytes, writeSeconds, runs, figures, notes }: StartUpRun): void {
  const both = shapes.length === 2;
  console.log(`\nStart-up on a history of N = ${events.toLocaleString('en-US')} ReportCreated events (${liveReports.toLocaleString('en-US')} live reports,`);
  console.log(`events.log ${(logBytes / 1e6).toFixed(0)} MB, written in ${writeSeconds.toFixed(1)} s) for each id shape: ${shapes.map((shape) => (shape === 'small' ? 'ids from 1,000' : 'ids from 7×10^18')).join(', ')}.`);
  console.log(`BENCH_EVENTS sets N, BENCH_IDS the shapes (small, snowflake, both). Targets are for N = 1,000,000; medians of ${runs} run(s), shapes alternating.`);
  const header = ['figure'];
  for (const shape of shapes) header.push(shape === 'small' ? 'small ids' : 'snowflake ids', ...(shape === 'small' ? ['target'] : []));
  if (both) header.push('snowflake ÷ small', `≤ ${SHAPE_RATIO_TARGET}×`);
  header.push('runs: fastest–slowest');
  console.log(textTable([header, ...figures.map((figure) => row(figure, shapes))]));
  for (const note of notes) console.log(note);
  console.log('\nreplay: events ÷ wall time of `reports replay` as a child process. ready: spawn to the first /readyz 200 (polled every');
  console.log('10 ms). RSS: VmRSS once ready. heap per report: (heapUsed + external after two full GCs − the same on an empty log) ÷ live reports.');
}
