import { execFileSync } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { NotRegularFileError, openRegularFile, readRegularFile } from '../src/regular-file.js';
import { rejection, withTimeout } from './helpers/async.js';
import { tempDir } from './helpers/server.js';

const regular = suite<{ dir: string }>('openRegularFile and readRegularFile');
regular.before.each(async (context) => {
  context.dir = await tempDir('reports-regular-');
});
regular.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

regular('reads a regular file', async ({ dir }) => {
  await writeFile(join(dir, 'file'), 'bytes');
  assert.is((await readRegularFile(join(dir, 'file'))).toString(), 'bytes');
});

regular(
  'refuses a FIFO nobody writes to at once, naming it, where an open for reading would block',
  async ({ dir }) => {
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const error = await withTimeout(rejection(openRegularFile(fifo)), 5000, 'the open of a FIFO to be refused');
    assert.instance(error, NotRegularFileError);
    assert.is((error as Error).message, `${fifo} is a FIFO (named pipe), not a regular file`);
  },
);

regular('refuses a directory, naming it', async ({ dir }) => {
  await mkdir(join(dir, 'sub'));
  const error = await rejection(readRegularFile(join(dir, 'sub')));
  assert.instance(error, NotRegularFileError);
  assert.is((error as Error).message, `${join(dir, 'sub')} is a directory, not a regular file`);
});

regular('refuses a device', async () => {
  const error = await rejection(readRegularFile('/dev/null'));
  assert.is((error as Error).message, '/dev/null is a device, not a regular file');
});

regular('passes a missing file on as ENOENT', async ({ dir }) => {
  assert.is(((await rejection(readRegularFile(join(dir, 'absent')))) as NodeJS.ErrnoException).code, 'ENOENT');
});

regular.run();
