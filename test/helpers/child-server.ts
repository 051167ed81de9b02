// Runs the real server (`node dist/src/main.js`) as a child process, for tests that need what only a
// process has: signals, exit codes, a crash in the middle of a write. The child's environment holds
// only what the test gives (plus PORT=0, HOST, LOG_LEVEL=info, a known token): no variable of the
// service is inherited from the shell running the tests, so KAFKA_BROKERS can never leak in.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { CONFIG_VARIABLES, type Env } from '../../src/config.js';
import { withTimeout } from './async.js';
import { requestTo, type TestRequest } from './request.js';
import { TEST_TOKEN } from './token.js';

/** The server's entry point (dist/src/main.js). */
export const MAIN = fileURLToPath(new URL('../../src/main.js', import.meta.url));
const START_TIMEOUT_MS = 15_000;

export type LogLine = Record<string, unknown>;

export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface ChildServer {
  readonly url: string;
  readonly pid: number;
  /** Every JSON line the child wrote to stdout so far. */
  lines(): readonly LogLine[];
  stderr(): string;
  /** Resolves with the first stdout line (already written or still to come) that matches. */
  waitForLine(matches: (line: LogLine) => boolean, what: string, timeoutMs?: number): Promise<LogLine>;
  /** Polls GET /readyz until it answers 200. */
  waitReady(timeoutMs?: number): Promise<void>;
  readonly request: TestRequest;
  kill(signal: NodeJS.Signals): void;
  waitExit(timeoutMs?: number): Promise<ChildExit>;
  /** Whether the process has exited. */
  exited(): boolean;
}

/** The environment a child server runs with: the service's variables from `env` only. */
export function childEnv(env: Env): NodeJS.ProcessEnv {
  const ours = new Set<string>(CONFIG_VARIABLES);
  const inherited = Object.entries(process.env).filter(([name]) => !ours.has(name) && !name.startsWith('KAFKA_'));
  return {
    ...Object.fromEntries(inherited),
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    REPORTS_TOKENS: TEST_TOKEN,
    ...env,
  };
}

function parse(line: string): LogLine | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null ? (value as LogLine) : undefined;
  } catch {
    return undefined;
  }
}

export interface FinishedProcess extends ChildExit {
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `[prefix...] node dist/src/main.js` with `env` (the server's own only, as above) until it
 * exits, for starts that are to fail; `prefix` runs it under another program (`unshare`).
 * `onStarted` gets the child as soon as it runs (to signal it).
 */
export function runServerProcess(
  env: Env,
  {
    prefix = [],
    timeoutMs = START_TIMEOUT_MS,
    onStarted,
  }: { prefix?: readonly string[]; timeoutMs?: number; onStarted?: (child: ChildProcess) => void } = {},
): Promise<FinishedProcess> {
  const [command = process.execPath, ...args] = [...prefix, process.execPath, MAIN];
  const child = spawn(command, args, { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  onStarted?.(child);
  const exit = new Promise<FinishedProcess>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  // A process that does not exit in time is named with what it printed: where its start or stop stood.
  const last = (text: string) => text.trim().split('\n').slice(-8).join('\n');
  return withTimeout(exit, timeoutMs, 'the server process to exit')
    .catch((error: unknown) => {
      throw new Error(
        `${error instanceof Error ? error.message : String(error)}; its last lines:\n${last(stdout)}\nstderr:\n${last(stderr)}`,
      );
    })
    .finally(() => child.kill('SIGKILL'));
}

/**
 * Starts `node [nodeArgs] dist/src/main.js` with `env` and resolves once it logged the address it
 * listens on. `nodeArgs` are Node's own options, such as `--import` of a set-up file; `user` runs it
 * as another user (the tests must run as root).
 */
export interface ChildServerOptions {
  readonly nodeArgs?: readonly string[];
  readonly user?: { uid: number; gid: number };
  /** How long the start may take until the server logs "listening" (15 s unless given). */
  readonly startTimeoutMs?: number;
  /** Told of every line as it comes, from the first (before the start is done). */
  readonly onLine?: (line: LogLine) => void;
}

export async function startChildServer(
  env: Env,
  { nodeArgs = [], user, startTimeoutMs = START_TIMEOUT_MS, onLine }: ChildServerOptions = {},
): Promise<ChildServer> {
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, MAIN], {
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
    ...user,
  });
  const lines: LogLine[] = [];
  const watchers = new Set<(line: LogLine) => void>();
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  createInterface({ input: child.stdout! }).on('line', (text) => {
    const line = parse(text) ?? { msg: text };
    lines.push(line);
    onLine?.(line);
    for (const watcher of [...watchers]) watcher(line);
  });
  // 'close': once the process exited and its output was all read, so what it printed last is in `lines`.
  const exit = new Promise<ChildExit>((resolve) => {
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  let hasExited = false;
  void exit.then(() => {
    hasExited = true;
  });

  const waitForLine = (
    matches: (line: LogLine) => boolean,
    what: string,
    timeoutMs = START_TIMEOUT_MS,
  ): Promise<LogLine> => {
    const found = lines.find(matches);
    if (found) return Promise.resolve(found);
    let watcher: (line: LogLine) => void = () => undefined;
    const seen = new Promise<LogLine>((resolve, reject) => {
      watcher = (line) => {
        if (matches(line)) resolve(line);
      };
      watchers.add(watcher);
      const last = () =>
        lines
          .slice(-5)
          .map((line) => JSON.stringify(line))
          .join('\n');
      void exit.then(({ code, signal }) =>
        reject(
          new Error(
            `the server exited (${code ?? signal}) before logging ${what}; stderr: ${stderr.trim()}; its last lines:\n${last()}`,
          ),
        ),
      );
    });
    return withTimeout(seen, timeoutMs, `the server to log ${what}`).finally(() => watchers.delete(watcher));
  };

  let listening: LogLine;
  try {
    listening = await waitForLine((line) => line['msg'] === 'listening', '"listening"', startTimeoutMs);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  const url = String(listening['url']);

  const request = requestTo(url);

  return {
    url,
    pid: child.pid as number,
    lines: () => lines,
    stderr: () => stderr,
    waitForLine,
    async waitReady(timeoutMs = START_TIMEOUT_MS) {
      const poll = async () => {
        for (;;) {
          if (hasExited) throw new Error(`the server exited before it was ready; stderr: ${stderr.trim()}`);
          const status = await request('/readyz', { token: null }).then(
            (r) => r.status,
            () => 0,
          );
          if (status === 200) return;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      };
      await withTimeout(poll(), timeoutMs, 'GET /readyz to answer 200');
    },
    request,
    kill(signal) {
      if (!hasExited) child.kill(signal);
    },
    waitExit: (timeoutMs = START_TIMEOUT_MS) => withTimeout(exit, timeoutMs, 'the server process to exit'),
    exited: () => hasExited,
  };
}
