// `make bench`: POST /reports throughput and latency of the service (file log, quiet and with
// request logging; Kafka when BENCH_KAFKA is set) against a bare Koa handler on the same framework
// stack. A benchmark, not a test: it asserts nothing, but exits 1 when a target answered with
// errors, because then the figures describe the failure and not the service.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem, release } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONFIG_VARIABLES } from '../../src/config.js';
import { topSelfTime } from './cpu-profile.js';
import { startCpuClock, type CoresUsed } from './cpu-time.js';
import { runLoad, type LoadResult } from './load.js';
import { scrapeLogStats, statsBetween, type LogStats } from './log-stats.js';
import { startServerProcess, type ServerProcess } from './server-process.js';
import { textTable } from './text-table.js';

const SERVICE_MAIN = fileURLToPath(new URL('../../src/main.js', import.meta.url));
const BARE_SERVER = fileURLToPath(new URL('./bare-server.js', import.meta.url));
const CONNECTIONS = 64;
/** More failed requests than this share means the bench is broken (wrong token, a full disk…). */
const BROKEN_SHARE = 0.001;

const settings = {
  durationS: positive('BENCH_DURATION_S', 10),
  warmupS: positive('BENCH_WARMUP_S', 2),
  kafkaBrokers: process.env['BENCH_KAFKA']?.trim() || undefined,
  cpuProfileDir: process.env['BENCH_CPU_PROF']?.trim() || undefined,
};

interface Target {
  readonly name: string;
  readonly isService: boolean;
  readonly env: NodeJS.ProcessEnv;
}

interface Measured {
  readonly target: Target;
  readonly load: LoadResult;
  readonly logStats: LogStats | undefined;
  readonly cores: CoresUsed;
}

function positive(name: string, fallback: number): number {
  const raw = process.env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!(value > 0)) throw new Error(`${name} must be a positive number of seconds, got "${raw}"`);
  return value;
}

// Children and temp dirs still held; released on every way out, SIGINT included.
const children = new Set<ServerProcess>();
const tempDirs = new Set<string>();

async function releaseAll(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
  await Promise.allSettled([...children].map((child) => child.stop(signal)));
  children.clear();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

process.on('exit', () => {
  for (const child of children) child.killNow();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});
for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
  process.once(signal, () => {
    process.stderr.write(`\nbench: ${signal}: killing the servers and removing temp dirs\n`);
    // SIGKILL: a server asked to stop cleanly would wait for the load generator's busy connections.
    void releaseAll('SIGKILL').finally(() => process.exit(code));
  });
}

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

/** The shell's environment without any variable the service reads, so nothing leaks in. */
function baseEnv(): NodeJS.ProcessEnv {
  const ours = new Set<string>(CONFIG_VARIABLES);
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !ours.has(name) && !name.startsWith('KAFKA_')));
}

function targets(token: string): Target[] {
  const service = (name: string, env: NodeJS.ProcessEnv): Target => ({ name, isService: true, env: { ...baseEnv(), REPORTS_TOKENS: token, ...env } });
  const list = [
    service('service, file log, LOG_LEVEL=warn', { LOG_LEVEL: 'warn' }),
    service('service, file log, LOG_LEVEL=info', { LOG_LEVEL: 'info' }),
  ];
  if (settings.kafkaBrokers !== undefined) {
    list.push(service(`service, Kafka ${settings.kafkaBrokers}, LOG_LEVEL=warn`, { LOG_LEVEL: 'warn', KAFKA_BROKERS: settings.kafkaBrokers, REPORTS_TOPIC: `bench.reports.${Date.now()}` }));
  }
  list.push({ name: 'bare Koa + @koa/router + koa-bodyparser', isService: false, env: baseEnv() });
  return list;
}

