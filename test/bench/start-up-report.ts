// The table `make bench-start` prints: every figure beside its target, with pass or miss.
import { textTable } from './text-table.js';

export interface Figure {
  readonly name: string;
  readonly value: number;
  readonly unit: string;
  readonly target: number;
  /** Replay speed: the figure must reach the target; everything else must stay under it. */
  readonly higherIsBetter?: boolean;
  readonly note?: string;
}

export interface StartUpRun {
  readonly events: number;
  readonly liveReports: number;
  readonly logBytes: number;
  readonly writeSeconds: number;
  readonly figures: readonly Figure[];
}

function formatted(value: number, unit: string): string {
  const digits = unit === 's' ? 2 : unit === 'MB' ? 0 : 0;
  return `${value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })} ${unit}`;
}

export function startReport({ events, liveReports, logBytes, writeSeconds, figures }: StartUpRun): void {
  console.log(`\nStart-up on a history of N = ${events.toLocaleString('en-US')} ReportCreated events (${liveReports.toLocaleString('en-US')} live reports,`);
  console.log(`events.log ${(logBytes / 1e6).toFixed(0)} MB, written in ${writeSeconds.toFixed(1)} s); BENCH_EVENTS sets N. The targets are for N = 1,000,000.`);
  const rows = figures.map(({ name, value, unit, target, higherIsBetter = false, note }) => {
    const pass = higherIsBetter ? value >= target : value <= target;
    return [name, formatted(value, unit), `${higherIsBetter ? '≥' : '≤'} ${formatted(target, unit)}`, pass ? 'pass' : 'MISS', note ?? ''];
  });
  console.log(textTable([['figure', 'measured', 'target', '', 'note'], ...rows]));
  console.log('\nreplay: events ÷ wall time of `reports replay` as a child process. ready: spawn to the first /readyz 200 (polled every');
  console.log('10 ms). RSS: VmRSS once ready. heap per report: (heapUsed after two full GCs − the same on an empty log) ÷ live reports.');
}
