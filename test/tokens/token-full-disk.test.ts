// A first start on a full disk cannot write its generated token: it fails naming the file, and
// leaves no `token` behind (an empty one stopped every later start until deleted by hand). Once
// space is freed, the next start writes it.
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { resolveTokens } from '../../src/tokens/sources.js';
import { rejection } from '../helpers/async.js';
import { fillDisk, mountSmallDisk, withSmallDisks, type SmallDisk } from '../helpers/small-disk.js';

withSmallDisks('generated token on a full disk', () => {
  const full = suite<{ disk: SmallDisk }>('the generated token on a full disk');
  full.before.each(async (context) => {
    context.disk = await mountSmallDisk(1024 * 1024);
  });
  full.after.each(async ({ disk }) => {
    await disk.unmount();
  });

  full(
    'fails naming the file, leaves no token file, and the start after space is freed writes it',
    async ({ disk }) => {
      const dataDir = join(disk.dir, 'data');
      const config = { tokens: [], dataDir };
      // The data directory first (an empty directory takes a block), then no room left.
      const filler = join(disk.dir, 'filler');
      await resolveTokens(config).then(() => rm(join(dataDir, 'token')));
      await fillDisk(filler);
      const failed = await rejection(resolveTokens(config));
      assert.instance(failed, Error);
      assert.match((failed as Error).message, `could not write the generated token to ${join(dataDir, 'token')}`);
      assert.match((failed as Error).message, /ENOSPC/);
      assert.equal(await readdir(dataDir), [], 'neither the token nor its temporary file is left');
      await rm(filler);
      const source = await resolveTokens(config);
      assert.ok(source.generated !== undefined);
      assert.is(await readFile(join(dataDir, 'token'), 'utf8'), `${source.generated.token}\n`);
    },
  );

  full.run();
});
