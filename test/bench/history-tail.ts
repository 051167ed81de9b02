// The tail under a large history (part of `make bench-start`): the service on a history of a
// million reports, with its automatic snapshots on as by default, takes new creates at half its
// saturation rate for BENCH_TAIL_S seconds (60 unless set) from the open-loop generator, and so
// does the bare Koa handler at the same rate, one after the other in the same run: p99 and p99.9
// of the service against the bare handler's. On a fresh history the two are close; on a large one
// anything that stops the server's event loop for a while (a snapshot encoded in one piece, a
// table rehashed at once) shows here and nowhere else. The history is laid out so that the
// server's next automatic snapshot of the whole model (60-70 MB at a million reports) falls due
// inside the measured minute: its newest snapshot lies snapshotLag(events) events behind the
// head. Three more figures say where a tail comes from: the same service on an empty history at
// the same rate in the same run (what the large history costs is the difference), the share of its
// appends that waited over a few ms for their flush (the synchronized write and its trip through
// the thread pool), from its own /metrics (a floor under the requests' tail that a handler which
// never syncs does not have), and each server's CPU during its measured run: the same rate is a
// larger share of a core for the service, and queueing grows with that share.
// BENCH_CPU_PROF=DIR keeps a CPU profile of the service's run.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MODEL_SHARE, snapshotDue } from '../../src/snapshot/auto-snapshot.js';
import { appendWaitsBetween, scrapeAppendWaits, shareOver, type AppendWaits } from './append-waits.js';
import { startCpuClock } from './cpu-time.js';
import { writeHistory } from './history.js';
import { runLoad, type LoadResult } from './load.js';
import { runPaced } from './open-loop.js';
import { baseEnv, startServerProcess, type ServerProcess } from './server-process.js';

const SERVICE = fileURLToPath(new URL('../../src/main.js', import.meta.url));
const BARE = fileURLToPath(new URL('./bare-server.js', import.meta.url));
const CONNECTIONS = 64;
const SATURATION_S = 5;
const WARMUP_S = 2;
/** The paced run's own warm-up: right after a saturation run the first second's tail is the backlog's, not the rate's. */
const PACED_WARMUP_S = 5;
/** New ids start here, far beyond any history the bench writes. */
const FIRST_NEW_ID = 5_000_000_000_000;
const DEFAULT_SNAPSHOT_EVERY = 10_000;
/**
 * Writes after the start at which the next automatic snapshot should fall due: past the warm-up,
 * the saturation run and the paced warm-up (9.5 s at saturation's pace, 35,000-75,000 writes at
 * 4,000-8,000 req/s) and well before the end of a 60 s run at half saturation.
 */
const SNAPSHOT_DUE_AFTER_WRITES = 100_000;

export interface TailOptions {
  /** An empty directory for the history, the service's data directory. */
  readonly dataDir: string;
  /** The id of the history's first report. */
  readonly firstId: bigint;
  readonly token: string;
  readonly durationS: number;
  readonly events: number;
  readonly progress: (line: string) => void;
  readonly cpuProfileDir?: string;
}

export interface TailResult {
  readonly saturation: number;
  readonly rate: number;
  readonly service: LoadResult;
  readonly bare: LoadResult;
  /** The service on an empty history at the same rate. */
  readonly fresh: LoadResult;
  /** How long the appends of the measured runs waited for the log, on the large history and on the empty one. */
  readonly appendWaits: { readonly large: AppendWaits; readonly fresh: AppendWaits };
  /** Cores each server used during its measured run (undefined without /proc). */
  readonly serverCores: {
    readonly large: number | undefined;
    readonly fresh: number | undefined;
    readonly bare: number | undefined;
  };
  /** Snapshots the service wrote during its run. */
  readonly snapshots: number;
  /** Events between the newest snapshot and the head when the service started. */
  readonly lag: number;
  /** Writes after the start at which the next automatic snapshot was due. */
  readonly dueAfter: number;
}

/**
 * How far behind the head the newest snapshot must lie for the next automatic snapshot to fall due
 * SNAPSHOT_DUE_AFTER_WRITES writes after the start. With R reports and a snapshot `lag` events
 * old, the one after w writes is due when lag + w >= (R + w) / 4 (no idempotency keys here), so
 * w = (R / 4 - lag) * 4 / 3. A small history needs none: its snapshots come every
 * REPORTS_SNAPSHOT_EVERY (10,000) writes anyway.
 */
export function snapshotLag(events: number): number {
  return Math.max(0, Math.floor(events / MODEL_SHARE - (SNAPSHOT_DUE_AFTER_WRITES * (MODEL_SHARE - 1)) / MODEL_SHARE));
}

/** Writes after the start until the server's next automatic snapshot falls due, for `events` reports with a snapshot `lag` events old. */
export function snapshotDueAfter(events: number, lag: number): number {
  let writes = 0;
  while (!snapshotDue(lag + writes, DEFAULT_SNAPSHOT_EVERY, events + writes)) writes += 1;
  return writes;
}

