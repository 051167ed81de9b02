// Opening keys.db: created on a first start, refused when missing or unreadable (never taken for
// "every key destroyed"), a torn tail cut, damage before the tail reported and kept.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { appendFile, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openFileKeyStore, type FileKeyStore } from '../../src/keys/file-key-store.js';
import { encodeHeader, HEADER_BYTES, keyIdOfSlot, SLOT_BYTES, slotPosition } from '../../src/keys/key-slots.js';
import { KeyStoreDamagedError, KeyStoreMissingError } from '../../src/keys/key-store-errors.js';
import type { ContentKey } from '../../src/keys/key-store.js';
import { rejection } from '../helpers/async.js';
import { memoryLogger, tempDir } from '../helpers/server.js';
import { holdThreadPool } from './hold-thread-pool.js';

const digestOf = (text: string) => createHash('sha256').update(text).digest();
const keysFile = (dir: string) => join(dir, 'keys.db');

async function withKeys(dir: string, count: number): Promise<ContentKey[]> {
  const store = await openFileKeyStore({ dir, logger: memoryLogger().logger, create: true });
  const keys = Array.from({ length: count }, (_, i) => store.mint(digestOf(`report ${i}`)));
  await store.put(keys);
  await store.close();
  return keys;
}

/** Flips one bit of the file at `position`. */
async function flipBit(path: string, position: number): Promise<void> {
  const bytes = await readFile(path);
  bytes[position] = (bytes[position] as number) ^ 0x04;
  await writeFile(path, bytes);
}

const opening = suite<{ dir: string }>('opening keys.db');
opening.before.each(async (context) => {
  context.dir = await tempDir('reports-keys-open-');
});
opening.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

opening('creates a private keys.db holding only its header, in a private directory it creates', async ({ dir }) => {
  const data = join(dir, 'data');
  const store = await openFileKeyStore({ dir: data, logger: memoryLogger().logger, create: true });
  assert.is(store.slots, 0);
  await store.close();
  assert.ok((await readFile(keysFile(data))).equals(encodeHeader()));
  assert.is((await stat(keysFile(data))).mode & 0o777, 0o600);
  assert.is((await stat(data)).mode & 0o777, 0o700);
});

opening('refuses a missing keys.db unless told to create it, naming the file', async ({ dir }) => {
  const error = await rejection(openFileKeyStore({ dir, logger: memoryLogger().logger }));
  assert.instance(error, KeyStoreMissingError);
  assert.match((error as Error).message, keysFile(dir));
});

opening('completes the header of a keys.db a first start left empty or cut short', async ({ dir }) => {
  await writeFile(keysFile(dir), encodeHeader().subarray(0, 5));
  const store = await openFileKeyStore({ dir, logger: memoryLogger().logger, create: true });
  await store.close();
  assert.ok((await readFile(keysFile(dir))).equals(encodeHeader()));
});

const damagedHeaders: [string, (path: string) => Promise<void>, string][] = [
  [
    'another file',
    (path) => writeFile(path, 'RSLOG\u0000\u0002\n and more bytes than a header'),
    'not a key store (bad magic bytes)',
  ],
  [
    'another format',
    async (path) => {
      const bytes = await readFile(path);
      bytes[7] = 9;
      await writeFile(path, bytes);
    },
    'format 9; this version reads formats 1 and 2 only',
  ],
  ['a flipped bit', (path) => flipBit(path, 9), 'header fails its CRC'],
  ['a header cut short', (path) => truncate(path, 7), "less than a key store's header"],
  ['an empty file', (path) => truncate(path, 0), 'holds 0 bytes'],
];

for (const [what, damage, reason] of damagedHeaders) {
  opening(`refuses a keys.db with ${what} in one line naming the file, and leaves it as it is`, async ({ dir }) => {
    await withKeys(dir, 2);
    await damage(keysFile(dir));
    const before = await readFile(keysFile(dir));
    const error = await rejection(openFileKeyStore({ dir, logger: memoryLogger().logger }));
    assert.instance(error, KeyStoreDamagedError);
    const { message } = error as Error;
    assert.ok(message.startsWith(`${keysFile(dir)} is unusable: `), message);
    assert.match(message, reason);
    assert.not.match(message, '\n');
    assert.ok((await readFile(keysFile(dir))).equals(before), 'the file was changed');
  });
}

opening('refuses a damaged header even when told to create a missing file', async ({ dir }) => {
  await withKeys(dir, 1);
  await flipBit(keysFile(dir), 2);
  assert.instance(
    await rejection(openFileKeyStore({ dir, logger: memoryLogger().logger, create: true })),
    KeyStoreDamagedError,
  );
});

