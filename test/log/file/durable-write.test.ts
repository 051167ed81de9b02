import { openSync, closeSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { writeDurably } from '../../../src/log/file/durable-write.js';
import { rejection } from '../../helpers/async.js';
import { tempDir } from '../../helpers/server.js';

const durable = suite<{ dir: string }>('writeDurably');
durable.before.each(async (context) => {
  context.dir = await tempDir('reports-durable-');
});
durable.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

durable('writes every byte at the position asked, after what is there', async ({ dir }) => {
  const path = join(dir, 'f');
  writeFileSync(path, 'head-');
  const fd = openSync(path, 'r+');
  try {
    const bytes = Buffer.alloc(3 * 1024 * 1024, 0x61);
    await writeDurably(fd, bytes, 5);
    await writeDurably(fd, Buffer.from('!'), 5 + bytes.length);
  } finally {
    closeSync(fd);
  }
  const file = readFileSync(path);
  assert.is(file.length, 5 + 3 * 1024 * 1024 + 1);
  assert.is(file.subarray(0, 6).toString(), 'head-a');
  assert.is(file.at(-1), 0x21);
});

durable('rejects with the system error when the file cannot be written', async ({ dir }) => {
  const path = join(dir, 'f');
  writeFileSync(path, '');
  const fd = openSync(path, 'r');
  try {
    const error = (await rejection(writeDurably(fd, Buffer.from('x'), 0))) as NodeJS.ErrnoException;
    assert.is(error.code, 'EBADF');
  } finally {
    closeSync(fd);
  }
});

durable.run();
