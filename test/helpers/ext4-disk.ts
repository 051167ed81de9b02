// A data directory on an ext4 file system of its own (a loop device over an image file, mounted with
// errors=remount-ro), that a test can make go read-only as a failing disk does: ext4's
// trigger_fs_error (sysfs) reports an error, and the kernel remounts the file system read-only at
// once, open files or not. Writing access comes back only as an operator gives it back: unmount
// (possible once no process holds a file there), e2fsck, mount. Root only; where a loop device or
// ext4 cannot be had the suites are left out with a loud message, and in CI that is a failure.
import { execFile, execFileSync } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { registerWhere, triedOnce } from './mount-probe.js';
import { tempDir } from './server.js';

const run = promisify(execFile);

export interface Ext4Disk {
  /** The mount point. */
  readonly dir: string;
  /** The kernel remounts it read-only, as after a disk error (open files keep failing to write). */
  fail(): Promise<void>;
  /** What an operator does: unmount, check and mount again, writable (nothing may hold a file there). */
  repair(): Promise<void>;
  /** The repair's first half: unmounted, leaving the empty mount point. */
  unmountForRepair(): Promise<void>;
  /** The repair's second half: checked and mounted again. */
  checkAndMount(): Promise<void>;
  unmount(): Promise<void>;
}

async function loopDevice(dir: string): Promise<string> {
  const { stdout } = await run('findmnt', ['-n', '-o', 'SOURCE', dir]);
  return basename(stdout.trim());
}

/** Whether a loop-mounted ext4 that can be made to fail is to be had here (tried once). */
function canFailExt4(): boolean {
  return triedOnce('reports-ext4-probe-', (probe) => {
    const image = join(probe, 'probe.img');
    const mountPoint = join(probe, 'mnt');
    execFileSync('mkdir', [mountPoint]);
    execFileSync('truncate', ['-s', '8M', image]);
    execFileSync('mkfs.ext4', ['-q', '-F', image], { stdio: 'ignore' });
    execFileSync('mount', ['-o', 'loop,errors=remount-ro', image, mountPoint], { stdio: 'ignore' });
    try {
      const device = basename(execFileSync('findmnt', ['-n', '-o', 'SOURCE', mountPoint]).toString().trim());
      execFileSync('test', ['-w', `/sys/fs/ext4/${device}/trigger_fs_error`]);
    } finally {
      execFileSync('umount', [mountPoint], { stdio: 'ignore' });
    }
  });
}

/** Calls `register` (which defines and runs uvu suites) only where such a disk can be had. */
export function withExt4Disks(what: string, register: () => void): void {
  registerWhere(
    canFailExt4(),
    {
      what: `read-only (${what})`,
      cannot: 'cannot mount an ext4 loop device (not root? no e2fsprogs?)',
      need: 'run the tests as root with e2fsprogs installed',
    },
    register,
  );
}

export async function mountExt4Disk(sizeBytes: number): Promise<Ext4Disk> {
  const dir = await tempDir('reports-ext4-');
  const image = `${dir}.img`;
  await run('truncate', ['-s', String(sizeBytes), image]);
  await run('mkfs.ext4', ['-q', '-F', image]);
  const mount = () => run('mount', ['-o', 'loop,errors=remount-ro', image, dir]);
  await mount();
  const disk: Ext4Disk = {
    dir,
    async fail() {
      await writeFile(`/sys/fs/ext4/${await loopDevice(dir)}/trigger_fs_error`, '1');
    },
    async repair() {
      await disk.unmountForRepair();
      await disk.checkAndMount();
    },
    async unmountForRepair() {
      await run('umount', [dir]);
    },
    async checkAndMount() {
      // 1: errors corrected, which is what is expected after the forced error.
      await run('e2fsck', ['-f', '-y', image]).catch((error: { code?: number }) => {
        if (error.code !== 1) throw error;
      });
      await mount();
    },
    async unmount() {
      await run('umount', [dir]).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
      await rm(image, { force: true });
    },
  };
  return disk;
}
