import { mkdir, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { isWithin } from '../../src/backup/backup-place.js';
import { tempDir } from '../helpers/server.js';

const within = suite<{ dir: string }>('isWithin');
within.before.each(async (context) => {
  context.dir = await tempDir('reports-place-');
  await mkdir(join(context.dir, 'data', 'snapshots'), { recursive: true });
});
within.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

within('the directory itself and anything below it, existing or to be made', async ({ dir }) => {
  const data = join(dir, 'data');
  for (const path of [
    data,
    join(data, 'snapshots'),
    join(data, 'snapshots', 'backup'),
    join(data, 'a', 'b'),
    `${data}/./x/../y`,
  ])
    assert.ok(await isWithin(path, data), path);
});

within('not a sibling whose name starts with the same letters, nor the parent', async ({ dir }) => {
  const data = join(dir, 'data');
  for (const path of [join(dir, 'data-backup'), join(dir, 'data2', 'x'), dir, join(data, '..', 'backup')])
    assert.not.ok(await isWithin(path, data), path);
});

within('through a symbolic link to the directory, or from one', async ({ dir }) => {
  const data = join(dir, 'data');
  await symlink(data, join(dir, 'link'));
  assert.ok(await isWithin(join(dir, 'link', 'snapshots', 'backup'), data));
  assert.ok(await isWithin(join(data, 'backup'), join(dir, 'link')));
});

within.run();
