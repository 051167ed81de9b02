import { openSync, closeSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openDurable, writeDurably } from '../../../src/log/file/durable-write.js';
import { hasSynchronizedWrites } from '../../helpers/descriptors.js';
import { rejection } from '../../helpers/async.js';
import { tempDir } from '../../helpers/server.js';

const durable = suite<{ dir: string }>('writeDurably');
durable.before.each(async (context) => {
  context.dir = await tempDir('reports-durable-');
});
durable.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

durable('opens for writes that are on disk when they return (O_DSYNC), and for reading', async ({ dir }) => {
  const path = join(dir, 'f');
  writeFileSync(path, 'head');
  const file = await openDurable(path);
  try {
    assert.ok(hasSynchronizedWrites(file.fd));
    const { bytesRead, buffer } = await file.read(Buffer.alloc(4), 0, 4, 0);
    assert.is(buffer.subarray(0, bytesRead).toString(), 'head');
  } finally {
    await file.close();
  }
  const plain = openSync(path, 'r+');
  try {
    assert.not.ok(hasSynchronizedWrites(plain), 'a plain descriptor must not pass for a synchronized one');
  } finally {
    closeSync(plain);
  }
});

durable('refuses to open a file that does not exist (the log creates its file first)', async ({ dir }) => {
  const error = (await rejection(openDurable(join(dir, 'missing')))) as NodeJS.ErrnoException;
  assert.is(error.code, 'ENOENT');
});

durable('writes every byte at the position asked, after what is there', async ({ dir }) => {
  const path = join(dir, 'f');
  writeFileSync(path, 'head-');
  const handle = await openDurable(path);
  try {
    const bytes = Buffer.alloc(3 * 1024 * 1024, 0x61);
    await writeDurably(handle.fd, bytes, 5);
    await writeDurably(handle.fd, Buffer.from('!'), 5 + bytes.length);
  } finally {
    await handle.close();
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