opening(
  'cuts part of a slot at the end (a put never acknowledged) with a warning, keeping the keys before it',
  async ({ dir }) => {
    const keys = await withKeys(dir, 3);
    await appendFile(keysFile(dir), Buffer.alloc(30, 7));
    const { logger, lines } = memoryLogger();
    const store = await openFileKeyStore({ dir, logger });
    assert.is(store.slots, 3);
    assert.is((await stat(keysFile(dir))).size, slotPosition(3));
    const warning = lines().find((line) => line['level'] === 40);
    assert.equal(
      [warning?.['msg'], warning?.['slot'], warning?.['cutSlots'], warning?.['cutBytes']],
      ['cut a torn tail off the key store (key writes that were never acknowledged)', 3, 0, 30],
    );
    assert.ok((await store.get(keys[2]!.id))?.secret.equals(keys[2]!.secret));
    await store.close();
  },
);

opening('cuts whole slots at the end that fail their check, up to the last intact one', async ({ dir }) => {
  const keys = await withKeys(dir, 300);
  await flipBit(keysFile(dir), slotPosition(299) + 20);
  await writeFile(keysFile(dir), Buffer.alloc(SLOT_BYTES * 2), { flag: 'a' });
  const { logger, lines } = memoryLogger();
  const store = await openFileKeyStore({ dir, logger });
  assert.is(store.slots, 299);
  assert.ok(store.holds(keys[298]!.id));
  assert.not.ok(store.holds(keys[299]!.id));
  const warning = lines().find((line) => line['level'] === 40);
  assert.equal([warning?.['slot'], warning?.['cutSlots'], warning?.['cutBytes']], [299, 3, 3 * SLOT_BYTES]);
  // The cut slot's id was never acknowledged: the next key takes it.
  assert.ok(store.mint(digestOf('next')).id.equals(keyIdOfSlot(299)));
  await store.close();
});

opening('cuts every slot when none is intact', async ({ dir }) => {
  await withKeys(dir, 2);
  await writeFile(keysFile(dir), Buffer.concat([encodeHeader(), Buffer.alloc(2 * SLOT_BYTES)]));
  const store = await openFileKeyStore({ dir, logger: memoryLogger().logger });
  assert.is(store.slots, 0);
  assert.is((await stat(keysFile(dir))).size, HEADER_BYTES);
  await store.close();
});

opening.run();

const damage = suite<{ dir: string }>('a damaged slot before the last');
damage.before.each(async (context) => {
  context.dir = await tempDir('reports-keys-damage-');
});
damage.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

async function damagedStore(
  dir: string,
): Promise<{ store: FileKeyStore; keys: ContentKey[]; lines: () => Record<string, unknown>[] }> {
  const keys = await withKeys(dir, 10);
  await flipBit(keysFile(dir), slotPosition(4) + 44);
  const { logger, lines } = memoryLogger();
  return { store: await openFileKeyStore({ dir, logger }), keys, lines };
}

damage(
  'is kept at open: get answers undefined and logs one error naming the file and slot, and later slots read fine',
  async ({ dir }) => {
    const { store, keys, lines } = await damagedStore(dir);
    assert.is(store.slots, 10);
    assert.is(await store.get(keys[4]!.id), undefined);
    const errors = lines().filter((line) => line['level'] === 50);
    assert.is(errors.length, 1);
    assert.is(errors[0]?.['path'], keysFile(dir));
    assert.equal(errors[0]?.['slots'], [4]);
    assert.match(String(errors[0]?.['msg']), `${keysFile(dir)}: key slot 4 fails its check`);
    assert.is(store.stats().unreadable, 1);
    for (const key of [...keys.slice(0, 4), ...keys.slice(5)])
      assert.ok((await store.get(key.id))?.secret.equals(key.secret));
    await store.close();
  },
);

damage('is named by verify(), which finds nothing in a sound file', async ({ dir }) => {
  const { store } = await damagedStore(dir);
  assert.equal(await store.verify(), [4]);
  assert.is(store.stats().unreadable, 0, 'verify only reports');
  await store.close();
});

damage('reads as no key in a lookup, reported once', async ({ dir }) => {
  const { store, keys, lines } = await damagedStore(dir);
  const lookup = await store.lookup();
  assert.is(lookup.get(keys[4]!.id), undefined);
  assert.ok(lookup.get(keys[5]!.id)?.secret.equals(keys[5]!.secret));
  assert.is(lines().filter((line) => line['level'] === 50).length, 1);
  await store.close();
});

damage('is overwritten by a destroy, and is then sound', async ({ dir }) => {
  const { store, keys } = await damagedStore(dir);
  await store.destroy([keys[4]!.id]);
  assert.equal(await store.verify(), []);
  await store.close();
});

damage(
  'read while a write is in flight, is read again once it is durable before it is called damaged',
  async ({ dir }) => {
    const { store, keys } = await damagedStore(dir);
    const pool = holdThreadPool(dir);
    const settled: string[] = [];
    // The read queues behind the destroy's write: both run once the pool is free, the sync after them.
    const destroy = store.destroy([keys[7]!.id]).then(() => settled.push('destroy'));
    const get = store.get(keys[4]!.id).then((key) => settled.push(`get ${key === undefined ? 'nothing' : 'a key'}`));
    await pool.release(); // nothing above can throw before it
    await Promise.all([destroy, get]);
    assert.equal(settled, ['destroy', 'get nothing']);
    assert.is(store.stats().unreadable, 1);
    await store.close();
  },
);

damage.run();
