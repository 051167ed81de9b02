// A key write that fails (the disk is full) fails every later write: after a failed write the page
// cache and the disk may disagree, so only a restart, which checks the file again, writes on.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { openFileKeyStore } from '../../src/keys/file-key-store.js';
import { KeyStoreUnavailableError } from '../../src/keys/key-store-errors.js';
import { rejection } from '../helpers/async.js';
import { memoryLogger } from '../helpers/server.js';
import { fillDisk, mountSmallDisk, withSmallDisks, type SmallDisk } from '../helpers/small-disk.js';

const digestOf = (text: string) => createHash('sha256').update(text).digest();

withSmallDisks('key store on a full disk', () => {
  const full = suite<{ disk: SmallDisk }>('the key store on a full disk');
  full.before.each(async (context) => {
    context.disk = await mountSmallDisk(1024 * 1024);
  });
  full.after.each(async ({ disk }) => {
    await disk.unmount();
  });

  full('a put that fails to write fails every later put and destroy until a reopen', async ({ disk }) => {
    const dir = join(disk.dir, 'data');
    const keys = await openFileKeyStore({ dir, logger: memoryLogger().logger, create: true });
    const first = keys.mint(digestOf('first'));
    await keys.put([first]);
    const filler = join(disk.dir, 'filler');
    await fillDisk(filler);
    // More slots than the file's first page holds: the write needs a page the disk no longer has.
    const many = Array.from({ length: 100 }, (_, i) => keys.mint(digestOf(`many ${i}`)));
    const failed = await rejection(keys.put(many));
    assert.instance(failed, KeyStoreUnavailableError);
    assert.match((failed as Error).message, `the key store ${join(dir, 'keys.db')} failed to write; restart the service`);
    assert.is(((failed as Error).cause as NodeJS.ErrnoException).code, 'ENOSPC');
    assert.is(keys.slots, 1, 'nothing of the failed put counts as written');
    // Even a write that would fit now is refused.
    assert.is(await rejection(keys.destroy([first.id])), failed);
    assert.is(await rejection(keys.put([keys.mint(digestOf('later'))])), failed);
    assert.ok((await keys.get(first.id))?.secret.equals(first.secret), 'reads go on');
    await keys.close();

    await rm(filler);
    const reopened = await openFileKeyStore({ dir, logger: memoryLogger().logger });
    assert.ok((await reopened.get(first.id))?.secret.equals(first.secret));
    // What the failed put left (whole slots are kept: orphans, never acknowledged) is written on.
    const next = reopened.mint(digestOf('next'));
    await reopened.put([next]);
    await reopened.destroy([first.id]);
    assert.is(await reopened.get(first.id), undefined);
    assert.equal(await reopened.verify(), []);
    await reopened.close();
  });

  full.run();
});
