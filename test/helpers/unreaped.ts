// Processes whose exit nobody reaps, as under a pid 1 that reaps nothing (a container without an
// init): a Python parent makes itself the child subreaper (prctl PR_SET_CHILD_SUBREAPER), starts the
// command as the leader of a process group of its own, and calls waitpid only when told to. So the
// command, and every orphan of its group, stays a zombie (state Z) once it exits or is killed, until
// `reap()`; nothing is left behind after it.
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { until, withTimeout } from './async.js';

const PARENT_SCRIPT = `
import ctypes, os, sys
if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:
    sys.exit('prctl(PR_SET_CHILD_SUBREAPER) failed')
pid = os.fork()
if pid == 0:
    os.setsid()
    os.execvp(sys.argv[1], sys.argv[1:])
print(pid, flush=True)
sys.stdin.readline()
while True:
    try:
        os.waitpid(-1, 0)
    except ChildProcessError:
        break
`;

export interface Unreaped {
  /** The command's pid, also its process group id. */
  readonly pid: number;
  /** Every line the command wrote to stdout so far. */
  lines(): readonly string[];
  /** Reaps every zombie of the group and ends the parent (kill the group first). */
  reap(): Promise<void>;
}

/** Runs `command` under a parent that never reaps it or its orphans until `reap()`. */
export async function startUnreaped(
  command: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<Unreaped> {
  const parent = spawn('python3', ['-c', PARENT_SCRIPT, ...command], { env, stdio: ['pipe', 'pipe', 'inherit'] });
  const lines: string[] = [];
  const exited = new Promise<void>((resolve) => parent.once('exit', () => resolve()));
  // The parent's own line is the child's pid; the child's lines (JSON, for the server) never look like one.
  let pidLine: string | undefined;
  const firstLine = new Promise<string>((resolve) => {
    createInterface({ input: parent.stdout }).on('line', (line) => {
      if (pidLine === undefined && /^\d+$/.test(line)) resolve((pidLine = line));
      else lines.push(line);
    });
  });
  const pid = Number(
    await withTimeout(
      Promise.race([
        firstLine,
        exited.then(() => Promise.reject(new Error('the non-reaping parent exited before starting its child'))),
      ]),
      10_000,
      'the non-reaping parent to start its child',
    ),
  );
  return {
    pid,
    lines: () => lines,
    async reap() {
      parent.stdin.end('\n');
      await withTimeout(exited, 10_000, 'the non-reaping parent to reap and exit');
    },
  };
}

/** The state letter of /proc/<pid>/stat (R, S, Z, …), or undefined when there is no such process. */
export async function processState(pid: number): Promise<string | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  return stat?.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
}

/** Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot. */
export async function processStartTime(pid: number): Promise<string> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
}

/** Waits until `pid` is a zombie. */
export function untilZombie(pid: number): Promise<void> {
  return until(async () => (await processState(pid)) === 'Z', `process ${pid} to be a zombie`, {
    timeoutMs: 10_000,
    everyMs: 10,
  });
}

/** A zombie to point locks at: `sleep 0` under the non-reaping parent, exited and never reaped. */
export async function makeZombie(): Promise<Unreaped> {
  const zombie = await startUnreaped(['sleep', '0']);
  await untilZombie(zombie.pid);
  return zombie;
}
