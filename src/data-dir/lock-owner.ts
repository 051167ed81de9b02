// Who wrote a lock, and whether that process still runs. A pid alone is not enough: pids are
// reused (a container's only process is always pid 1, so after an OOM kill the new process finds
// its own pid in the lock). The writer is named by pid, the process's start time (field 22 of
// /proc/<pid>/stat, in clock ticks since boot) and the boot id; all three must match. A pid that
// still answers may also be a zombie (state Z: killed, but its parent never reaped it, as under a
// pid 1 that reaps nothing): it holds no file and no port and never runs again, so it is dead.
import { readFile } from 'node:fs/promises';

export interface LockOwner {
  readonly pid: number;
  /** Absent where /proc is not available: then only the pid is compared. */
  readonly startTime?: string;
  readonly bootId?: string;
}

async function readText(path: string): Promise<string | undefined> {
  return readFile(path, 'utf8').then(
    (text) => text.trim(),
    () => undefined,
  );
}

/** What /proc/<pid>/stat says of a process: its state (field 3) and start time (field 22). */
export interface ProcessStat {
  readonly state: string | undefined;
  readonly startTime: string | undefined;
}

/** Parses /proc/<pid>/stat; the command name (field 2) may hold spaces and parentheses. */
export function parseStat(stat: string): ProcessStat {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0], startTime: fields[19] };
}

/** Undefined where /proc is not available, or the process is gone. */
async function processStat(pid: number): Promise<ProcessStat | undefined> {
  const stat = await readText(`/proc/${pid}/stat`);
  return stat === undefined ? undefined : parseStat(stat);
}

/** Z (zombie) and X (dead, being removed): the process has exited, whatever its pid still answers. */
const EXITED_STATES = new Set(['Z', 'X', 'x']);

export async function currentOwner(): Promise<LockOwner> {
  const [stat, bootId] = await Promise.all([processStat(process.pid), readText('/proc/sys/kernel/random/boot_id')]);
  const startTime = stat?.startTime;
  return {
    pid: process.pid,
    ...(startTime === undefined ? {} : { startTime }),
    ...(bootId === undefined ? {} : { bootId }),
  };
}

function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether the process that wrote the lock still runs (not merely a process with its pid, nor a
 * zombie). Every "is its writer alive" question (locks, stale temporary files of snapshots,
 * backups and restores) comes here, so all get one answer.
 */
export async function ownerAlive(owner: LockOwner, me: LockOwner): Promise<boolean> {
  if (!Number.isInteger(owner.pid) || owner.pid <= 0) return false;
  if (owner.bootId !== undefined && me.bootId !== undefined && owner.bootId !== me.bootId) return false;
  // This very process (a container's process is always pid 1): the lock is another's if its start time differs.
  if (owner.pid === me.pid)
    return me.startTime === undefined || (owner.startTime !== undefined && owner.startTime === me.startTime);
  if (!pidExists(owner.pid)) return false;
  const stat = await processStat(owner.pid);
  // No /proc (another platform): the pid answering is all there is to go by.
  if (stat === undefined) return true;
  if (stat.state !== undefined && EXITED_STATES.has(stat.state)) return false;
  return owner.startTime === undefined || stat.startTime === undefined || stat.startTime === owner.startTime;
}

export function parseOwner(text: string): LockOwner | undefined {
  try {
    const parsed = JSON.parse(text) as Partial<Record<keyof LockOwner, unknown>> | null;
    if (typeof parsed?.pid !== 'number') return undefined;
    return {
      pid: parsed.pid,
      ...(typeof parsed.startTime === 'string' ? { startTime: parsed.startTime } : {}),
      ...(typeof parsed.bootId === 'string' ? { bootId: parsed.bootId } : {}),
    };
  } catch {
    return undefined;
  }
}

/** What holds a data directory: the server, or a `reports` tool by its command. */
export type LockHolder = { readonly kind: 'server' } | { readonly kind: 'tool'; readonly command: string };

/**
 * What the process `pid` is, from its command line (/proc/<pid>/cmdline): the server (`reports
 * serve`, or the server's own entry point) or another `reports` command. Undefined when it cannot
 * be told (no /proc, the process gone, another program), so a refusal names it as it can.
 */
export async function lockHolder(pid: number): Promise<LockHolder | undefined> {
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'latin1').catch(() => undefined);
  return cmdline === undefined ? undefined : holderOfArgs(cmdline.split('\0').filter((arg) => arg !== ''));
}

/** The server's entry point, and the `reports` command's (its source, or the npm bin). */
const SERVER_SCRIPT = /(^|\/)src\/main\.js$/;
const CLI_SCRIPT = /(^|\/)(cli\/main\.js|reports)$/;

/** `lockHolder` of a command line (its arguments, the program first). */
export function holderOfArgs(args: readonly string[]): LockHolder | undefined {
  const script = args.findIndex((arg) => SERVER_SCRIPT.test(arg) || CLI_SCRIPT.test(arg));
  if (script < 0) return undefined;
  if (SERVER_SCRIPT.test(args[script] as string)) return { kind: 'server' };
  const command = args.slice(script + 1).find((arg) => !arg.startsWith('-'));
  if (command === undefined) return undefined;
  return command === 'serve' ? { kind: 'server' } : { kind: 'tool', command: `reports ${command}` };
}

/** How a refusal names the holder of a data directory. */
export function describeHolder(pid: number, holder: LockHolder | undefined): string {
  if (holder?.kind === 'server') return `a server (process ${pid})`;
  if (holder?.kind === 'tool') return `\`${holder.command}\` (process ${pid})`;
  return `process ${pid} (a server or a reports tool)`;
}
