// Who wrote a lock, and whether that process still runs. A pid alone is not enough: pids are
// reused (a container's only process is always pid 1, so after an OOM kill the new process finds
// its own pid in the lock). The writer is named by pid, the process's start time (field 22 of
// /proc/<pid>/stat, in clock ticks since boot) and the boot id; all three must match.
import { readFile } from 'node:fs/promises';

export interface LockOwner {
  readonly pid: number;
  /** Absent where /proc is not available: then only the pid is compared. */
  readonly startTime?: string;
  readonly bootId?: string;
}

async function readText(path: string): Promise<string | undefined> {
  return readFile(path, 'utf8').then((text) => text.trim(), () => undefined);
}

/** Field 22 of /proc/<pid>/stat; the command name (field 2) may hold spaces and parentheses. */
export function startTimeOf(stat: string): string | undefined {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19];
}

export async function processStartTime(pid: number): Promise<string | undefined> {
  const stat = await readText(`/proc/${pid}/stat`);
  return stat === undefined ? undefined : startTimeOf(stat);
}

export async function currentOwner(): Promise<LockOwner> {
  const [startTime, bootId] = await Promise.all([processStartTime(process.pid), readText('/proc/sys/kernel/random/boot_id')]);
  return { pid: process.pid, ...(startTime === undefined ? {} : { startTime }), ...(bootId === undefined ? {} : { bootId }) };
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

/** Whether the process that wrote the lock still runs (not merely a process with its pid). */
export async function ownerAlive(owner: LockOwner, me: LockOwner): Promise<boolean> {
  if (!Number.isInteger(owner.pid) || owner.pid <= 0) return false;
  if (owner.bootId !== undefined && me.bootId !== undefined && owner.bootId !== me.bootId) return false;
  if (!pidExists(owner.pid)) return false;
  if (owner.startTime === undefined) return owner.pid !== me.pid || me.startTime === undefined;
  const startTime = owner.pid === me.pid ? me.startTime : await processStartTime(owner.pid);
  return startTime === undefined || startTime === owner.startTime;
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
