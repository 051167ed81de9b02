// `make bench-start`: how start-up time and memory grow with the history, and whether snowflake-
// sized ids cost more than small ones. Writes deterministic histories of BENCH_EVENTS ReportCreated
// events (1,000,000 unless set) with the project's own writer into a temporary directory, one per
// id shape of BENCH_IDS (both unless set: ids from 1,000 and ids from 7×10^18, nothing else
// different), then measures through public entry points in child processes (start-up-probe.ts):
// - `reports replay` (the CLI): events ÷ the command's wall time, Node's start included, as a user sees it;
// - server start (spawn) to the first `/readyz` 200, without a snapshot and from one written by
//   `reports snapshot` (REPORTS_SNAPSHOT_EVERY=0, so the server writes none itself meanwhile);
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
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeSnapshot } from '../../src/snapshot/snapshot-format.js';
import { measureDeletedIds } from './deleted-ids.js';
import { historyEvents, writeHistory } from './history.js';
import { measureTail, tailLines } from './history-tail.js';
import { createStartUpProbe, type Started } from './start-up-probe.js';
import { startReport, type Figure, type IdShape } from './start-up-report.js';

const FIRST_ID: Record<IdShape, bigint> = { small: 1000n, snowflake: 7_000_000_000_000_000_000n };

function positiveSetting(name: string, fallback: number): number {
  const raw = process.env[name]?.trim();
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
}

function shapesSetting(): IdShape[] {
  const raw = process.env['BENCH_IDS']?.trim() || 'both';
  if (raw === 'both') return ['small', 'snowflake'];
  if (raw === 'small' || raw === 'snowflake') return [raw];
  throw new Error(`BENCH_IDS must be small, snowflake or both, got "${raw}"`);
}

