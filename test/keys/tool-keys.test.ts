// keys.db as the tools read it beside a server (tool-keys.ts, read-file-keys.ts): one key at a
// time as the file holds it now (a key put after the tool opened it, a key destroyed since), no
// key where there is no keys.db, a damaged header refused naming the file, and nothing after close.
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openFileKeyStore } from '../../src/keys/file-key-store.js';
import { KeyStoreDamagedError } from '../../src/keys/key-store-errors.js';
import { openKeysForReading } from '../../src/keys/read-file-keys.js';
import { fileToolKeys } from '../../src/keys/tool-keys.js';
import { digestOf } from '../helpers/kafka-keys.js';
import { memoryLogger, tempDir } from '../helpers/server.js';

const tool = suite<{ dir: string }>('fileToolKeys: keys.db one key at a time');

tool.before.each(async (context) => {
  context.dir = await tempDir('reports-tool-keys-');
});
tool.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

tool(
  'reads a key as keys.db holds it when asked: put after the tool opened it, gone once destroyed',
  async ({ dir }) => {
    const keys = fileToolKeys(dir);
    const store = await openFileKeyStore({ dir, logger: memoryLogger().logger, create: true });
    try {
      const key = store.mint(digestOf('a name'));
      assert.is(await keys.get(key.id), undefined, 'not put yet');
      await store.put([key]);
      assert.equal(await keys.get(key.id), key);
      assert.is(await keys.get(Buffer.alloc(3)), undefined, 'an id of another length names no slot');
      await store.destroy([key.id]);
      assert.is(await keys.get(key.id), undefined);
    } finally {
      await store.close();
      await keys.close();
    }
    assert.is(await keys.get(Buffer.alloc(6)), undefined, 'closed: nothing is read');
  },
);

tool('holds no key where there is no keys.db (a store written before erasure)', async ({ dir }) => {
  const keys = fileToolKeys(dir);
  assert.is(await keys.get(Buffer.alloc(6)), undefined);
  assert.is((await keys.lookup()).get(Buffer.alloc(6)), undefined);
  await keys.close();
});

tool("refuses a keys.db whose header is not a key store's, naming the file", async ({ dir }) => {
  await writeFile(join(dir, 'keys.db'), Buffer.alloc(64, 0x41));
  try {
    await openKeysForReading(dir);
    assert.unreachable('read a damaged keys.db');
  } catch (error) {
    assert.instance(error, KeyStoreDamagedError);
    assert.match((error as Error).message, join(dir, 'keys.db'));
  }
});

tool('passes on an error other than a missing file (a data directory that is a file)', async ({ dir }) => {
  const notADir = join(dir, 'file');
  await writeFile(notADir, '');
  try {
    await openKeysForReading(notADir);
    assert.unreachable('opened keys.db under a file');
  } catch (error) {
    assert.is((error as NodeJS.ErrnoException).code, 'ENOTDIR');
  }
});

tool.run();
