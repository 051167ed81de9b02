// A small file system of its own for tests of a full disk: a tmpfs mounted on a temporary
// directory (the tests run as root in CI and on the development machine). Where mounting is
// impossible the suites are left out with a loud message; in CI that is a failure, never a pass.
import { execFile, execFileSync } from 'node:child_process';
import { open, rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import { registerWhere, triedOnce } from './mount-probe.js';
import { tempDir } from './server.js';

const run = promisify(execFile);

export interface SmallDisk {
  /** The mount point: a directory on a file system of the size asked for. */
  readonly dir: string;
  unmount(): Promise<void>;
}

/** Whether this process may mount a tmpfs (tried once, on a throw-away directory). */
function canMount(): boolean {
  return triedOnce('reports-mount-probe-', (probe) => {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe], { stdio: 'ignore' });
    execFileSync('umount', [probe], { stdio: 'ignore' });
  });
}

/** Calls `register` (which defines and runs uvu suites) only where a small disk can be mounted. */
export function withSmallDisks(what: string, register: () => void): void {
  registerWhere(
    canMount(),
    { what: `full-disk (${what})`, cannot: 'cannot mount a tmpfs (not root?)', need: 'run the tests as root' },
    register,
  );
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
        const ok = await file.write(block, 0, size, written).then(
          ({ bytesWritten }) => bytesWritten,
          (error: NodeJS.ErrnoException) => {
            if (error.code === 'ENOSPC') return 0;
            throw error;
          },
        );
        written += ok;
        if (ok < size) break;
      }
    }
  } finally {
    await file.close();
  }
  return written;
}