function serviceEnv(token: string, dataDir: string): NodeJS.ProcessEnv {
  return { ...baseEnv(), REPORTS_TOKENS: token, REPORTS_DATA_DIR: dataDir, LOG_LEVEL: 'info' };
}

/**
 * The history of `events` creates with the newest snapshot `lag` events behind its head: the
 * first events - lag written, a server started on them until it has written its snapshot, then
 * the rest written.
 */
async function historyWithOlderSnapshot(
  dataDir: string,
  firstId: bigint,
  token: string,
  events: number,
  lag: number,
  progress: (line: string) => void,
): Promise<void> {
  progress(`tail: writing ${events - lag} events, a snapshot of them, then ${lag} more`);
  await writeHistory(dataDir, { firstId, reports: events - lag });
  if (events - lag >= DEFAULT_SNAPSHOT_EVERY) {
    const first = await startServerProcess({
      script: SERVICE,
      env: serviceEnv(token, dataDir),
      readyPath: '/readyz',
      startTimeoutMs: 120_000,
    });
    try {
      await snapshotWritten(dataDir);
    } finally {
      await first.stop();
    }
  }
  await writeHistory(dataDir, { firstId, reports: events, fromReport: events - lag });
}

/** A measured run at a fixed rate, with the cores its server used meanwhile. */
interface PacedRun {
  readonly run: LoadResult;
  readonly cores: number | undefined;
}

/** PACED_WARMUP_S at the rate (what saturation left behind settles, and connections open), then the measured run. */
async function paced(server: ServerProcess, rate: number, durationS: number, nextId: () => number): Promise<PacedRun> {
  const options = { url: server.url, connections: CONNECTIONS, ratePerS: rate, nextId };
  await runPaced({ ...options, durationS: PACED_WARMUP_S });
  const cpu = startCpuClock(server.pid);
  const run = await runPaced({ ...options, durationS });
  return { run, cores: cpu().server };
}

/** `paced` on the service, with how long its measured run's appends waited for the log. */
async function pacedService(
  server: ServerProcess,
  token: string,
  rate: number,
  durationS: number,
  nextId: () => number,
): Promise<PacedRun & { waits: AppendWaits }> {
  const options = { url: server.url, connections: CONNECTIONS, ratePerS: rate, nextId, token };
  await runPaced({ ...options, durationS: PACED_WARMUP_S });
  const before = await scrapeAppendWaits(server.url);
  const cpu = startCpuClock(server.pid);
  const run = await runPaced({ ...options, durationS });
  const cores = cpu().server;
  return { run, cores, waits: appendWaitsBetween(before, await scrapeAppendWaits(server.url)) };
}

