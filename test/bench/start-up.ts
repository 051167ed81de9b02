// `make bench-start`: how start-up time and memory grow with the history, and whether snowflake-
// sized ids cost more than small ones. Writes deterministic histories of BENCH_EVENTS ReportCreated
// events (1,000,000 unless set) with the project's own writer into a temporary directory, one per
// id shape of BENCH_IDS (both unless set: ids from 1,000 and ids from 7×10^18, nothing else
// different), then measures through public entry points in child processes (start-up-probe.ts):
// - `reports replay` (the CLI): events ÷ the command's wall time, Node's start included, as a user sees it;
// - server start (spawn) to the first `/readyz` 200, without a snapshot and from one written by
//   `reports snapshot` (REPORTS_SNAPSHOT_EVERY=0, so the server writes none itself meanwhile), the
//   latter also as a ratio to reading the snapshot file once (what a start from it cannot beat);
// - RSS once ready, from /proc/<pid>/status (VmRSS);
// - heap per report after GC: the server runs with --expose-gc and gc-probe.js preloaded, which on
//   SIGUSR2 collects twice and reports process.memoryUsage(). The figure is (heapUsed + external
//   of the server on this history − the same of the server on an empty log) ÷ live reports: the
//   real read model with everything the server keeps per report (idempotency state included, and
//   the report table's byte chunks, which live in ArrayBuffers outside the JS heap), nothing else.
//   `external` rather than `arrayBuffers`: buffers built by the threads of a sharded fold and moved
//   to the main thread count in the main thread's `external`, not in its `arrayBuffers`.
// - what a remembered deleted id costs (deleted-ids.ts);
// - the tail under the large history (history-tail.ts; BENCH_TAIL_S seconds, 0 for none);
// - beside each time, the CPU seconds of the process (every thread), which the machine's other loads
//   move far less than wall time: on a shared machine, the ratio of CPU times is the steadier one.
// Each timed figure is the median of BENCH_RUNS runs (3 unless set), shown with the fastest and
// slowest run; the shapes take turns run by run (the machine's noise falls on both), and the
// ratios of one run are what to compare. A benchmark: it asserts nothing.
// BENCH_BASELINE=<commit>: a change's cost instead of the shapes'. The service as it was at that
// commit is built beside the checkout (baseline-build.ts) and measured on a history of the same
// reports and ids (one shape, BENCH_IDS, small unless set) written in the clear, as versions before
// erasure wrote it, while this checkout is measured on that history sealed (each create's name and
// tag under a key of its own in keys.db, as its server writes them); the two builds take turns run
// by run, and every figure is printed for both with this ÷ baseline (and the bytes more per report
// for memory) against the issue's budgets. What a deleted id costs and the tail are left out then.
// BENCH_BASELINE_HISTORY=sealed: the baseline reads the history sealed too (a baseline after erasure
// can), and every figure's budget is "at least as good as the baseline" (a change that should cost
// nothing, such as the id table's).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { KEYS_FILE } from '../../src/keys/key-file.js';
import { decodeSnapshot } from '../../src/snapshot/snapshot-format.js';
import { buildBaseline } from './baseline-build.js';
import { measureDeletedIds } from './deleted-ids.js';
import { historyEvents, writeHistory, type HistoryShape } from './history.js';
import { measureTail, tailLines } from './history-tail.js';
import { createStartUpProbe, type StartUpProbe, type Started } from './start-up-probe.js';
import {
  baselineReport,
  benchCommand,
  loadLine,
  startReport,
  type Build,
  type Figure,
  type IdShape,
  type Subject,
} from './start-up-report.js';

const FIRST_ID: Record<IdShape, bigint> = { small: 1000n, snowflake: 7_000_000_000_000_000_000n };

function positiveSetting(name: string, fallback: number): number {
  const raw = process.env[name]?.trim();
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
}

/** Both shapes unless set; with a baseline, one (small unless set): the comparison is of builds, not of ids. */
function shapesSetting(withBaseline: boolean): IdShape[] {
  const raw = process.env['BENCH_IDS']?.trim() || (withBaseline ? 'small' : 'both');
  if (raw === 'both' && withBaseline)
    throw new Error('BENCH_BASELINE compares the builds on one id shape: set BENCH_IDS to small or snowflake');
  if (raw === 'both') return ['small', 'snowflake'];
  if (raw === 'small' || raw === 'snowflake') return [raw];
  throw new Error(`BENCH_IDS must be small, snowflake or both, got "${raw}"`);
}

function progress(line: string): void {
  process.stderr.write(`bench-start: ${line}\n`);
}

