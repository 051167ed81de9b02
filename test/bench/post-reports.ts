// `make bench`: POST /reports throughput and latency of the service (file log, quiet and with
// request logging; Kafka when BENCH_KAFKA is set) against three peers on the same framework stack:
// a bare Koa handler (a Map, nothing else), the Koa + PostgreSQL service a user would otherwise
// write, and the event-sourced one they would build with Emmett (both on a real PostgreSQL server
// the bench starts itself, a fresh one for each). Each target is measured at saturation
// and then at a fixed arrival rate below it (tail latency). A benchmark, not a test: it asserts
// nothing, but exits 1 when a target answered with errors, because then the figures describe the
// failure and not the service. `BENCH_BASELINE=<commit>` measures the service as it was at that
// commit too, each service target right before its twin, and prints the ratios (baseline-build.ts).
// `BENCH_FEED=1` measures each service target again with a consumer of GET /events attached (curl
// in a process of its own, reading the feed as fast as it comes), right after it, and prints the ratios.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem, release } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  baselineRatios,
  printBaselineRatios,
  printReport,
  printRoundRatios,
  type Measured,
  type TargetKind,
} from './bench-report.js';
import { buildBaseline, type BaselineBuild } from './baseline-build.js';
import { topSelfTime } from './cpu-profile.js';
import { startCpuClock } from './cpu-time.js';
import { runLoad, type LoadResult } from './load.js';
import { runPaced } from './open-loop.js';
import { scrapeLogStats, statsBetween } from './log-stats.js';
import { findPostgresBin, startPostgres, type Postgres } from './postgres.js';
import { baseEnv, freePort, startServerProcess, type ServerProcess } from './server-process.js';
import { textTable } from './text-table.js';

const SCRIPTS: Readonly<Record<TargetKind, string>> = {
  service: fileURLToPath(new URL('../../src/main.js', import.meta.url)),
  bare: fileURLToPath(new URL('./bare-server.js', import.meta.url)),
  postgres: fileURLToPath(new URL('./pg-server.js', import.meta.url)),
  emmett: fileURLToPath(new URL('./emmett-server.js', import.meta.url)),
};
/** The targets that need a PostgreSQL server of their own. */
const ON_POSTGRES: ReadonlySet<TargetKind> = new Set(['postgres', 'emmett']);
const CONNECTIONS = 64;
/** More failed requests than this share means the bench is broken (wrong token, a full disk…). */
const BROKEN_SHARE = 0.001;

const settings = {
  durationS: positive('BENCH_DURATION_S', 10),
  ratePerS: positive('BENCH_RATE', 5000),
  warmupS: positive('BENCH_WARMUP_S', 2),
  kafkaBrokers: process.env['BENCH_KAFKA']?.trim() || undefined,
  /** Only the targets whose names contain one of these (comma-separated), for a quick A/B; all when unset. */
  only: (process.env['BENCH_TARGETS'] ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== ''),
  cpuProfileDir: process.env['BENCH_CPU_PROF']?.trim() || undefined,
  baseline: process.env['BENCH_BASELINE']?.trim() || undefined,
  feed: ['1', 'true', 'yes'].includes(process.env['BENCH_FEED']?.trim().toLowerCase() ?? ''),
  /** With a baseline: how often each service target and its twin are measured, in turn (1 unless set). */
  rounds: Math.round(positive('BENCH_ROUNDS', 1)),
};

/** The name of a target's twin measured with a feed consumer attached. */
const withFeed = (name: string) => `${name} + a GET /events consumer`;

interface Target {
  readonly name: string;
  readonly kind: TargetKind;
  readonly env: NodeJS.ProcessEnv;
  /** Another build's entry point (a baseline's); SCRIPTS[kind] when absent. */
  readonly script?: string;
  /** Measured with a consumer of GET /events attached (BENCH_FEED). */
  readonly feed?: boolean;
}

function positive(name: string, fallback: number): number {
  const raw = process.env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!(value > 0)) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return value;
}

// Children and temp dirs still held; released on every way out, SIGINT included.
const children = new Set<ServerProcess>();
const tempDirs = new Set<string>();
const databases = new Set<Postgres>();