/** The service on an empty data directory of its own at `rate`, measured as on the large history. */
async function freshHistory(
  nearDir: string,
  token: string,
  rate: number,
  durationS: number,
  nextId: () => number,
): Promise<PacedRun & { waits: AppendWaits }> {
  const dataDir = mkdtempSync(join(dirname(nearDir), 'report-store-bench-fresh-'));
  try {
    const service = await startServerProcess({
      script: SERVICE,
      env: serviceEnv(token, dataDir),
      readyPath: '/readyz',
    });
    try {
      await runLoad({ url: service.url, connections: CONNECTIONS, durationS: WARMUP_S, token, nextId });
      return await pacedService(service, token, rate, durationS, nextId);
    } finally {
      await service.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function measureTail({
  dataDir,
  firstId,
  token,
  durationS,
  events,
  progress,
  cpuProfileDir,
}: TailOptions): Promise<TailResult> {
  let lastId = FIRST_NEW_ID;
  const nextId = () => ++lastId;
  const lag = snapshotLag(events);
  await historyWithOlderSnapshot(dataDir, firstId, token, events, lag, progress);
  const dueAfter = snapshotDueAfter(events, lag);
  progress(
    `tail: the service on ${events} reports (automatic snapshots on; the next one due after ${dueAfter} writes)`,
  );
  const service = await startServerProcess({
    script: SERVICE,
    env: serviceEnv(token, dataDir),
    nodeArgs: cpuProfileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${cpuProfileDir}`],
    readyPath: '/readyz',
    startTimeoutMs: 120_000,
  });
  let saturation: number;
  let serviceRun: PacedRun & { waits: AppendWaits };
  let snapshots: number;
  try {
    // Every history but a small one has a snapshot by now (a start that folds REPORTS_SNAPSHOT_EVERY
    // events or more writes one at once: a small history's, which the measured runs start after).
    if (events >= DEFAULT_SNAPSHOT_EVERY) await snapshotWritten(dataDir);
    await runLoad({ url: service.url, connections: CONNECTIONS, durationS: WARMUP_S, token, nextId });
    saturation = (await runLoad({ url: service.url, connections: CONNECTIONS, durationS: SATURATION_S, token, nextId }))
      .requestsPerSecondMean;
    const rate = Math.round(saturation / 2);
    progress(`tail: saturation ${saturation.toFixed(0)} req/s; the service at ${rate} req/s for ${durationS} s`);
    const before = new Set(snapshotNames(dataDir));
    serviceRun = await pacedService(service, token, rate, durationS, nextId);
    snapshots = snapshotNames(dataDir).filter((name) => !before.has(name)).length;
  } finally {
    await service.stop();
  }
  const rate = Math.round(saturation / 2);
  progress(`tail: the service on an empty history at ${rate} req/s for ${durationS} s`);
  const fresh = await freshHistory(dataDir, token, rate, durationS, nextId);
  progress(`tail: the bare Koa handler at ${rate} req/s for ${durationS} s`);
  const bare = await startServerProcess({ script: BARE, env: baseEnv() });
  try {
    await runLoad({ url: bare.url, connections: CONNECTIONS, durationS: WARMUP_S, nextId });
    const bareRun = await paced(bare, rate, durationS, nextId);
    return {
      saturation,
      rate,
      service: serviceRun.run,
      bare: bareRun.run,
      fresh: fresh.run,
      appendWaits: { large: serviceRun.waits, fresh: fresh.waits },
      serverCores: { large: serviceRun.cores, fresh: fresh.cores, bare: bareRun.cores },
      snapshots,
      lag,
      dueAfter,
    };
  } finally {
    await bare.stop();
  }
}

/** Until the directory holds a snapshot and no snapshot is being written (at most a minute). */
async function snapshotWritten(dataDir: string): Promise<void> {
  const dir = join(dataDir, 'snapshots');
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const names = existsSync(dir) ? readdirSync(dir) : [];
    if (names.some((name) => name.endsWith('.snap')) && !names.some((name) => name.endsWith('.tmp'))) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`no snapshot in ${dir} a minute after the start`);
}

/** The snapshot files in the directory (named by position: one written later has a new name). */
function snapshotNames(dataDir: string): string[] {
  const dir = join(dataDir, 'snapshots');
  return existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith('.snap')) : [];
}

/** The lines the report prints. */
export function tailLines(
  { saturation, rate, service, bare, fresh, appendWaits, serverCores, snapshots, lag, dueAfter }: TailResult,
  durationS: number,
): string[] {
  const ms = (value: number) => `${value.toFixed(1)} ms`;
  const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
  const percent = (share: number) => `${(share * 100).toFixed(2)} %`;
  const waited = (waits: AppendWaits) =>
    [0.0025, 0.005, 0.025].map((seconds) => percent(shareOver(waits, seconds))).join(' / ');
  const busy = (cores: number | undefined) =>
    cores === undefined
      ? 'unknown (no /proc)'
      : `${cores.toFixed(2)} cores, ${((cores * 1e6) / rate).toFixed(0)} µs a request`;
  const latencies = (run: LoadResult) =>
    `p50 ${ms(run.p50Ms)}, p99 ${ms(run.p99Ms)}, p99.9 ${ms(run.p999Ms)}; achieved ${run.requestsPerSecondMean.toFixed(0)} req/s`;
  return [
    `Tail under the large history: saturation ${saturation.toFixed(0)} req/s; all at ${rate} req/s for ${durationS} s (open loop), ${snapshots} snapshot(s) written by the service meanwhile`,
    `  (its newest snapshot was ${lag} events behind the head at start: the next was due after ${dueAfter} writes).`,
    `  service: ${latencies(service)}, ${service.non2xx + service.errors} not 2xx`,
    `  service on an empty history: ${latencies(fresh)}, ${fresh.non2xx + fresh.errors} not 2xx`,
    `  bare Koa: ${latencies(bare)}`,
    `  service ÷ bare: p99 ${ratio(service.p99Ms, bare.p99Ms)} (target ≤ 2×), p99.9 ${ratio(service.p999Ms, bare.p999Ms)} (target ≤ 3×)`,
    `  large ÷ empty history: p99 ${ratio(service.p99Ms, fresh.p99Ms)}, p99.9 ${ratio(service.p999Ms, fresh.p999Ms)} (what the history itself costs)`,
    `  appends that waited over 2.5 / 5 / 25 ms for their flush (the synchronized write, its thread-pool trip included): ${waited(appendWaits.large)} (large history), ${waited(appendWaits.fresh)} (empty); bare Koa has none`,
    `  server CPU meanwhile: ${busy(serverCores.large)} (large history), ${busy(serverCores.fresh)} (empty), ${busy(serverCores.bare)} (bare Koa): a fixed rate is a larger share of a core for the service than for the bare handler, and its queueing grows with that share`,
  ];
}