async function measure(target: Target, token: string): Promise<Measured> {
  const dataDir = tempDir('report-store-bench-');
  const profileDir = settings.cpuProfileDir === undefined ? undefined : join(settings.cpuProfileDir, slug(target.name));
  const server = await startServerProcess({
    script: target.isService ? SERVICE_MAIN : BARE_SERVER,
    env: { ...target.env, REPORTS_DATA_DIR: dataDir },
    nodeArgs: profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`],
    ...(target.isService ? { readyPath: '/readyz' } : {}),
  });
  children.add(server);
  try {
    let lastId = 0;
    const load = { url: server.url, connections: CONNECTIONS, nextId: () => ++lastId, ...(target.isService ? { token } : {}) };
    progress(`${target.name}: warm-up ${settings.warmupS} s`);
    await runLoad({ ...load, durationS: settings.warmupS });
    const statsBefore = target.isService ? await scrapeLogStats(server.url) : undefined;
    const coresUsed = startCpuClock(server.pid);
    progress(`${target.name}: measuring ${settings.durationS} s`);
    const result = await runLoad({ ...load, durationS: settings.durationS });
    const cores = coresUsed();
    const statsAfter = target.isService ? await scrapeLogStats(server.url) : undefined;
    const logStats = statsBefore !== undefined && statsAfter !== undefined ? statsBetween(statsBefore, statsAfter) : undefined;
    return { target, load: result, logStats, cores };
  } finally {
    await server.stop();
    children.delete(server);
    removeTempDir(dataDir);
    if (profileDir !== undefined) printProfile(target.name, profileDir);
  }
}

function slug(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
}

function progress(line: string): void {
  process.stderr.write(`bench: ${line}\n`);
}

function printProfile(name: string, dir: string): void {
  for (const file of readdirSync(dir).filter((entry) => entry.endsWith('.cpuprofile'))) {
    const rows = topSelfTime(join(dir, file), 15).map(({ name: fn, selfMs, share }) => [fn, selfMs.toFixed(0), `${(share * 100).toFixed(1)}%`]);
    console.log(`\nCPU profile of "${name}" (${join(dir, file)}; warm-up + run), top self time:`);
    console.log(textTable([['function', 'self ms', 'share'], ...rows]));
  }
}

function failedShare({ load }: Measured): number {
  return (load.non2xx + load.errors) / Math.max(1, load.completed + load.errors);
}

function report(results: readonly Measured[]): void {
  const bare = results.find((result) => !result.target.isService);
  const fixed = (value: number | undefined, digits: number) => (value === undefined || Number.isNaN(value) ? '—' : value.toFixed(digits));
  const rows = results.map((result) => {
    const { load, logStats } = result;
    const ratio = result.target.isService && bare !== undefined ? load.requestsPerSecondMean / bare.load.requestsPerSecondMean : undefined;
    const perFlush = logStats === undefined || logStats.flushes === 0 ? '—' : `${(logStats.appends / logStats.flushes).toFixed(1)} (${logStats.appends}/${logStats.flushes})`;
    const cpuPerRequestUs = result.cores.server === undefined ? undefined : (result.cores.server / load.requestsPerSecondMean) * 1e6;
    return [
      result.target.name, load.requestsPerSecondMean.toFixed(0), fixed(load.p50Ms, 2), fixed(load.p99Ms, 2), String(load.non2xx), String(load.errors),
      fixed(ratio, 2), perFlush, fixed(result.cores.server, 2), fixed(cpuPerRequestUs, 0), fixed(result.cores.loadgen, 2), fixed(result.cores.other, 2),
    ];
  });
  console.log(`\nPOST /reports, ${CONNECTIONS} connections, ${settings.durationS} s after a ${settings.warmupS} s warm-up, a new id in every request`);
  console.log(textTable([['target', 'req/s (mean)', 'p50 ms', 'p99 ms', 'non-2xx', 'errors', 'vs bare', 'appends per flush', 'server cores', 'server CPU µs/req', 'loadgen cores', 'other cores'], ...rows]));
  console.log('\nvs bare: req/s of the target ÷ req/s of the bare handler. appends per flush: log appends ÷ fsyncs of the file log');
  console.log('(produce requests on Kafka), from the service\'s /metrics before and after the run. cores: CPU seconds ÷ wall seconds.');
  console.log('server CPU µs/req: the server\'s CPU time per request, the steadiest figure when the machine is shared;');
  console.log('other cores: everything else on the machine during the run (a local Kafka broker included); well above 0 means');
  console.log('the figures were taken on a busy machine.');
}

function printContext(): void {
  const cores = cpus();
  const model = cores[0]?.model.trim() ?? 'unknown CPU';
  console.log(`machine: ${cores.length} cores (${model}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB, ${process.platform} ${release()}, node ${process.version}`);
  console.log(`data dirs under ${tmpdir()}; load generator: autocannon (one thread) in this process; each server in a child process of its own.`);
  if (cores.length <= 2) {
    console.log(`With ${cores.length} cores the load generator and the server share the machine (about one core each, and the`);
    console.log('service\'s fsyncs and GC need some too): read the absolute figures as this machine\'s, and the ratios as the point.');
  }
}

async function main(): Promise<number> {
  printContext();
  const token = randomBytes(24).toString('base64url');
  const results: Measured[] = [];
  for (const target of targets(token)) results.push(await measure(target, token));
  report(results);
  const broken = results.filter((result) => failedShare(result) > BROKEN_SHARE);
  for (const { target, load } of broken) {
    console.error(`bench: BROKEN: ${target.name} failed ${load.non2xx} non-2xx and ${load.errors} errors of ${load.completed} responses; statuses ${JSON.stringify(load.statusCounts)}`);
  }
  return broken.length === 0 ? 0 : 1;
}

main()
  .then(async (code) => {
    await releaseAll();
    process.exit(code);
  })
  .catch(async (error: unknown) => {
    console.error(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    await releaseAll();
    process.exit(1);
  });
