// The tables `make bench` prints: throughput at saturation (with ratios against the three peers and
// CPU per request), then latency at a fixed arrival rate below saturation.
import type { CoresUsed } from './cpu-time.js';
import type { LoadResult } from './load.js';
import type { LogStats } from './log-stats.js';
import { textTable } from './text-table.js';

export type TargetKind = 'service' | 'bare' | 'postgres' | 'emmett';

export interface Measured {
  readonly name: string;
  readonly kind: TargetKind;
  readonly load: LoadResult;
  readonly logStats: LogStats | undefined;
  readonly cores: CoresUsed;
  /** The same target at a fixed arrival rate. */
  /** At the fixed rate; absent when the target saturates below it (its queue would only grow). */
  readonly paced?: LoadResult;
  /** Services only: identical retries of created ids, answers that write nothing (200 from the read model). */
  readonly retries?: LoadResult;
  /** Services only: deletes of created ids, each once. */
  readonly deletes?: LoadResult;
}

export interface RunShape {
  readonly connections: number;
  readonly durationS: number;
  readonly warmupS: number;
  readonly ratePerS: number;
}

const fixed = (value: number | undefined, digits: number) =>
  value === undefined || Number.isNaN(value) ? '—' : value.toFixed(digits);

function ratio(result: Measured, baseline: Measured | undefined): string {
  if (result.kind !== 'service' || baseline === undefined) return '—';
  return fixed(result.load.requestsPerSecondMean / baseline.load.requestsPerSecondMean, 2);
}

interface Peers {
  readonly bare: Measured | undefined;
  readonly postgres: Measured | undefined;
  readonly emmett: Measured | undefined;
}

function saturationRow(result: Measured, { bare, postgres, emmett }: Peers): string[] {
  const { load, logStats, cores } = result;
  const perFlush =
    logStats === undefined || logStats.flushes === 0
      ? '—'
      : `${(logStats.appends / logStats.flushes).toFixed(1)} (${logStats.appends}/${logStats.flushes})`;
  const cpuPerRequestUs = cores.server === undefined ? undefined : (cores.server / load.requestsPerSecondMean) * 1e6;
  return [
    result.name,
    load.requestsPerSecondMean.toFixed(0),
    fixed(load.p50Ms, 2),
    fixed(load.p99Ms, 2),
    String(load.non2xx),
    String(load.errors),
    ratio(result, bare),
    ratio(result, postgres),
    ratio(result, emmett),
    perFlush,
    fixed(cores.server, 2),
    fixed(cpuPerRequestUs, 0),
    fixed(cores.loadgen, 2),
    fixed(cores.other, 2),
  ];
}

function pacedRow({ name, paced, load }: Measured, ratePerS: number): string[] {
  if (paced === undefined)
    return [
      name,
      String(ratePerS),
      `— (saturates at ${load.requestsPerSecondMean.toFixed(0)})`,
      '—',
      '—',
      '—',
      '—',
      '—',
    ];
  return [
    name,
    String(ratePerS),
    paced.requestsPerSecondMean.toFixed(0),
    fixed(paced.p50Ms, 2),
    fixed(paced.p99Ms, 2),
    fixed(paced.p999Ms, 2),
    String(paced.non2xx),
    String(paced.errors),
  ];
}

export function printReport(results: readonly Measured[], shape: RunShape): void {
  const peer = (kind: TargetKind) => results.find((result) => result.kind === kind);
  const peers: Peers = { bare: peer('bare'), postgres: peer('postgres'), emmett: peer('emmett') };
  console.log(
    `\nPOST /reports at saturation: ${shape.connections} connections, ${shape.durationS} s after a ${shape.warmupS} s warm-up, a new id in every request`,
  );
  const header = [
    'target',
    'req/s (mean)',
    'p50 ms',
    'p99 ms',
    'non-2xx',
    'errors',
    'vs bare',
    'vs Koa+PG',
    'vs Emmett',
    'appends per flush',
    'server cores',
    'server CPU µs/req',
    'loadgen cores',
    'other cores',
  ];
  console.log(textTable([header, ...results.map((result) => saturationRow(result, peers))]));
  console.log(
    '\nvs bare, vs Koa+PG, vs Emmett: req/s of the service ÷ req/s of the bare Koa handler, of the Koa + PostgreSQL',
  );
  console.log('handler, of the Emmett service (event store on PostgreSQL).');
  console.log(
    "appends per flush: log appends ÷ fsyncs of the file log (produce requests on Kafka), from the service's /metrics.",
  );
  console.log(
    "cores: CPU seconds ÷ wall seconds. server CPU µs/req: the server's CPU time per request (for Koa+PG and Emmett:",
  );
  console.log(
    'the Node process and all PostgreSQL processes), the steadiest figure when the machine is shared. other cores: everything',
  );
  console.log('else on the machine during the run (a local Kafka broker included); well above 0 means a busy machine.');
  console.log(
    `\nPOST /reports at a fixed arrival rate of ${shape.ratePerS} req/s (BENCH_RATE), ${shape.connections} connections, ${shape.durationS} s: tail latency below saturation`,
  );
  const pacedHeader = [
    'target',
    'offered req/s',
    'achieved req/s',
    'p50 ms',
    'p99 ms',
    'p99.9 ms',
    'non-2xx',
    'errors',
  ];
  console.log(textTable([pacedHeader, ...results.map((result) => pacedRow(result, shape.ratePerS))]));
  console.log(
    '\nAn open-loop generator: request i is due at start + i ÷ rate whatever the earlier ones did, and its latency runs',
  );
  console.log(
    'from that due time (up to ~1 ms of timer lag included). achieved: answers ÷ time to the last answer; below',
  );
  console.log('offered, the target could not keep up with that rate (it is at or past saturation there).');
  const services = results.filter((result) => result.retries !== undefined);
  if (services.length === 0) return;
  console.log(
    `\nPOST /reports repeating ids already created (identical retries: answers that write nothing), ${shape.connections} connections, ${shape.durationS} s`,
  );
  const retryHeader = ['target', 'req/s (mean)', 'p50 ms', 'p99 ms', 'non-2xx', 'vs creates'];
  console.log(textTable([retryHeader, ...services.map(retryRow)]));
  console.log(`\nDELETE /reports/{id} of the reports created above, each once, ${shape.connections} connections`);
  console.log(textTable([retryHeader, ...services.map((result) => retryRow({ ...result, retries: result.deletes }))]));
  console.log(
    "On Kafka each such answer first catches up with the head of the id's partition (one offsets request); the file",
  );
  console.log(
    'log has a single writer, so its read model is already fresh. vs creates: req/s ÷ req/s of new-id creates above.',
  );
}

