// `make bench-start`: how start-up time and memory grow with the history. Writes a deterministic
// history of BENCH_EVENTS ReportCreated events (1,000,000 unless set) with the project's own writer
// into a temporary directory, then measures, each through a public entry point in a child process:
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
// Each timed figure is the median of BENCH_RUNS runs (3 unless set), shown with the fastest and
// slowest run: on a shared machine one run can be 20 % off either way.
// Prints every figure beside the targets with pass/miss. A benchmark: it asserts nothing.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeHistory } from './history.js';
import { baseEnv, startServerProcess, type ServerProcess } from './server-process.js';
import { startReport, type Figure } from './start-up-report.js';

const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const SERVICE_MAIN = fileURLToPath(new URL('../../src/main.js', import.meta.url));
const GC_PROBE = new URL('./gc-probe.js', import.meta.url).href;

const events = eventsSetting();
const token = randomBytes(24).toString('base64url');
const root = mkdtempSync(join(tmpdir(), 'report-store-bench-start-'));
/** The server being measured, killed with the bench on any way out. */
let running: ServerProcess | undefined;
process.on('exit', () => {
  running?.killNow();
  rmSync(root, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));

function eventsSetting(): number {
  const raw = process.env['BENCH_EVENTS']?.trim();
  const value = raw === undefined || raw === '' ? 1_000_000 : Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`BENCH_EVENTS must be a positive integer, got "${raw}"`);
  return value;
}

function progress(line: string): void {
  process.stderr.write(`bench-start: ${line}\n`);
}

function env(dataDir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...baseEnv(), REPORTS_DATA_DIR: dataDir, REPORTS_TOKENS: token, REPORTS_SNAPSHOT_EVERY: '0', LOG_LEVEL: 'warn', ...extra };
}

/** Runs the CLI to its end; its stdout, and the wall time from spawn to exit. */
function runCli(args: readonly string[], dataDir: string): Promise<{ stdout: string; seconds: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, [CLI, ...args], { env: env(dataDir), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code === 0) resolve({ stdout, seconds: (performance.now() - started) / 1000 });
      else reject(new Error(`reports ${args.join(' ')} exited ${code}: ${stderr.trim()}`));
    });
  });
}

function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((candidate) => candidate.startsWith('VmRSS:'));
  return Number(line?.replace(/\D+/g, '') ?? Number.NaN) * 1024;
}

