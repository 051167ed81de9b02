// The lock on a full disk: a release that cannot be written keeps the holder's generation (the
// highest is never removed; the next start takes over a holder that has gone), and a lock that
// cannot be written leaves no temporary file behind (each failed start left an empty one).
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { lockDir } from '../../../src/log/file/lock.js';
import { rejection } from '../../helpers/async.js';
import { fillDisk, mountSmallDisk, withSmallDisks, type SmallDisk } from '../../helpers/small-disk.js';

withSmallDisks('the lock on a full disk', () => {
  const full = suite<{ disk: SmallDisk }>('the data directory lock on a full disk');
  full.before.each(async (context) => {
    context.disk = await mountSmallDisk(1024 * 1024);
  });
  full.after.each(async ({ disk }) => {
    await disk.unmount();
  });

  full(
    'a release it cannot write keeps the generation; a lock it cannot write leaves no file; both work once space is freed',
    async ({ disk }) => {
      const dir = join(disk.dir, 'data');
      await mkdir(dir);
      const held = await lockDir(dir);
      const filler = join(disk.dir, 'filler');
      await fillDisk(filler);
      await held.release();
      assert.equal(await readdir(dir), ['LOCK.1'], 'the generation stays; no temporary file');
      const failed = await rejection(lockDir(dir, { reclaimOwn: true }));
      assert.match(String((failed as NodeJS.ErrnoException).code), 'ENOSPC');
      assert.match((failed as Error).message, `cannot lock data directory ${dir}: its file system is full`);
      assert.equal(await readdir(dir), ['LOCK.1'], 'a failed lock leaves no temporary file');
      await rm(filler);
      const again = await lockDir(dir, { reclaimOwn: true });
      assert.equal(await readdir(dir), ['LOCK.2']);
      await again.release();
      assert.equal(await readdir(dir), ['LOCK.3']);
    },
  );

  full.run();
});
