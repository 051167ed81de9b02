// Runs the `reports` command in-process (runCli) with in-memory stdout/stderr, the environment the
// test gives (nothing is inherited from the shell, so KAFKA_BROKERS can never leak in) and an
// AbortSignal standing in for Ctrl-C.
import { spawn } from 'node:child_process';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { Env } from '../../src/config.js';
import { runCli } from '../../src/cli/main.js';
import { withTimeout } from './async.js';
import { childEnv } from './child-server.js';

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliOptions {
  readonly env?: Env;
  /** Pretend stdout is a terminal (progress bars draw only on one). */
  readonly tty?: boolean;
  /** Pretend stderr is a terminal (a generated token is shown only on one). */
  readonly ttyStderr?: boolean;
}

export interface RunningCli {
  /** What the command printed on stdout so far. */
  stdout(): string;
  /** What the command printed on stderr so far. */
  stderr(): string;
  /** Resolves with the stdout lines once `ready` accepts them. */
  waitFor(ready: (lines: string[]) => boolean, what: string, timeoutMs?: number): Promise<string[]>;
  /** Resolves once stdout holds at least `count` lines. */
  waitForLines(count: number, what: string, timeoutMs?: number): Promise<string[]>;
  /** Ctrl-C: aborts the command's signal. */
  interrupt(): void;
  readonly done: Promise<CliResult>;
}

/** A writable that keeps what it is given; `isTTY` as asked. */
class MemoryStream extends Writable {
  text = '';
  private readonly writeListeners = new Set<() => void>();

  constructor(
    readonly isTTY: boolean,
    readonly columns = 100,
  ) {
    super();
  }

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, callback: () => void): void {
    this.text += chunk.toString();
    for (const listener of [...this.writeListeners]) listener();
    callback();
  }

  onWrite(listener: () => void): () => void {
    this.writeListeners.add(listener);
    return () => this.writeListeners.delete(listener);
  }
}

export function lines(text: string): string[] {
  return text.split('\n').filter((line) => line !== '');
}

/** Starts `reports ...argv` and returns at once; for commands that run until interrupted. */
export function startReports(
  argv: readonly string[],
  { env = {}, tty = false, ttyStderr = false }: CliOptions = {},
): RunningCli {
  const stdout = new MemoryStream(tty);
  const stderr = new MemoryStream(ttyStderr);
  const interrupt = new AbortController();
  const done = runCli(argv, { stdout, stderr, env, signal: interrupt.signal }).then((code) => ({
    code,
    stdout: stdout.text,
    stderr: stderr.text,
  }));
  const waitFor: RunningCli['waitFor'] = (ready, what, timeoutMs = 15_000) => {
    const seen = new Promise<string[]>((resolve, reject) => {
      const check = () => {
        const found = lines(stdout.text);
        if (!ready(found)) return false;
        stop();
        resolve(found);
        return true;
      };
      const stop = stdout.onWrite(check);
      if (check()) return;
      done.then((result) => {
        stop();
        reject(
          new Error(
            `reports ${argv.join(' ')} exited (${result.code}) before printing ${what}; stderr: ${result.stderr}`,
          ),
        );
      }, reject);
    });
    return withTimeout(seen, timeoutMs, what);
  };
  return {
    stdout: () => stdout.text,
    stderr: () => stderr.text,
    waitFor,
    waitForLines: (count, what, timeoutMs) => waitFor((found) => found.length >= count, what, timeoutMs),
    interrupt: () => interrupt.abort(),
    done,
  };
}

/** Runs `reports ...argv` to its end. */
export function reports(argv: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  return startReports(argv, options).done;
}

export interface ReplaySummary {
  readonly events: number;
  readonly voidEvents: number;
  readonly invalidRecords: number;
  readonly liveReports: number;
  readonly digest: string;
  readonly position: string;
  readonly seconds: number;
}

/** `reports replay --json [...extra]`, parsed; fails unless it exits 0. */
export async function replaySummary(env: Env, extra: readonly string[] = []): Promise<ReplaySummary> {
  const result = await reports(['replay', '--json', ...extra], { env });
  if (result.code !== 0) throw new Error(`reports replay exited ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout) as ReplaySummary;
}

/** The CLI's entry point (dist/src/cli/main.js). */
export const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

export interface ProcessResult extends CliResult {
  readonly signal: NodeJS.Signals | null;
}

/**
 * Runs `reports ...argv` as a process of its own (the service's variables from `env` only, as a
 * child server's), as `user` when given; for what must not happen in the test process (a command
 * that could hang on a blocked file, or runs as another user). Killed, and a failure, after `timeoutMs`.
 */
export function reportsProcess(
  argv: readonly string[],
  { env = {}, user, timeoutMs = 30_000 }: { env?: Env; user?: { uid: number; gid: number }; timeoutMs?: number } = {},
): Promise<ProcessResult> {
  const child = spawn(process.execPath, [CLI, ...argv], {
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
    ...user,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<ProcessResult>((resolve) =>
    child.once('close', (code, signal) => resolve({ code: code ?? -1, signal, stdout, stderr })),
  );
  return withTimeout(done, timeoutMs, `reports ${argv.join(' ')} to exit`).finally(() => child.kill('SIGKILL'));
}
