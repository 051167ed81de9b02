// A key write that fails for want of space fails every later write until space is freed; then the
// store cuts keys.db back to its durable slots (what the failed write left in the page cache goes
// with it) and writes on, without a restart. Any other write failure still needs a restart.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { openFileKeyStore } from '../../src/keys/file-key-store.js';
import { KeyStoreUnavailableError } from '../../src/keys/key-store-errors.js';
import { rejection, until } from '../helpers/async.js';
import { memoryLogger } from '../helpers/server.js';
import { fillDisk, mountSmallDisk, withSmallDisks, type SmallDisk } from '../helpers/small-disk.js';

const digestOf = (text: string) => createHash('sha256').update(text).digest();

withSmallDisks('key store on a full disk', () => {
  const full = suite<{ disk: SmallDisk }>('the key store on a full disk');
  full.before.each(async (context) => {
    // Room to free beyond the store's resumption threshold (space-watch.ts RESUME_FREE_BYTES).
    context.disk = await mountSmallDisk(4 * 1024 * 1024);
  });
  full.after.each(async ({ disk }) => {
    await disk.unmount();
  });

  full(
    'a put that fails for want of space fails every later write until space is freed, then writes go on without a reopen',
    async ({ disk }) => {
      const dir = join(disk.dir, 'data');
      const { logger, lines } = memoryLogger();
      const keys = await openFileKeyStore({ dir, logger, create: true });
      const first = keys.mint(digestOf('first'));
      await keys.put([first]);
      const filler = join(disk.dir, 'filler');
      await fillDisk(filler);
      // More slots than the file's first page holds: the write needs a page the disk no longer has.
      const many = Array.from({ length: 100 }, (_, i) => keys.mint(digestOf(`many ${i}`)));
      const failed = await rejection(keys.put(many));
      assert.instance(failed, KeyStoreUnavailableError);
      assert.match(
        (failed as Error).message,
        `the disk of the key store ${join(dir, 'keys.db')} is full: writes are refused until space is freed, then resume by themselves`,
      );
      assert.is(((failed as Error).cause as NodeJS.ErrnoException).code, 'ENOSPC');
      assert.is(keys.slots, 1, 'nothing of the failed put counts as written');
      // Even a write that would fit now is refused while the disk is full.
      assert.is(await rejection(keys.destroy([first.id])), failed);
      assert.is(await rejection(keys.put([keys.mint(digestOf('later'))])), failed);
      assert.ok((await keys.get(first.id))?.secret.equals(first.secret), 'reads go on');

      // Space freed: the store cuts keys.db back to its durable slots and takes writes again by itself.
      await rm(filler);
      const next = keys.mint(digestOf('next'));
      await until(
        () =>
          keys.put([next]).then(
            () => true,
            () => false,
          ),
        'a put after space was freed',
        { timeoutMs: 10_000, everyMs: 100 },
      );
      assert.ok(lines().some((line) => line['msg'] === 'the key store takes writes again: space was freed'));
      await keys.destroy([first.id]);
      assert.is(await keys.get(first.id), undefined);
      await keys.close();

      const reopened = await openFileKeyStore({ dir, logger: memoryLogger().logger });
      assert.is(await reopened.get(first.id), undefined, 'the destroy made after the resumption is durable');
      assert.ok(
        (await reopened.get(next.id))?.secret.equals(next.secret),
        'the put made after the resumption is durable',
      );
      // The failed put's slots, between the two, were written reserved: never a key, never damage.
      assert.equal(await reopened.verify(), []);
      await reopened.close();
    },
  );

  full.run();
});