function retryRow({ name, load, retries }: Measured): string[] {
  if (retries === undefined) return [name, '—', '—', '—', '—', '—'];
  return [
    name,
    retries.requestsPerSecondMean.toFixed(0),
    fixed(retries.p50Ms, 2),
    fixed(retries.p99Ms, 2),
    String(retries.non2xx),
    fixed(retries.requestsPerSecondMean / load.requestsPerSecondMean, 2),
  ];
}

/** Each service target against its baseline twin (named `<name> (baseline <commit>)`), measured just before it. */
/** One service target ÷ its baseline twin, measured one after the other. */
export interface BaselineRatio {
  readonly name: string;
  readonly creates: number | undefined;
  /** Baseline's CPU per create ÷ this one's: above 1 is cheaper. */
  readonly cpuPerCreate: number | undefined;
  readonly retries: number | undefined;
  readonly deletes: number | undefined;
  readonly p99AtFixedRate: number | undefined;
}

/** The ratio of each target of `results` that has a twin `<name> (baseline <baseline>)` in them. */
export function baselineRatios(results: readonly Measured[], baseline: string): BaselineRatio[] {
  const ratios: BaselineRatio[] = [];
  const per = (value: number | undefined, base: number | undefined) =>
    value === undefined || base === undefined ? undefined : value / base;
  const cpuPerCreate = ({ cores, load }: Measured) =>
    cores.server === undefined ? undefined : cores.server / load.requestsPerSecondMean;
  for (const result of results) {
    const twin = results.find((other) => other.name === `${result.name} (baseline ${baseline})`);
    if (twin === undefined) continue;
    ratios.push({
      name: result.name,
      creates: per(result.load.requestsPerSecondMean, twin.load.requestsPerSecondMean),
      cpuPerCreate: per(cpuPerCreate(twin), cpuPerCreate(result)),
      retries: per(result.retries?.requestsPerSecondMean, twin.retries?.requestsPerSecondMean),
      deletes: per(result.deletes?.requestsPerSecondMean, twin.deletes?.requestsPerSecondMean),
      p99AtFixedRate: per(result.paced?.p99Ms, twin.paced?.p99Ms),
    });
  }
  return ratios;
}

const RATIO_COLUMNS = [
  'creates req/s',
  'CPU per create (baseline ÷ this)',
  'identical retries req/s',
  'deletes req/s',
  'p99 at the fixed rate',
];
const ratioValues = (ratio: BaselineRatio) => [
  ratio.creates,
  ratio.cpuPerCreate,
  ratio.retries,
  ratio.deletes,
  ratio.p99AtFixedRate,
];

export function printBaselineRatios(results: readonly Measured[], baseline: string): void {
  const rows = baselineRatios(results, baseline).map((ratio) => [
    ratio.name,
    ...ratioValues(ratio).map((value) => fixed(value, 2)),
  ]);
  console.log(
    `\nThis checkout ÷ the baseline ${baseline} (BENCH_BASELINE), each pair measured one after the other in this run`,
  );
  console.log(textTable([['target', ...RATIO_COLUMNS], ...rows]));
  console.log('Above 1 is better for the first three columns; below 1 is better for the p99.');
}

/** The middle value of `values` (the mean of the two middle ones for an even count). */
function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/**
 * The ratios of every round (BENCH_ROUNDS): per target and column, the median over the rounds and
 * the lowest and highest, so a budget is judged on more than one pair of 10-second runs.
 */
export function printRoundRatios(rounds: readonly (readonly BaselineRatio[])[], baseline: string): void {
  const names = [...new Set(rounds.flatMap((round) => round.map(({ name }) => name)))];
  const rows = names.map((name) => {
    const ofTarget = rounds.flatMap((round) => round.filter((ratio) => ratio.name === name));
    return [
      name,
      ...RATIO_COLUMNS.map((_, column) => {
        const values = ofTarget
          .map((ratio) => ratioValues(ratio)[column])
          .filter((value): value is number => value !== undefined);
        if (values.length === 0) return '—';
        return `${median(values).toFixed(2)} (${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)})`;
      }),
    ];
  });
  console.log(
    `\nThis checkout ÷ the baseline ${baseline} over ${rounds.length} rounds (BENCH_ROUNDS; each round measures the baseline's twin, then this checkout): median (lowest–highest)`,
  );
  console.log(textTable([['target', ...RATIO_COLUMNS], ...rows]));
}
