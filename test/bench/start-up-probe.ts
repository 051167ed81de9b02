// What `make bench-start` measures of one history, each through a public entry point in a child
// process: `reports replay` and `reports snapshot` (the CLI) to their exit, and the server from
// spawn to its first /readyz 200 with its RSS and its heap after GC (gc-probe.ts) once ready; for
// each, the CPU seconds it took too (cpu-probe.ts, /proc), which the machine's other loads move less.
// This checkout's build unless given another's (a BENCH_BASELINE build, baseline-build.ts).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { baseEnv, startServerProcess, type ServerProcess } from './server-process.js';

const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const SERVICE_MAIN = fileURLToPath(new URL('../../src/main.js', import.meta.url));
const GC_PROBE = new URL('./gc-probe.js', import.meta.url).href;
const CPU_PROBE = new URL('./cpu-probe.js', import.meta.url).href;
/** USER_HZ: /proc counts clock ticks, 100 a second on every Linux build in use. */
const TICKS_PER_SECOND = 100;

export interface CliRun {
  readonly stdout: string;
  readonly seconds: number;
  /** CPU seconds of the whole process, every thread. */
  readonly cpuSeconds: number;
}

export interface Started {
  readonly readySeconds: number;
  /** CPU seconds of the server by the time it was ready, every thread. */
  readonly cpuSeconds: number;
  readonly rss: number;
  /** heapUsed + external after two full GCs. */
  readonly heapUsed: number;
}

export interface StartUpProbe {
  /** Runs the CLI to its end; its stdout, and the wall time from spawn to exit. */
  runCli(args: readonly string[], dataDir: string): Promise<CliRun>;
  /** Starts the server on `dataDir`, waits for /readyz 200, reads its RSS and heap, stops it. */
  startAndProbe(dataDir: string): Promise<Started>;
  /** Kills the server being measured, if any (for exit handlers, where nothing can be awaited). */
  killNow(): void;
}

export interface ProbeOptions {
  /** A scratch directory for the heap probe's file. */
  readonly root: string;
  readonly token: string;
  /** Events of the largest history: how long a start may take. */
  readonly events: number;
  /** The build to run (its CLI and its server): this checkout's unless set. */
  readonly build?: { readonly cliScript: string; readonly mainScript: string };
}

/** User + system CPU seconds of a live process: fields 14 and 15 of /proc/<pid>/stat. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((candidate) => candidate.startsWith('VmRSS:'));
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

export function createStartUpProbe({
  root,
  token,
  events,
  build = { cliScript: CLI, mainScript: SERVICE_MAIN },
}: ProbeOptions): StartUpProbe {
  let running: ServerProcess | undefined;
  const env = (dataDir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
    ...baseEnv(),
    REPORTS_DATA_DIR: dataDir,
    REPORTS_TOKENS: token,
    REPORTS_SNAPSHOT_EVERY: '0',
    LOG_LEVEL: 'warn',
    ...extra,
  });

  const runCli = (args: readonly string[], dataDir: string): Promise<CliRun> => {
    const cpuFile = join(root, 'cpu.txt');
    rmSync(cpuFile, { force: true });
    const started = performance.now();
    const child = spawn(process.execPath, ['--import', CPU_PROBE, build.cliScript, ...args], {
      env: env(dataDir, { BENCH_CPU_FILE: cpuFile }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
    return new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code) => {
        if (code === 0)
          resolve({
            stdout,
            seconds: (performance.now() - started) / 1000,
            cpuSeconds: Number(readFileSync(cpuFile, 'utf8')),
          });
        else reject(new Error(`reports ${args.join(' ')} exited ${code}: ${stderr.trim()}`));
      });
    });
  };

  const startAndProbe = async (dataDir: string): Promise<Started> => {
    const heapFile = join(root, 'heap.json');
    const server = await startServerProcess({
      script: build.mainScript,
      env: env(dataDir, { BENCH_HEAP_FILE: heapFile }),
      nodeArgs: ['--expose-gc', '--import', GC_PROBE],
      readyPath: '/readyz',
      startTimeoutMs: 60_000 + events / 50,
      pollMs: 10,
    });
    running = server;
    try {
      const cpu = cpuSeconds(server.pid);
      const rss = rssBytes(server.pid);
      return {
        readySeconds: server.upAfterMs / 1000,
        cpuSeconds: cpu,
        rss,
        heapUsed: await heapUsedAfterGc(server.pid, heapFile),
      };
    } finally {
      await server.stop();
      running = undefined;
    }
  };

  return { runCli, startAndProbe, killNow: () => running?.killNow() };
}
