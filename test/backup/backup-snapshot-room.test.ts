// `reports backup` to a file system with room for the log and its keys but not for the snapshot
// too: the snapshot (a shortcut) is left out with a warning and the backup is taken. It failed
// outright: the snapshot's check counted its own bytes only, then keys.db did not fit after it.
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { writeHistory } from '../bench/history.js';
import { reports } from '../helpers/cli.js';
import { mountSmallDisk, withSmallDisks } from '../helpers/small-disk.js';
import { tempDir } from '../helpers/server.js';

withSmallDisks('a backup without room for its snapshot', () => {
  const room = suite<{ dir: string }>('reports backup without room for the snapshot');
  room.before.each(async (context) => {
    context.dir = await tempDir('reports-backup-room-');
  });
  room.after.each(async ({ dir }) => {
    await rm(dir, { recursive: true, force: true });
  });

  room('leaves the snapshot out with a warning and takes the backup, which restores', async ({ dir }) => {
    const dataDir = join(dir, 'data');
    const env = { env: { REPORTS_DATA_DIR: dataDir } };
    await writeHistory(dataDir, { firstId: 1n, reports: 20_000, deleteEven: false });
    assert.is((await reports(['snapshot'], env)).code, 0);
    const size = async (path: string) => (await stat(path)).size;
    const [snapshot] = await readdir(join(dataDir, 'snapshots'));
    const logBytes = await size(join(dataDir, 'events.log'));
    const keysBytes = await size(join(dataDir, 'keys.db'));
    const snapshotBytes = await size(join(dataDir, 'snapshots', snapshot ?? ''));
    // Room for the log, its keys and half the snapshot (and pages for the rest).
    const disk = await mountSmallDisk(logBytes + keysBytes + Math.floor(snapshotBytes / 2) + 256 * 1024);
    try {
      const dest = join(disk.dir, 'backup');
      const taken = await reports(['backup', dest], env);
      assert.is(taken.code, 0, taken.stderr);
      assert.match(taken.stderr, 'left the snapshot out of the backup: there is no room for it');
      assert.equal(await readdir(join(dest, 'snapshots')).catch(() => []), []);
      const restoreInto = join(dir, 'restored');
      const restored = await reports(['restore', dest], { env: { REPORTS_DATA_DIR: restoreInto } });
      assert.is(restored.code, 0, restored.stderr);
    } finally {
      await disk.unmount();
    }
  });

  room.run();
});
