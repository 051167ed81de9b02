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

async function main(): Promise<void> {
  const dataDir = join(root, 'data');
  progress(`writing ${events} events`);
  const writeStarted = performance.now();
  await writeHistory(dataDir, events, (written) => written % 200_000 === 0 && progress(`  ${written}`));
  const writeSeconds = (performance.now() - writeStarted) / 1000;
  const logBytes = statSync(join(dataDir, 'events.log')).size;
  progress('server on an empty log (the heap baseline)');
  const empty = await startAndProbe(join(root, 'empty'));
  progress('reports replay');
  const replay = await runCli(['replay', '--json'], dataDir);
  const summary = JSON.parse(replay.stdout) as { liveReports?: unknown; seconds?: unknown };
  const liveReports = Number(summary.liveReports ?? events);
  // The command's own timing of its fold (without Node's start), when it reports one.
  const foldNote = typeof summary.seconds === 'number' && summary.seconds > 0 ? `; the fold alone: ${Math.round(events / summary.seconds).toLocaleString('en-US')}/s` : '';
  progress('server start without a snapshot');
  const cold = await startAndProbe(dataDir);
  progress('reports snapshot');
  const snapshot = await runCli(['snapshot'], dataDir);
  progress('server start from the snapshot');
  const warm = await startAndProbe(dataDir);
  const heapPerReport = (started: Started) => (started.heapUsed - empty.heapUsed) / liveReports;
  const figures: Figure[] = [
    { name: 'reports replay', value: events / replay.seconds, unit: 'events/s', target: 500_000, higherIsBetter: true, note: `${replay.seconds.toFixed(2)} s, Node's start included${foldNote}` },
    { name: 'start to /readyz 200, no snapshot', value: cold.readySeconds, unit: 's', target: 2 },
    { name: 'start to /readyz 200, from a snapshot', value: warm.readySeconds, unit: 's', target: 0.5, note: `reports snapshot took ${snapshot.seconds.toFixed(2)} s` },
    { name: 'RSS after start, no snapshot', value: cold.rss / 1e6, unit: 'MB', target: 400 },
    { name: 'RSS after start, from a snapshot', value: warm.rss / 1e6, unit: 'MB', target: 400 },
    { name: 'heap per report after GC, no snapshot', value: heapPerReport(cold), unit: 'bytes', target: 120 },
    { name: 'heap per report after GC, from a snapshot', value: heapPerReport(warm), unit: 'bytes', target: 120, note: `heap and external memory; empty server: ${(empty.heapUsed / 1e6).toFixed(1)} MB` },
  ];
  startReport({ events, liveReports, logBytes, writeSeconds, figures });
}

await main();
