// Snapshots take no space the log needs: one that would leave the file system less than the
// reserve is not written, one that fails leaves no file behind, and the temporary files of writers
// that are gone are removed. On a tmpfs of a few MiB (test/helpers/small-disk.ts).
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { removeStaleTemporaries, SnapshotSpaceError } from '../../src/snapshot/snapshot-space.js';
import { writeSnapshot } from '../../src/snapshot/snapshot-store.js';
import { rejection } from '../helpers/async.js';
import { makeZombie } from '../helpers/unreaped.js';
import { memoryLogger, tempDir } from '../helpers/server.js';
import { mountSmallDisk, withSmallDisks, type SmallDisk } from '../helpers/small-disk.js';
import { testSnapshot } from '../helpers/snapshots.js';

const MiB = 1024 * 1024;

/** A snapshot whose file is about `bytes` long (one report with a one-byte-a-character name). */
function snapshotOf(bytes: number) {
  return testSnapshot({
    log: 'file:events.log#00000000',
    cursor: new Map([[0, 1]]),
    events: 1,
    createdAt: new Date(0).toISOString(),
    reports: new Map([['1', { name: 'x'.repeat(bytes) }]]),
    keys: new Map(),
    anchors: new Map([[0, 'a'.repeat(32)]]),
  });
}

/** A pid no process has: above the largest pid_max Linux allows (2^22). */
const GONE_PID = 4_194_305;
const temporaryOf = (pid: number) => `snapshot-0000000000000001.snap.${pid}.tmp`;

withSmallDisks('snapshot space', () => {
  const space = suite<{ disk: SmallDisk }>('snapshots on a small disk');
  space.before.each(async (context) => {
    context.disk = await mountSmallDisk(4 * MiB);
  });
  space.after.each(async ({ disk }) => {
    await disk.unmount();
  });

  space('are not written when they would leave the log less than the reserve, and leave no file', async ({ disk }) => {
    const error = await rejection(writeSnapshot(disk.dir, snapshotOf(MiB), { reserveBytes: 3.5 * MiB }));
    assert.instance(error, SnapshotSpaceError);
    assert.match(String(error), /kept for the event log/);
    assert.equal(await readdir(disk.dir), []);
    assert.match(
      await writeSnapshot(disk.dir, snapshotOf(MiB), { reserveBytes: 2 * MiB }),
      /snapshot-0000000000000001\.snap$/,
    );
  });

  space('remove their temporary file when the disk fills while they are written', async ({ disk }) => {
    // A reserve below zero passes the check for a snapshot larger than the disk: it stands in for
    // another writer taking the space between the check and the write.
    const error = await rejection(writeSnapshot(disk.dir, snapshotOf(6 * MiB), { reserveBytes: -4 * MiB }));
    assert.is((error as NodeJS.ErrnoException).code, 'ENOSPC');
    assert.equal(await readdir(disk.dir), []);
  });

  space.run();
});

const files = suite<{ dir: string }>('temporary snapshot files');
files.before.each(async (context) => {
  context.dir = await tempDir('reports-snapshot-tmp-');
});
files.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

files('are removed when the rename into place fails', async ({ dir }) => {
  // A non-empty directory where the snapshot goes: the rename fails after the whole file was written.
  await mkdir(join(dir, 'snapshot-0000000000000001.snap', 'in-the-way'), { recursive: true });
  assert.ok(await rejection(writeSnapshot(dir, snapshotOf(1000))));
  assert.equal(await readdir(dir), ['snapshot-0000000000000001.snap']);
});

files(
  "left by writers that are gone (or by an earlier process with this pid) are removed at start; a live writer's stays",
  async ({ dir }) => {
    for (const pid of [GONE_PID, process.pid, process.ppid])
      await writeFile(join(dir, temporaryOf(pid)), Buffer.alloc(1000));
    await writeFile(join(dir, 'snapshot-0000000000000001.snap'), 'kept');
    const { logger, lines } = memoryLogger();
    assert.equal(await removeStaleTemporaries(dir, logger), { files: 2, bytes: 2000 });
    assert.equal((await readdir(dir)).sort(), ['snapshot-0000000000000001.snap', temporaryOf(process.ppid)]);
    assert.ok(lines().some((line) => line['msg'] === 'removed temporary snapshot files left by a writer that stopped'));
  },
);

files('left by a writer that is a zombie (killed, never reaped) are removed at start', async ({ dir }) => {
  const zombie = await makeZombie();
  try {
    await writeFile(join(dir, temporaryOf(zombie.pid)), Buffer.alloc(10));
    assert.equal(await removeStaleTemporaries(dir, memoryLogger().logger), { files: 1, bytes: 10 });
    assert.equal(await readdir(dir), []);
  } finally {
    await zombie.reap();
  }
});

files.run();