function stopDatabases(): void {
  for (const database of databases) {
    try {
      database.stop();
    } catch {
      // already gone; its directory is removed next
    }
  }
  databases.clear();
}

async function releaseAll(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
  await Promise.allSettled([...children].map((child) => child.stop(signal)));
  children.clear();
  stopDatabases();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

process.on('exit', () => {
  for (const child of children) child.killNow();
  stopDatabases();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
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

function targets(token: string, postgresBin: string | undefined, baseline: BaselineBuild | undefined): Target[] {
  const list: Target[] = [];
  // With a baseline, each service target is measured right after the baseline's twin.
  const service = (name: string, env: NodeJS.ProcessEnv) => {
    const target: Target = { name, kind: 'service', env: { ...baseEnv(), REPORTS_TOKENS: token, ...env } };
    if (baseline !== undefined)
      list.push({
        ...target,
        name: `${name} (baseline ${baseline.name})`,
        script: baseline.mainScript,
        ...(env['REPORTS_TOPIC'] === undefined
          ? {}
          : { env: { ...target.env, REPORTS_TOPIC: `${env['REPORTS_TOPIC']}.baseline` } }),
      });
    list.push(target);
    if (settings.feed)
      list.push({
        ...target,
        name: withFeed(name),
        feed: true,
        ...(env['REPORTS_TOPIC'] === undefined
          ? {}
          : { env: { ...target.env, REPORTS_TOPIC: `${env['REPORTS_TOPIC']}.feed` } }),
      });
  };
  service('service, file log, LOG_LEVEL=warn', { LOG_LEVEL: 'warn' });
  service('service, file log, LOG_LEVEL=info', { LOG_LEVEL: 'info' });
  if (settings.kafkaBrokers !== undefined) {
    service(`service, Kafka ${settings.kafkaBrokers}, LOG_LEVEL=warn`, {
      LOG_LEVEL: 'warn',
      KAFKA_BROKERS: settings.kafkaBrokers,
      REPORTS_TOPIC: `bench.reports.${Date.now()}`,
    });
  }
  list.push({ name: 'bare Koa + @koa/router + koa-bodyparser', kind: 'bare', env: baseEnv() });
  if (postgresBin === undefined) {
    console.log(
      'Koa + PostgreSQL and Emmett: skipped, no initdb/pg_ctl on the PATH or under /usr/lib/postgresql/*/bin (apt-get install postgresql)',
    );
  } else {
    list.push({
      name: 'Koa + PostgreSQL (pg, pool of 16)',
      kind: 'postgres',
      env: { ...baseEnv(), BENCH_TOKEN: token },
    });
    list.push({
      name: 'Emmett + PostgreSQL (decider, pool of 16)',
      kind: 'emmett',
      env: { ...baseEnv(), BENCH_TOKEN: token },
    });
  }
  return list;
}

/** The database of a target on PostgreSQL, started fresh for it; its PG* variables for the driver. */
async function startDatabase(postgresBin: string): Promise<{ database: Postgres; env: NodeJS.ProcessEnv }> {
  progress('starting PostgreSQL');
  const database = startPostgres(postgresBin, tempDir('report-store-bench-pg-'), await freePort());
  databases.add(database);
  return {
    database,
    env: { PGHOST: database.socketDir, PGPORT: String(database.port), PGUSER: database.user, PGDATABASE: 'postgres' },
  };
}

async function measure(target: Target, token: string, postgresBin: string | undefined): Promise<Measured> {
  const dataDir = tempDir('report-store-bench-');
  const profileDir = settings.cpuProfileDir === undefined ? undefined : join(settings.cpuProfileDir, slug(target.name));
  const db = ON_POSTGRES.has(target.kind) && postgresBin !== undefined ? await startDatabase(postgresBin) : undefined;
  const isService = target.kind === 'service';
  const server = await startServerProcess({
    script: target.script ?? SCRIPTS[target.kind],
    env: { ...target.env, ...db?.env, REPORTS_DATA_DIR: dataDir },
    nodeArgs: profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`],
    ...(isService ? { readyPath: '/readyz' } : {}),
  });
  children.add(server);
  const consumer = target.feed === true ? attachFeedConsumer(server.url, token) : undefined;
  try {
    let lastId = 0;
    const load = {
      url: server.url,
      connections: CONNECTIONS,
      nextId: () => ++lastId,
      ...(target.kind === 'bare' ? {} : { token }),
    };
    progress(`${target.name}: warm-up ${settings.warmupS} s`);
    await runLoad({ ...load, durationS: settings.warmupS });
    const statsBefore = isService ? await scrapeLogStats(server.url) : undefined;
    const coresUsed = startCpuClock(server.pid, () => db?.database.pids() ?? []);
    progress(`${target.name}: measuring ${settings.durationS} s`);
    const result = await runLoad({ ...load, durationS: settings.durationS });
    const cores = coresUsed();
    const statsAfter = isService ? await scrapeLogStats(server.url) : undefined;
    const logStats =
      statsBefore !== undefined && statsAfter !== undefined ? statsBetween(statsBefore, statsAfter) : undefined;
    // Below its saturation only: beyond it an open-loop queue grows for the whole phase (minutes for the slowest peer) and says nothing new.
    const paced =
      result.requestsPerSecondMean >= settings.ratePerS
        ? await runPaced({ ...load, durationS: settings.durationS, ratePerS: settings.ratePerS })
        : undefined;
    if (paced === undefined)
      progress(
        `${target.name}: saturates at ${result.requestsPerSecondMean.toFixed(0)} req/s, below ${settings.ratePerS}: no fixed-rate phase`,
      );
    else progress(`${target.name}: ${settings.ratePerS} req/s for ${settings.durationS} s done`);
    if (!isService) return { name: target.name, kind: target.kind, load: result, logStats, cores, paced };
    // Identical retries of ids created above: the no-write answers, whose cost on Kafka is the catch-up.
    const created = lastId;
    let retried = 0;
    progress(`${target.name}: identical retries for ${settings.durationS} s`);
    const retries = await runLoad({
      ...load,
      durationS: settings.durationS,
      nextId: () => (retried = (retried % created) + 1),
    });
    // Deletes of the reports created above, each once (the first of them, as many as the creates' run made).
    let deleted = 0;
    progress(`${target.name}: deletes of ${result.completed} reports`);
    const deletes = await runLoad({
      ...load,
      durationS: settings.durationS,
      method: 'DELETE',
      amount: result.completed,
      nextId: () => ++deleted,
    });
    return { name: target.name, kind: target.kind, load: result, logStats, cores, paced, retries, deletes };
  } finally {
    if (consumer !== undefined) progress(`${target.name}: the feed consumer read ${await consumer.stop()} bytes`);
    await server.stop();
    children.delete(server);
    if (db !== undefined) {
      db.database.stop();
      databases.delete(db.database);
      removeTempDir(db.database.socketDir);
    }
    removeTempDir(dataDir);
    if (profileDir !== undefined) printProfile(target.name, profileDir);
  }
}

/** curl following GET /events, counting the bytes it reads (to its stdout). */
function attachFeedConsumer(url: string, token: string): { stop(): Promise<number> } {
  const child: ChildProcess = spawn('curl', ['-sN', `${url}/events`, '-H', `Authorization: Bearer ${token}`], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let bytes = 0;
  child.stdout?.on('data', (chunk: Buffer) => (bytes += chunk.length));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  return {
    async stop() {
      child.kill('SIGTERM');
      await exited;
      return bytes;
    },
  };
}

/** Each service target measured with a feed consumer against itself without, one right after the other. */
function printFeedRatios(results: readonly Measured[]): void {
  const rows: string[][] = [];
  for (const result of results) {
    const fed = results.find((other) => other.name === withFeed(result.name));
    if (fed === undefined) continue;
    rows.push([
      result.name,
      (fed.load.requestsPerSecondMean / result.load.requestsPerSecondMean).toFixed(2),
      fed.paced && result.paced ? (fed.paced.p99Ms / result.paced.p99Ms).toFixed(2) : '—',
    ]);
  }
  console.log(
    '\nWith a GET /events consumer attached ÷ without (BENCH_FEED), each pair measured one after the other in this run',
  );
  console.log(textTable([['target', 'creates req/s', 'p99 at the fixed rate'], ...rows]));
}

/** What a phase that did not run counts for. */
const EMPTY_LOAD: Pick<LoadResult, 'non2xx' | 'errors' | 'completed' | 'statusCounts'> = {
  non2xx: 0,
  errors: 0,
  completed: 0,
  statusCounts: {},
};

function slug(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

function progress(line: string): void {
  process.stderr.write(`bench: ${line}\n`);
}

function printProfile(name: string, dir: string): void {
  for (const file of readdirSync(dir).filter((entry) => entry.endsWith('.cpuprofile'))) {
    const rows = topSelfTime(join(dir, file), 15).map(({ name: fn, selfMs, share }) => [
      fn,
      selfMs.toFixed(0),
      `${(share * 100).toFixed(1)}%`,
    ]);
    console.log(`\nCPU profile of "${name}" (${join(dir, file)}; warm-up + run), top self time:`);
    console.log(textTable([['function', 'self ms', 'share'], ...rows]));
  }
}

function failedShare({ load, paced: maybePaced }: Measured): number {
  const paced = maybePaced ?? EMPTY_LOAD;
  return (
    (load.non2xx + load.errors + paced.non2xx + paced.errors) /
    Math.max(1, load.completed + load.errors + paced.completed + paced.errors)
  );
}

function printContext(): void {
  const cores = cpus();
  const model = cores[0]?.model.trim() ?? 'unknown CPU';
  console.log(
    `machine: ${cores.length} cores (${model}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB, ${process.platform} ${release()}, node ${process.version}`,
  );
  console.log(
    `data dirs under ${tmpdir()}; load generator: autocannon (one thread) in this process; each server in a child process of its own.`,
  );
  if (cores.length <= 2) {
    console.log(
      `With ${cores.length} cores the load generator and the server share the machine (about one core each, and the`,
    );
    console.log(
      "service's fsyncs and GC need some too): read the absolute figures as this machine's, and the ratios as the point.",
    );
  }
}

async function main(): Promise<number> {
  printContext();
  const token = randomBytes(24).toString('base64url');
  const postgresBin = findPostgresBin();
  const results: Measured[] = [];
  const baseline = settings.baseline === undefined ? undefined : buildBaseline(settings.baseline, progress);
  const chosen = targets(token, postgresBin, baseline).filter(
    ({ name }) => settings.only.length === 0 || settings.only.some((part) => name.includes(part)),
  );
  for (const target of chosen) results.push(await measure(target, token, postgresBin));
  printReport(results, {
    connections: CONNECTIONS,
    durationS: settings.durationS,
    warmupS: settings.warmupS,
    ratePerS: settings.ratePerS,
  });
  if (baseline !== undefined) {
    printBaselineRatios(results, baseline.name);
    if (settings.rounds > 1) {
      // Only the pairs again: a ratio between two 10-second runs moves by ±0.2 on a shared machine.
      const rounds = [baselineRatios(results, baseline.name)];
      const pairs = chosen.filter(({ kind, feed }) => kind === 'service' && feed !== true);
      for (let round = 2; round <= settings.rounds; round += 1) {
        progress(`round ${round} of ${settings.rounds}`);
        const again: Measured[] = [];
        for (const target of pairs) again.push(await measure(target, token, postgresBin));
        rounds.push(baselineRatios(again, baseline.name));
      }
      printRoundRatios(rounds, baseline.name);
    }
  }
  if (settings.feed) printFeedRatios(results);
  const broken = results.filter((result) => failedShare(result) > BROKEN_SHARE);
  for (const { name, load, paced: maybePaced } of broken) {
    const paced = maybePaced ?? EMPTY_LOAD;
    console.error(
      `bench: BROKEN: ${name} failed ${load.non2xx + paced.non2xx} non-2xx and ${load.errors + paced.errors} errors of ${load.completed + paced.completed} responses; statuses ${JSON.stringify(load.statusCounts)} ${JSON.stringify(paced.statusCounts)}`,
    );
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
