// One server under test in a child process of its own, so it never shares an event loop with the
// load generator. Its stdout goes to /dev/null (request logs must cost the server what they cost
// in production, not the bench process reading them); stderr is kept to explain a failed start.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { CONFIG_VARIABLES } from '../../src/config.js';

const START_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 10_000;

export interface ServerProcessOptions {
  /** The compiled entry point to run with `node`. */
  readonly script: string;
  readonly env: NodeJS.ProcessEnv;
  readonly nodeArgs?: readonly string[];
  /** Polled until it answers 200; without it, any HTTP answer on `/` means the server is up. */
  readonly readyPath?: string;
  /** How long the start may take (20 s unless given: a large history takes longer). */
  readonly startTimeoutMs?: number;
  /** Between two polls of readyPath (50 ms unless given). */
  readonly pollMs?: number;
}

export interface ServerProcess {
  readonly url: string;
  readonly pid: number;
  /** From the spawn to the first 200 of readyPath (or first answer), in milliseconds; at most pollMs late. */
  readonly upAfterMs: number;
  /** SIGTERM (a clean stop, which writes a CPU profile), then SIGKILL if it has not exited within STOP_TIMEOUT_MS. */
  stop(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
  /** For exit handlers, where nothing can be awaited. */
  killNow(): void;
}

/** The shell's environment without any variable the service reads, so nothing leaks in. */
export function baseEnv(): NodeJS.ProcessEnv {
  const ours = new Set<string>(CONFIG_VARIABLES);
  return Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !ours.has(name) && !name.startsWith('KAFKA_')),
  );
}

/** A port that was free a moment ago: the server has to be told its port, because its stdout is not read. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

export async function startServerProcess({
  script,
  env,
  nodeArgs = [],
  readyPath,
  startTimeoutMs = START_TIMEOUT_MS,
  pollMs = 50,
}: ServerProcessOptions): Promise<ServerProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const spawnedMs = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, script], {
    env: { ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let hasExited = false;
  void exited.then(() => {
    hasExited = true;
  });
  const pid = child.pid ?? 0;

  const stop = async (signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> => {
    if (hasExited) return;
    child.kill(signal);
    const force = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(force);
  };

  try {
    await waitUp({ url, readyPath, startTimeoutMs, pollMs }, () =>
      hasExited ? `the server exited before it was up; stderr: ${stderr.trim()}` : undefined,
    );
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    throw error;
  }
  return {
    url,
    pid,
    upAfterMs: performance.now() - spawnedMs,
    stop,
    killNow: () => {
      if (!hasExited) child.kill('SIGKILL');
    },
  };
}

interface WaitOptions {
  readonly url: string;
  readonly readyPath: string | undefined;
  readonly startTimeoutMs: number;
  readonly pollMs: number;
}

async function waitUp(
  { url, readyPath, startTimeoutMs, pollMs }: WaitOptions,
  failure: () => string | undefined,
): Promise<void> {
  const giveUpAt = Date.now() + startTimeoutMs;
  for (;;) {
    const reason = failure();
    if (reason !== undefined) throw new Error(reason);
    const status = await fetch(`${url}${readyPath ?? '/'}`).then(
      (response) => response.status,
      () => 0,
    );
    if (readyPath === undefined ? status !== 0 : status === 200) return;
    if (Date.now() > giveUpAt)
      throw new Error(
        `${url}${readyPath ?? '/'} did not answer${readyPath === undefined ? '' : ' 200'} within ${startTimeoutMs} ms`,
      );
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
