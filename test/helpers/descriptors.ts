// What the kernel says about this process's open files (Linux's /proc), for tests that check how
// a file was opened rather than trusting the code that opened it.
import { constants, readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** The open flags of descriptor `fd` of this process, from /proc/self/fdinfo (printed in octal). */
function openFlags(fd: number): number {
  const line = readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8')
    .split('\n')
    .find((text) => text.startsWith('flags:'));
  if (line === undefined) throw new Error(`no flags for descriptor ${fd}`);
  return Number.parseInt(line.slice('flags:'.length).trim(), 8);
}

/** Whether writes through `fd` are durable when they return (opened with O_DSYNC, or O_SYNC which includes it). */
export function hasSynchronizedWrites(fd: number): boolean {
  return (openFlags(fd) & constants.O_DSYNC) === constants.O_DSYNC;
}

/** This process's descriptors open on `path` (the file, not a link to it). */
export function descriptorsOf(path: string): number[] {
  return readdirSync('/proc/self/fd')
    .map(Number)
    .filter((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`) === path;
      } catch {
        return false; // closed meanwhile (the descriptor readdir itself used among them)
      }
    });
}