const events = positiveSetting('BENCH_EVENTS', 1_000_000);
const runs = positiveSetting('BENCH_RUNS', 3);
const shapes = shapesSetting();
/** Seconds of the tail run under the large history (0: none). */
const tailSeconds = Number(process.env['BENCH_TAIL_S'] ?? 60);
const token = randomBytes(24).toString('base64url');
const root = mkdtempSync(join(tmpdir(), 'report-store-bench-start-'));
const probe = createStartUpProbe({ root, token, events });
process.on('exit', () => {
  probe.killNow();
  rmSync(root, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));

function progress(line: string): void {
  process.stderr.write(`bench-start: ${line}\n`);
}

const dataDir = (shape: IdShape) => join(root, shape);

/** Each shape measured `runs` times, the shapes taking turns (first one, then the other first). */
async function alternating<Run>(measure: (shape: IdShape) => Promise<Run>): Promise<Map<IdShape, Run[]>> {
  const done = new Map<IdShape, Run[]>(shapes.map((shape) => [shape, []]));
  for (let run = 0; run < runs; run += 1) {
    for (const shape of run % 2 === 0 ? shapes : [...shapes].reverse()) done.get(shape)?.push(await measure(shape));
  }
  return done;
}

/** The run with the median time, and the fastest and slowest times. */
function median<Run>(done: readonly Run[], seconds: (run: Run) => number): { median: Run; range: string } {
  const sorted = [...done].sort((a, b) => seconds(a) - seconds(b));
  const range = sorted.length > 1 ? `${seconds(sorted[0] as Run).toFixed(2)}–${seconds(sorted[sorted.length - 1] as Run).toFixed(2)} s` : '';
  return { median: sorted[Math.floor((sorted.length - 1) / 2)] as Run, range };
}

function snapshotFiles(shape: IdShape): string[] {
  const dir = join(dataDir(shape), 'snapshots');
  return readdirSync(dir).filter((name) => name.endsWith('.snap')).map((name) => join(dir, name));
}

function snapshotBytes(shape: IdShape): number {
  return snapshotFiles(shape).reduce((sum, path) => sum + statSync(path).size, 0);
}

/** What the versions cost, from the report table of a snapshot: a u32 in each slot of the id index. */
function versionsNote(shape: IdShape): string {
  const [path] = snapshotFiles(shape);
  const decoded = path === undefined ? undefined : decodeSnapshot(readFileSync(path));
  if (!decoded?.ok) return 'versions: no snapshot to read the id index from';
  const { reports } = decoded.snapshot.model;
  const slots = reports.indexBytes / 16;
  return [
    `versions (${shape} ids): the id index holds ${slots.toLocaleString('en-US')} slots of 16 bytes for ${reports.size.toLocaleString('en-US')} ids, ${(reports.indexBytes / reports.size).toFixed(1)} bytes`,
    `  per report, of which the versions (4 bytes a slot) are ${((4 * slots) / reports.size).toFixed(1)}.`,
  ].join('\n');
}

/** One row: `pick` of each shape's median run (with the range of times when `timed`). */
function figure<Run>(name: string, unit: string, byShape: Map<IdShape, { median: Run; range: string }>, pick: (run: Run) => number, extra: Omit<Figure, 'name' | 'unit' | 'values'> & { timed?: boolean } = {}): Figure {
  const { timed = false, ...rest } = extra;
  const values: Figure['values'] = Object.fromEntries([...byShape].map(([shape, { median: run, range }]) => [shape, { value: pick(run), ...(timed ? { note: range } : {}) }]));
  return { name, unit, values, ...rest };
}

async function main(): Promise<void> {
  const writeStarted = performance.now();
  for (const shape of shapes) {
    progress(`writing ${events} events with ${shape} ids`);
    await writeHistory(dataDir(shape), { firstId: FIRST_ID[shape], reports: events }, (written) => written % 200_000 === 0 && progress(`  ${written}`));
  }
  const writeSeconds = (performance.now() - writeStarted) / 1000 / shapes.length;
  const logBytes = statSync(join(dataDir(shapes[0] as IdShape), 'events.log')).size;
  progress('server on an empty log (the heap baseline)');
  const empty = await probe.startAndProbe(join(root, 'empty'));
  progress(`reports replay (${runs} runs a shape)`);
  const replays = await alternating((shape) => probe.runCli(['replay', '--json'], dataDir(shape)));
  progress(`server start without a snapshot (${runs} runs a shape)`);
  const colds = await alternating((shape) => probe.startAndProbe(dataDir(shape)));
  progress('reports snapshot');
  const snapshots = await alternating((shape) => probe.runCli(['snapshot'], dataDir(shape)));
  progress(`server start from the snapshot (${runs} runs a shape)`);
  const warms = await alternating((shape) => probe.startAndProbe(dataDir(shape)));
  const medians = <Run>(done: Map<IdShape, Run[]>, seconds: (run: Run) => number) => new Map([...done].map(([shape, list]) => [shape, median(list, seconds)]));
  const replay = medians(replays, (run) => run.seconds);
  const liveReports = Number((JSON.parse(replay.get(shapes[0] as IdShape)?.median.stdout ?? '{}') as { liveReports?: unknown }).liveReports ?? events);
  const cold = medians(colds, (run) => run.readySeconds);
  const warm = medians(warms, (run) => run.readySeconds);
  const heapPerReport = (started: Started) => (started.heapUsed - empty.heapUsed) / liveReports;
  const figures: Figure[] = [
    figure('reports replay, events/s', 'events/s', replay, (run) => events / run.seconds, { target: 500_000, higherIsBetter: true, timed: true }),
    figure('  its fold alone (no Node start)', 'events/s', replay, (run) => events / Number((JSON.parse(run.stdout) as { seconds?: unknown }).seconds), { higherIsBetter: true }),
    figure('  its CPU time (every thread)', 's', replay, (run) => run.cpuSeconds),
    figure('start to /readyz 200, no snapshot', 's', cold, (run) => run.readySeconds, { target: 2, timed: true }),
    figure('  its CPU time (every thread)', 's', cold, (run) => run.cpuSeconds),
    figure('start to /readyz 200, from a snapshot', 's', warm, (run) => run.readySeconds, { target: 0.5, timed: true }),
    figure('  its CPU time (every thread)', 's', warm, (run) => run.cpuSeconds),
    figure('RSS after start, no snapshot', 'MB', cold, (run) => run.rss / 1e6, { target: 400 }),
    figure('RSS after start, from a snapshot', 'MB', warm, (run) => run.rss / 1e6, { target: 400 }),
    figure('heap per report after GC, no snapshot', 'bytes', cold, heapPerReport, { target: 120 }),
    figure('heap per report after GC, from a snapshot', 'bytes', warm, heapPerReport, { target: 120 }),
    figure('reports snapshot', 's', medians(snapshots, (run) => run.seconds), (run) => run.seconds, { timed: true }),
    { name: 'snapshot file', unit: 'MB', values: Object.fromEntries(shapes.map((shape) => [shape, { value: snapshotBytes(shape) / 1e6 }])) },
  ];
  progress('deleted ids: two more histories (small ids)');
  const notes = [`empty server: ${(empty.heapUsed / 1e6).toFixed(1)} MB of heap and external memory.`, versionsNote(shapes[0] as IdShape), ...(await measureDeletedIds({ root, events, probe, progress }))];
  if (tailSeconds > 0) {
    const shape = shapes[0] as IdShape;
    const cpuProfileDir = process.env['BENCH_CPU_PROF']?.trim() || undefined;
    const tail = await measureTail({ dataDir: join(root, 'tail'), firstId: FIRST_ID[shape], token, durationS: tailSeconds, events, progress, ...(cpuProfileDir === undefined ? {} : { cpuProfileDir }) });
    notes.push(...tailLines(tail, tailSeconds));
  }
  startReport({ events: historyEvents({ firstId: 0n, reports: events }), liveReports, shapes, logBytes, writeSeconds, runs, figures, notes });
}

await main();
