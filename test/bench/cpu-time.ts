// CPU seconds from /proc (Linux; undefined elsewhere): of one process, and of the whole machine, so
// the report can show how much of the two cores something other than the bench was using.
import { readdirSync, readFileSync } from 'node:fs';

/** USER_HZ: /proc counts clock ticks, 100 a second on every Linux build in use. */
const TICKS_PER_SECOND = 100;

/** User + system CPU seconds of a process: fields 14 and 15 of /proc/<pid>/stat. */
function processCpuSeconds(pid: number): number | undefined {
  const stat = readProc(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** User + nice + system CPU seconds of all processes on the machine, from the `cpu` line of /proc/stat. */
function machineCpuSeconds(): number | undefined {
  const line = readProc('/proc/stat')
    ?.split('\n')
    .find((candidate) => candidate.startsWith('cpu '));
  if (line === undefined) return undefined;
  const [user = 0, nice = 0, system = 0] = line.trim().split(/\s+/).slice(1).map(Number);
  return (user + nice + system) / TICKS_PER_SECOND;
}

function readProc(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

export interface CoresUsed {
  /** The server process; undefined without /proc. */
  readonly server: number | undefined;
  /** This process: the load generator. */
  readonly loadgen: number;
  /** Everything else on the machine; undefined without /proc. */
  readonly other: number | undefined;
}

/** The pids of `parent`'s direct children (PostgreSQL's backends are children of its postmaster). */
export function childPids(parent: number): number[] {
  const pids: number[] = [];
  for (const entry of safeReaddir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readProc(`/proc/${entry}/stat`);
    if (stat !== undefined && Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent)
      pids.push(Number(entry));
  }
  return pids;
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** CPU seconds of a set of processes, per pid, so processes that come and go can be matched up. */
function cpuByPid(pids: readonly number[]): Map<number, number> {
  const seconds = new Map<number, number>();
  for (const pid of pids) {
    const used = processCpuSeconds(pid);
    if (used !== undefined) seconds.set(pid, used);
  }
  return seconds;
}

/**
 * Starts counting CPU time; the function returned gives the cores used since (CPU seconds ÷ wall
 * seconds). The server is `serverPid` plus whatever `helperPids` lists at the start and at the end
 * (a database's processes); a helper seen only at the end counts from zero.
 */
export function startCpuClock(serverPid: number, helperPids: () => number[] = () => []): () => CoresUsed {
  const helpers = cpuByPid(helperPids());
  const server = processCpuSeconds(serverPid);
  const machine = machineCpuSeconds();
  const loadgen = process.cpuUsage();
  const startedMs = performance.now();
  return () => {
    const elapsedS = (performance.now() - startedMs) / 1000;
    const since = (before: number | undefined, now: number | undefined) =>
      before === undefined || now === undefined ? undefined : (now - before) / elapsedS;
    const loadgenUsed = process.cpuUsage(loadgen);
    const loadgenCores = (loadgenUsed.user + loadgenUsed.system) / 1e6 / elapsedS;
    const helpersNow = cpuByPid(helperPids());
    let helperSeconds = 0;
    for (const [pid, used] of helpersNow) helperSeconds += used - (helpers.get(pid) ?? 0);
    const own = since(server, processCpuSeconds(serverPid));
    const serverCores = own === undefined ? undefined : own + helperSeconds / elapsedS;
    const machineCores = since(machine, machineCpuSeconds());
    return {
      server: serverCores,
      loadgen: loadgenCores,
      other:
        machineCores === undefined || serverCores === undefined
          ? undefined
          : Math.max(0, machineCores - serverCores - loadgenCores),
    };
  };
}