const command = benchCommand(process.env);
const baselineRevision = process.env['BENCH_BASELINE']?.trim() || undefined;
const events = positiveSetting('BENCH_EVENTS', 1_000_000);
const runs = positiveSetting('BENCH_RUNS', 3);
const shapes = shapesSetting(baselineRevision !== undefined);
/** Seconds of the tail run under the large history (0: none). */
const tailSeconds = Number(process.env['BENCH_TAIL_S'] ?? 60);
const baseline = baselineRevision === undefined ? undefined : buildBaseline(baselineRevision, progress);
const baselineSealed = baselineSetting();

/** BENCH_BASELINE_HISTORY: whether the baseline reads the history sealed (as this checkout) or in the clear (the default). */
function baselineSetting(): boolean {
  const raw = process.env['BENCH_BASELINE_HISTORY']?.trim() || 'plain';
  if (raw !== 'plain' && raw !== 'sealed')
    throw new Error(`BENCH_BASELINE_HISTORY must be plain or sealed, got "${raw}"`);
  return raw === 'sealed';
}
const token = randomBytes(24).toString('base64url');
const root = mkdtempSync(join(tmpdir(), 'report-store-bench-start-'));
const probe = createStartUpProbe({ root, token, events });
const baselineProbe = baseline === undefined ? undefined : createStartUpProbe({ root, token, events, build: baseline });
process.on('exit', () => {
  probe.killNow();
  baselineProbe?.killNow();
  rmSync(root, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));

/** One column of the tables: a history, and the build that reads it. */
interface Column {
  readonly subject: Subject;
  /** The shape of its ids. */
  readonly ids: IdShape;
  readonly dataDir: string;
  readonly history: HistoryShape;
  readonly probe: StartUpProbe;
}

const shape = shapes[0] as IdShape;
const columns: readonly Column[] =
  baselineProbe === undefined
    ? shapes.map((each) => ({
        subject: each,
        ids: each,
        dataDir: join(root, each),
        history: { firstId: FIRST_ID[each], reports: events },
        probe,
      }))
    : [
        // The same reports and ids: in the clear for a baseline that cannot read sealed ones (unless
        // BENCH_BASELINE_HISTORY=sealed); sealed for this checkout.
        {
          subject: 'baseline',
          ids: shape,
          dataDir: join(root, 'baseline'),
          history: { firstId: FIRST_ID[shape], reports: events, plain: !baselineSealed },
          probe: baselineProbe,
        },
        {
          subject: 'checkout',
          ids: shape,
          dataDir: join(root, 'checkout'),
          history: { firstId: FIRST_ID[shape], reports: events },
          probe,
        },
      ];
const [firstColumn] = columns as [Column, ...Column[]];

/** Each column measured `runs` times, the columns taking turns (first one, then the other first). */
async function alternating<Run>(measure: (column: Column) => Promise<Run>): Promise<Map<Subject, Run[]>> {
  const done = new Map<Subject, Run[]>(columns.map((column) => [column.subject, []]));
  for (let run = 0; run < runs; run += 1) {
    for (const column of run % 2 === 0 ? columns : [...columns].reverse())
      done.get(column.subject)?.push(await measure(column));
  }
  return done;
}

/** The run with the median time, and the fastest and slowest times. */
function median<Run>(done: readonly Run[], seconds: (run: Run) => number): { median: Run; range: string } {
  const sorted = [...done].sort((a, b) => seconds(a) - seconds(b));
  const range =
    sorted.length > 1
      ? `${seconds(sorted[0] as Run).toFixed(2)}–${seconds(sorted[sorted.length - 1] as Run).toFixed(2)} s`
      : '';
  return { median: sorted[Math.floor((sorted.length - 1) / 2)] as Run, range };
}

function snapshotFiles(column: Column): string[] {
  const dir = join(column.dataDir, 'snapshots');
  return readdirSync(dir)
    .filter((name) => name.endsWith('.snap'))
    .map((name) => join(dir, name));
}

/** Seconds to read the column's snapshot file into memory once. */
function readSnapshotSeconds(column: Column): number {
  const started = performance.now();
  for (const path of snapshotFiles(column)) readFileSync(path);
  return (performance.now() - started) / 1000;
}

function snapshotBytes(column: Column): number {
  return snapshotFiles(column).reduce((sum, path) => sum + statSync(path).size, 0);
}

/** What the versions cost, from the report table of a snapshot: a u32 in each slot of the id table. */
function versionsNote(column: Column): string {
  const [path] = snapshotFiles(column);
  const decoded = path === undefined ? undefined : decodeSnapshot(readFileSync(path));
  if (!decoded?.ok) return 'versions: no snapshot to read the id table from';
  const { reports } = decoded.snapshot.model;
  const { slots, segments } = reports.indexShape;
  return [
    `versions (${column.ids} ids): the id table holds ${slots.toLocaleString('en-US')} slots of 16 bytes in ${segments.toLocaleString('en-US')} segments for ${reports.size.toLocaleString('en-US')} ids, ${(reports.indexBytes / reports.size).toFixed(1)} bytes`,
    `  per report, of which the versions (4 bytes a slot) are ${((4 * slots) / reports.size).toFixed(1)}.`,
  ].join('\n');
}

/** One row: `pick` of each column's median run (with the range of times when `timed`). */
function figure<Run>(
  name: string,
  unit: string,
  bySubject: Map<Subject, { median: Run; range: string }>,
  pick: (run: Run, subject: Subject) => number,
  extra: Omit<Figure, 'name' | 'unit' | 'values'> & { timed?: boolean } = {},
): Figure {
  const { timed = false, ...rest } = extra;
  const values: Figure['values'] = Object.fromEntries(
    [...bySubject].map(([subject, { median: run, range }]) => [
      subject,
      { value: pick(run, subject), ...(timed ? { note: range } : {}) },
    ]),
  );
  return { name, unit, values, ...rest };
}

async function main(): Promise<void> {
  const loadBefore = loadavg();
  const load = () => loadLine(loadBefore, loadavg(), availableParallelism());
  const writeSeconds = new Map<Subject, number>();
  for (const column of columns) {
    progress(
      `writing ${events} events with ${column.ids} ids${baselineProbe === undefined ? '' : ` for ${column.subject}, ${column.history.plain === true ? 'in the clear' : 'sealed'}`}`,
    );
    const started = performance.now();
    await writeHistory(
      column.dataDir,
      column.history,
      (written) => written % 200_000 === 0 && progress(`  ${written}`),
    );
    // Today's writer opens keys.db beside any log it opens; a log in the clear is what the baseline wrote, without one.
    if (column.history.plain === true) rmSync(join(column.dataDir, KEYS_FILE), { force: true });
    writeSeconds.set(column.subject, (performance.now() - started) / 1000);
  }
  const logBytes = (column: Column) => statSync(join(column.dataDir, 'events.log')).size;
  // The heap of each build's server on an empty log: what its memory per report is measured from.
  const empty = new Map<Subject, Started>();
  for (const column of columns) {
    const same = columns.find((other) => other.probe === column.probe && empty.has(other.subject));
    progress(`server on an empty log (the heap baseline)${baselineProbe === undefined ? '' : ` of ${column.subject}`}`);
    empty.set(
      column.subject,
      same === undefined
        ? await column.probe.startAndProbe(join(root, `empty-${column.subject}`))
        : (empty.get(same.subject) as Started),
    );
  }
  progress(`reports replay (${runs} runs a column)`);
  const replays = await alternating((column) => column.probe.runCli(['replay', '--json'], column.dataDir));
  progress(`server start without a snapshot (${runs} runs a column)`);
  const colds = await alternating((column) => column.probe.startAndProbe(column.dataDir));
  progress('reports snapshot');
  const snapshots = await alternating((column) => column.probe.runCli(['snapshot'], column.dataDir));
  progress(`server start from the snapshot (${runs} runs a column)`);
  const warms = await alternating((column) => column.probe.startAndProbe(column.dataDir));
  const medians = <Run>(done: Map<Subject, Run[]>, seconds: (run: Run) => number) =>
    new Map([...done].map(([subject, list]) => [subject, median(list, seconds)]));
  const replay = medians(replays, (run) => run.seconds);
  const live = (subject: Subject) =>
    Number((JSON.parse(replay.get(subject)?.median.stdout ?? '{}') as { liveReports?: unknown }).liveReports ?? events);
  const liveReports = live(firstColumn.subject);
  const differing = columns.find((column) => live(column.subject) !== liveReports);
  if (differing !== undefined)
    throw new Error(
      `${differing.subject} folded ${live(differing.subject)} live reports, ${firstColumn.subject} ${liveReports}: not the same reports`,
    );
  const cold = medians(colds, (run) => run.readySeconds);
  const warm = medians(warms, (run) => run.readySeconds);
  // What a start from a snapshot is held to: reading the file once (into memory, from the page cache as the server finds it).
  const fileReads = await alternating((column) => Promise.resolve(readSnapshotSeconds(column)));
  const fileRead = medians(fileReads, (seconds) => seconds);
  const heapPerReport = (started: Started, subject: Subject) =>
    (started.heapUsed - (empty.get(subject)?.heapUsed ?? Number.NaN)) / liveReports;
  // Targets: for N = 1,000,000 small ids (the shape table). Budgets: what erasure was allowed to cost against the commit before it (the baseline table).
  const figures: Figure[] = [
    figure('reports replay, events/s', 'events/s', replay, (run) => events / run.seconds, {
      target: 500_000,
      higherIsBetter: true,
      timed: true,
      budget: { ratio: 0.85 },
    }),
    figure(
      '  its fold alone (no Node start)',
      'events/s',
      replay,
      (run) => events / Number((JSON.parse(run.stdout) as { seconds?: unknown }).seconds),
      { higherIsBetter: true },
    ),
    figure('  its CPU time (every thread)', 's', replay, (run) => run.cpuSeconds),
    figure('start to /readyz 200, no snapshot', 's', cold, (run) => run.readySeconds, { target: 2, timed: true }),
    figure('  its CPU time (every thread)', 's', cold, (run) => run.cpuSeconds),
    figure('start to /readyz 200, from a snapshot', 's', warm, (run) => run.readySeconds, {
      target: 0.5,
      timed: true,
      budget: { ratio: 1.15 },
    }),
    figure('  its CPU time (every thread)', 's', warm, (run) => run.cpuSeconds),
    figure('  reading the snapshot file once', 's', fileRead, (seconds) => seconds, { timed: true }),
    figure(
      '  start from a snapshot ÷ reading its file',
      '×',
      warm,
      (run, subject) => run.readySeconds / (fileRead.get(subject)?.median ?? Number.NaN),
    ),
    figure('RSS after start, no snapshot', 'MB', cold, (run) => run.rss / 1e6, { target: 400 }),
    figure('RSS after start, from a snapshot', 'MB', warm, (run) => run.rss / 1e6, { target: 400 }),
    figure('heap per report after GC, no snapshot', 'bytes', cold, heapPerReport, {
      target: 120,
      budget: { bytesMore: 40 },
    }),
    figure('heap per report after GC, from a snapshot', 'bytes', warm, heapPerReport, {
      target: 120,
      budget: { bytesMore: 40 },
    }),
    figure(
      'reports snapshot',
      's',
      medians(snapshots, (run) => run.seconds),
      (run) => run.seconds,
      { timed: true },
    ),
    {
      name: 'snapshot file',
      unit: 'MB',
      values: Object.fromEntries(columns.map((column) => [column.subject, { value: snapshotBytes(column) / 1e6 }])),
    },
  ];
  const emptyServer = (subject: Subject) =>
    `${((empty.get(subject)?.heapUsed ?? Number.NaN) / 1e6).toFixed(1)} MB of heap and external memory after GC, ready in ${(empty.get(subject)?.readySeconds ?? Number.NaN).toFixed(2)} s`;
  if (baseline !== undefined) {
    const [base, ours] = columns as [Column, Column];
    const byBuild = <T>(of: (column: Column) => T): Record<Build, T> => ({ baseline: of(base), checkout: of(ours) });
    // A change that should cost nothing: every figure at least as good as the baseline's.
    const asGood = (each: Figure): Figure => ({
      ...each,
      budget: each.unit === 'bytes' ? { bytesMore: 0 } : { ratio: 1 },
    });
    baselineReport({
      baselineSealed,
      command,
      load: load(),
      baseline: { name: baseline.name, revision: baselineRevision ?? baseline.name },
      shape,
      events,
      liveReports,
      logBytes: byBuild(logBytes),
      keysBytes: statSync(join(ours.dataDir, KEYS_FILE)).size,
      writeSeconds: byBuild((column) => writeSeconds.get(column.subject) ?? Number.NaN),
      runs,
      figures: baselineSealed ? figures.map(asGood) : figures,
      notes: [
        `empty server (one run each): baseline ${emptyServer('baseline')}; this checkout ${emptyServer('checkout')}.`,
        'Not measured with BENCH_BASELINE: what a deleted id costs, and the tail under the large history (run without it for those).',
      ],
    });
    return;
  }
  progress('deleted ids: two more histories (small ids)');
  const notes = [
    `empty server: ${emptyServer(firstColumn.subject)}.`,
    versionsNote(firstColumn),
    ...(await measureDeletedIds({ root, events, probe, progress })),
  ];
  if (tailSeconds > 0) {
    const cpuProfileDir = process.env['BENCH_CPU_PROF']?.trim() || undefined;
    const tail = await measureTail({
      dataDir: join(root, 'tail'),
      firstId: FIRST_ID[shape],
      token,
      durationS: tailSeconds,
      events,
      progress,
      ...(cpuProfileDir === undefined ? {} : { cpuProfileDir }),
    });
    notes.push(...tailLines(tail, tailSeconds));
  }
  const meanWriteSeconds = [...writeSeconds.values()].reduce((sum, seconds) => sum + seconds, 0) / columns.length;
  startReport({
    command,
    load: load(),
    events: historyEvents({ firstId: 0n, reports: events }),
    liveReports,
    shapes,
    logBytes: logBytes(firstColumn),
    writeSeconds: meanWriteSeconds,
    runs,
    figures,
    notes,
  });
}

await main();
