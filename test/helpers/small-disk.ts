// A small file system of its own for tests of a full disk: a tmpfs mounted on a temporary
// directory (the tests run as root in CI and on the development machine). Where mounting is
// impossible the suites are left out with a loud message; in CI that is a failure, never a pass.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { tempDir } from './server.js';

const run = promisify(execFile);

export interface SmallDisk {
  /** The mount point: a directory on a file system of the size asked for. */
  readonly dir: string;
  unmount(): Promise<void>;
}

/** Whether this process may mount a tmpfs (tried once, on a throw-away directory). */
function canMount(): boolean {
  const probe = mkdtempSync(join(tmpdir(), 'reports-mount-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe], { stdio: 'ignore' });
    execFileSync('umount', [probe], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

/** Calls `register` (which defines and runs uvu suites) only where a small disk can be mounted. */
export function withSmallDisks(what: string, register: () => void): void {
  if (canMount()) return register();
  if (process.env['CI'] === 'true') throw new Error(`cannot mount a tmpfs in CI: the full-disk suites (${what}) are mandatory; run the tests as root`);
  process.stderr.write(`\n!!! cannot mount a tmpfs (not root?): the full-disk suites (${what}) are NOT RUN. !!!\n\n`);
}

export async function mountSmallDisk(sizeBytes: number): Promise<SmallDisk> {
  const dir = await tempDir('reports-small-disk-');
  await run('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes},mode=0700`, 'tmpfs', dir]);
  return {
    dir,
    async unmount() {
      await run('umount', [dir]);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Writes `path` until the file system is full (ENOSPC), a MiB and then a page at a time; returns the bytes written. */
export async function fillDisk(path: string): Promise<number> {
  const file = await open(path, 'w');
  let written = 0;
  try {
    for (const size of [1024 * 1024, 4096]) {
      const block = Buffer.alloc(size, 0x55);
      for (;;) {
        const ok = await file.write(block, 0, size, written).then(({ bytesWritten }) => bytesWritten, (error: NodeJS.ErrnoException) => {
          if (error.code === 'ENOSPC') return 0;
          throw error;
        });
        written += ok;
        if (ok < size) break;
      }
    }
  } finally {
    await file.close();
  }
  return written;
}