async function heapUsedAfterGc(pid: number, file: string): Promise<number> {
  rmSync(file, { force: true });
  process.kill(pid, 'SIGUSR2');
  for (let waited = 0; !existsSync(file); waited += 20) {
    if (waited > 30_000) throw new Error('the server did not answer the heap probe (SIGUSR2) within 30 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const usage = JSON.parse(readFileSync(file, 'utf8')) as { heapUsed: number; external: number };
  return usage.heapUsed + usage.external;
}

interface Started {
  readonly readySeconds: number;
  readonly rss: number;
  readonly heapUsed: number;
}

/** Starts the server on `dataDir`, waits for /readyz 200, reads its RSS and heap, stops it. */
async function startAndProbe(dataDir: string): Promise<Started> {
  const heapFile = join(root, 'heap.json');
  const server = await startServerProcess({
    script: SERVICE_MAIN,
    env: env(dataDir, { BENCH_HEAP_FILE: heapFile }),
    nodeArgs: ['--expose-gc', '--import', GC_PROBE],
    readyPath: '/readyz',
    startTimeoutMs: 60_000 + events / 50,
    pollMs: 10,
  });
  running = server;
  try {
    const rss = rssBytes(server.pid);
    return { readySeconds: server.upAfterMs / 1000, rss, heapUsed: await heapUsedAfterGc(server.pid, heapFile) };
  } finally {
    await server.stop();
    running = undefined;
  }
}

/** BENCH_RUNS: how many times each timed figure is taken (the median is shown, with the range). */
function runsSetting(): number {
  const raw = process.env['BENCH_RUNS']?.trim();
  const value = raw === undefined || raw === '' ? 3 : Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`BENCH_RUNS must be a positive integer, got "${raw}"`);
  return value;
}

/** Runs `measure` `runs` times, one after the other: the run with the median time, and the fastest and slowest times. */
async function medianOf<Run>(runs: number, measure: () => Promise<Run>, seconds: (run: Run) => number): Promise<{ median: Run; range: [number, number] }> {
  const done: Run[] = [];
  for (let i = 0; i < runs; i += 1) done.push(await measure());
  done.sort((a, b) => seconds(a) - seconds(b));
  return { median: done[Math.floor((done.length - 1) / 2)] as Run, range: [seconds(done[0] as Run), seconds(done[done.length - 1] as Run)] };
}

async function main(): Promise<void> {
  const runs = runsSetting();
  const dataDir = join(root, 'data');
  progress(`writing ${events} events`);
  const writeStarted = performance.now();
  await writeHistory(dataDir, events, (written) => written % 200_000 === 0 && progress(`  ${written}`));
  const writeSeconds = (performance.now() - writeStarted) / 1000;
  const logBytes = statSync(join(dataDir, 'events.log')).size;
  progress('server on an empty log (the heap baseline)');
  const empty = await startAndProbe(join(root, 'empty'));
  progress(`reports replay (${runs} runs)`);
  const replay = await medianOf(runs, () => runCli(['replay', '--json'], dataDir), (run) => run.seconds);
  const summary = JSON.parse(replay.median.stdout) as { liveReports?: unknown; seconds?: unknown };
  const liveReports = Number(summary.liveReports ?? events);
  // The command's own timing of its fold (without Node's start), when it reports one.
  const foldNote = typeof summary.seconds === 'number' && summary.seconds > 0 ? `; the fold alone: ${Math.round(events / summary.seconds).toLocaleString('en-US')}/s` : '';
  progress(`server start without a snapshot (${runs} runs)`);
  const cold = await medianOf(runs, () => startAndProbe(dataDir), (run) => run.readySeconds);
  progress('reports snapshot');
  const snapshot = await runCli(['snapshot'], dataDir);
  progress(`server start from the snapshot (${runs} runs)`);
  const warm = await medianOf(runs, () => startAndProbe(dataDir), (run) => run.readySeconds);
  const spread = (range: readonly [number, number], digits: number, unit: string) => (runs > 1 ? `${runs} runs: ${range[0].toFixed(digits)}–${range[1].toFixed(digits)} ${unit}` : '');
  const heapPerReport = (started: Started) => (started.heapUsed - empty.heapUsed) / liveReports;
  const figures: Figure[] = [
    { name: 'reports replay', value: events / replay.median.seconds, unit: 'events/s', target: 500_000, higherIsBetter: true, note: [`${replay.median.seconds.toFixed(2)} s, Node's start included${foldNote}`, spread(replay.range, 2, 's')].filter(Boolean).join('; ') },
    { name: 'start to /readyz 200, no snapshot', value: cold.median.readySeconds, unit: 's', target: 2, note: spread(cold.range, 2, 's') },
    { name: 'start to /readyz 200, from a snapshot', value: warm.median.readySeconds, unit: 's', target: 0.5, note: [spread(warm.range, 2, 's'), `reports snapshot took ${snapshot.seconds.toFixed(2)} s`].filter(Boolean).join('; ') },
    { name: 'RSS after start, no snapshot', value: cold.median.rss / 1e6, unit: 'MB', target: 400 },
    { name: 'RSS after start, from a snapshot', value: warm.median.rss / 1e6, unit: 'MB', target: 400 },
    { name: 'heap per report after GC, no snapshot', value: heapPerReport(cold.median), unit: 'bytes', target: 120 },
    { name: 'heap per report after GC, from a snapshot', value: heapPerReport(warm.median), unit: 'bytes', target: 120, note: `heap and external memory; empty server: ${(empty.heapUsed / 1e6).toFixed(1)} MB` },
  ];
  startReport({ events, liveReports, logBytes, writeSeconds, figures });
}

await main();
