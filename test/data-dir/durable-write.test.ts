import { openSync, closeSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openDurable, PLATFORM_SYNC_MODE, type SyncMode } from '../../src/data-dir/durable-write.js';
import { rejection } from '../helpers/async.js';
import { hasSynchronizedWrites } from '../helpers/descriptors.js';
import { tempDir } from '../helpers/server.js';

const durable = suite<{ dir: string }>('openDurable');
durable.before.each(async (context) => {
  context.dir = await tempDir('reports-durable-');
});
durable.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

durable('uses O_DSYNC on Linux, where it flushes what fdatasync flushes', () => {
  assert.is(process.platform, 'linux', 'these tests read /proc');
  assert.is(PLATFORM_SYNC_MODE, 'dsync');
});

durable('opens for writes that are on disk when they return (O_DSYNC), and for reading', async ({ dir }) => {
  const path = join(dir, 'f');
  writeFileSync(path, 'head');
  const file = await openDurable(path, 'dsync');
  try {
    assert.ok(hasSynchronizedWrites(file.handle.fd));
    const { bytesRead, buffer } = await file.handle.read(Buffer.alloc(4), 0, 4, 0);
    assert.is(buffer.subarray(0, bytesRead).toString(), 'head');
  } finally {
    await file.handle.close();
  }
  const plain = openSync(path, 'r+');
  try {
    assert.not.ok(hasSynchronizedWrites(plain), 'a plain descriptor must not pass for a synchronized one');
  } finally {
    closeSync(plain);
  }
});

durable('without O_DSYNC (other platforms) opens a plain descriptor and syncs after each write', async ({ dir }) => {
  const path = join(dir, 'f');
  writeFileSync(path, '');
  const file = await openDurable(path, 'fdatasync');
  try {
    assert.not.ok(hasSynchronizedWrites(file.handle.fd));
    assert.is(file.mode, 'fdatasync');
  } finally {
    await file.handle.close();
  }
});

durable('refuses to open a file that does not exist (the log creates its file first)', async ({ dir }) => {
  const error = (await rejection(openDurable(join(dir, 'missing')))) as NodeJS.ErrnoException;
  assert.is(error.code, 'ENOENT');
});

for (const mode of ['dsync', 'fdatasync'] as SyncMode[]) {
  durable(`writes every byte at the position asked, after what is there (${mode})`, async ({ dir }) => {
    const path = join(dir, 'f');
    writeFileSync(path, 'head-');
    const file = await openDurable(path, mode);
    try {
      const bytes = Buffer.alloc(3 * 1024 * 1024, 0x61);
      await file.write(bytes, 5);
      await file.write(Buffer.from('!'), 5 + bytes.length);
    } finally {
      await file.handle.close();
    }
    const written = readFileSync(path);
    assert.is(written.length, 5 + 3 * 1024 * 1024 + 1);
    assert.is(written.subarray(0, 6).toString(), 'head-a');
    assert.is(written.at(-1), 0x21);
  });

  durable(`rejects with the system error when the disk takes no more (/dev/full, ${mode})`, async () => {
    const file = await openDurable('/dev/full', mode);
    try {
      const error = (await rejection(file.write(Buffer.from('x'), 0))) as NodeJS.ErrnoException;
      assert.is(error.code, 'ENOSPC');
    } finally {
      await file.handle.close();
    }
  });
}

durable.run();
