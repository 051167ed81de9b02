import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash, randomBytes } from 'node:crypto';
import { readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { openFileKeyStore, type FileKeyStore } from '../../src/keys/file-key-store.js';
import { HEADER_BYTES, keyIdOfSlot, SLOT_BYTES } from '../../src/keys/key-slots.js';
import { KeyNotMintedError, KeyStoreUnavailableError } from '../../src/keys/key-store-errors.js';
import { keyIdText, type ContentKey } from '../../src/keys/key-store.js';
import { rejection } from '../helpers/async.js';
import { memoryLogger, tempDir } from '../helpers/server.js';

const quiet = () => memoryLogger().logger;
const digestOf = (text: string) => createHash('sha256').update(text).digest();
const open = (dir: string, create = true) => openFileKeyStore({ dir, logger: quiet(), create });
const keysFile = (dir: string) => join(dir, 'keys.db');

async function putKeys(store: FileKeyStore, count: number): Promise<ContentKey[]> {
  const keys = Array.from({ length: count }, (_, i) => store.mint(digestOf(`report ${i}`)));
  await store.put(keys);
  return keys;
}

function assertSameKey(actual: ContentKey | undefined, expected: ContentKey): void {
  assert.ok(actual, `key ${keyIdText(expected.id)} is missing`);
  assert.ok(actual.id.equals(expected.id));
  assert.ok(actual.secret.equals(expected.secret), 'another secret');
  assert.ok(actual.contentDigest.equals(expected.contentDigest), 'another digest');
}

const store = suite<{ dir: string }>('openFileKeyStore');
store.before.each(async (context) => {
  context.dir = await tempDir('reports-keys-');
});
store.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

store('gets a put key back in this process and after reopening', async ({ dir }) => {
  const first = await open(dir);
  const [key] = await putKeys(first, 1);
  assertSameKey(await first.get(key!.id), key!);
  await first.close();
  const second = await open(dir, false);
  assertSameKey(await second.get(key!.id), key!);
  assert.is(second.slots, 1);
  await second.close();
});

store('resolves a put only once its slots are in the file', async ({ dir }) => {
  const keys = await open(dir);
  await putKeys(keys, 3);
  assert.is((await stat(keysFile(dir))).size, HEADER_BYTES + 3 * SLOT_BYTES);
  assert.is(keys.slots, 3);
  await keys.close();
});

store(
  'mints short ids that follow each other, a fresh random secret each, and never an id used before a reopen',
  async ({ dir }) => {
    const first = await open(dir);
    const minted = [first.mint(digestOf('a')), first.mint(digestOf('a'))];
    assert.equal(
      minted.map(({ id }) => keyIdText(id)),
      [keyIdText(keyIdOfSlot(0)), keyIdText(keyIdOfSlot(1))],
    );
    assert.is(keyIdText(minted[0]!.id).length, 8);
    assert.not.ok(minted[0]!.secret.equals(minted[1]!.secret));
    await first.put(minted);
    await first.destroy([minted[1]!.id]);
    await first.close();
    const second = await open(dir, false);
    assert.is(keyIdText(second.mint(digestOf('b')).id), keyIdText(keyIdOfSlot(2)));
    await second.close();
  },
);

store('destroys a key: get answers undefined and its secret and digest are nowhere in keys.db', async ({ dir }) => {
  const keys = await open(dir);
  const [kept, gone] = await putKeys(keys, 2);
  // Captured before the destroy, as a copy (the store's buffers are not trusted to stay).
  const secret = Buffer.from(gone!.secret);
  const digest = Buffer.from(gone!.contentDigest);
  const before = await readFile(keysFile(dir));
  assert.ok(before.includes(secret) && before.includes(digest), 'the key was never written');
  await keys.destroy([gone!.id]);
  assert.is(await keys.get(gone!.id), undefined);
  const after = await readFile(keysFile(dir));
  assert.is(after.indexOf(secret), -1, 'the secret is still in keys.db');
  assert.is(after.indexOf(digest), -1, 'the digest is still in keys.db');
  assert.is(after.length, before.length, 'destroyed in place');
  assertSameKey(await keys.get(kept!.id), kept!);
  assert.is(keys.stats().erasures, 1);
  await keys.close();
  const reopened = await open(dir, false);
  assert.is(await reopened.get(gone!.id), undefined);
  assert.ok(reopened.holds(gone!.id), 'a destroyed id stays taken');
  await reopened.close();
});

for (const [how, erase] of [
  ['destroyed', (store: FileKeyStore, key: ContentKey) => store.destroy([key.id])],
  [
    'ended by a recorded deletion',
    (store: FileKeyStore, key: ContentKey) => store.recordDeletions([{ reportId: '1', version: 1, key: key.id }]),
  ],
] as const)
  store(
    `a key being ${how} is never read back, not even from the file before its zeroing is durable`,
    async ({ dir }) => {
      const keys = await open(dir);
      const [key] = await putKeys(keys, 1);
      // A group commit in flight (another put): the erasure waits behind it, the slot still live in the file.
      const other = keys.mint(digestOf('other'));
      const putOther = keys.put([other]);
      const erased = erase(keys, key!);
      assert.is(await keys.get(key!.id), undefined, 'read while the erasure is under way');
      await Promise.all([putOther, erased]);
      // The read above must not have put it back in memory: the file no longer has it.
      assert.is(await keys.get(key!.id), undefined, 'read once the erasure is durable');
      assert.not.ok((await readFile(keysFile(dir))).includes(key!.secret), 'the secret is still in keys.db');
      assertSameKey(await keys.get(other.id), other);
      await keys.close();
    },
  );

store('puts and destroys that wait together share one sync', async ({ dir }) => {
  const keys = await open(dir);
  const old = await putKeys(keys, 50);
  const syncsBefore = keys.stats().syncs;
  const first = keys.put([keys.mint(digestOf('first'))]);
  // The first group is being written now; everything below waits for it and goes in the next.
  const puts = Array.from({ length: 100 }, (_, i) => keys.put([keys.mint(digestOf(`later ${i}`))]));
  const destroys = old.filter((_, i) => i % 3 === 0).map((key) => keys.destroy([key.id]));
  await Promise.all([first, ...puts, ...destroys]);
  assert.is(keys.stats().syncs - syncsBefore, 2);
  assert.is(keys.slots, 151);
  assert.is(keys.stats().erasures, destroys.length);
  await keys.close();
});

store('many concurrent writers share far fewer syncs than writes', async ({ dir }) => {
  const keys = await open(dir);
  const writers = 32;
  const rounds = 8;
  await Promise.all(
    Array.from({ length: writers }, async (_, writer) => {
      for (let round = 0; round < rounds; round += 1) {
        const key = keys.mint(digestOf(`${writer}/${round}`));
        await keys.put([key]);
        if (round % 2 === 1) await keys.destroy([key.id]);
      }
    }),
  );
  const { puts, erasures, syncs } = keys.stats();
  assert.is(puts, writers * rounds);
  assert.is(erasures, (writers * rounds) / 2);
  assert.ok(syncs <= (puts + erasures) / 4, `${syncs} syncs for ${puts + erasures} writes`);
  await keys.close();
});

store("fills a key's reserved slot when its put comes after a later key's", async ({ dir }) => {
  const keys = await open(dir);
  const early = keys.mint(digestOf('early'));
  const late = keys.mint(digestOf('late'));
  await keys.put([late]);
  assert.is(keys.slots, 2);
  assert.is(await keys.get(early.id), undefined, 'reserved, not yet a key');
  await keys.put([early]);
  assertSameKey(await keys.get(early.id), early);
  await keys.close();
  const reopened = await open(dir, false);
  assertSameKey(await reopened.get(early.id), early);
  assertSameKey(await reopened.get(late.id), late);
  assert.equal(await reopened.verify(), []);
  await reopened.close();
});

store('refuses a key it did not mint, a key put already, and one put twice in a call', async ({ dir }) => {
  const keys = await open(dir);
  const [put] = await putKeys(keys, 1);
  assert.instance(await rejection(keys.put([put!])), KeyNotMintedError);
  assert.instance(
    await rejection(keys.put([{ id: keyIdOfSlot(40), secret: randomBytes(32), contentDigest: randomBytes(32) }])),
    KeyNotMintedError,
  );
  assert.instance(
    await rejection(keys.put([{ id: randomBytes(16), secret: randomBytes(32), contentDigest: randomBytes(32) }])),
    KeyNotMintedError,
  );
  const twice = keys.mint(digestOf('twice'));
  const error = await rejection(keys.put([twice, twice]));
  assert.instance(error, KeyNotMintedError);
  assert.match((error as Error).message, keyIdText(twice.id));
  const short = keys.mint(digestOf('short'));
  assert.instance(await rejection(keys.put([{ ...short, secret: randomBytes(16) }])), KeyNotMintedError);
  // A refused call takes nothing: the keys can still be put.
  await keys.put([twice, short]);
  assertSameKey(await keys.get(twice.id), twice);
  assert.throws(() => keys.mint(Buffer.alloc(20)), RangeError);
  await keys.close();
});

store(
  'never puts a key destroyed before its put, and writes its slot destroyed (an event may name its id)',
  async ({ dir }) => {
    const keys = await open(dir);
    const key = keys.mint(digestOf('gone'));
    await keys.destroy([key.id]);
    assert.instance(await rejection(keys.put([key])), KeyNotMintedError);
    assert.is(keys.slots, 1);
    assert.ok(keys.holds(key.id));
    assert.is(await keys.get(key.id), undefined);
    assert.is((await keys.lookup()).view(0).kind, 'destroyed');
    await keys.close();
  },
);

store('ignores ids it does not hold, writing nothing', async ({ dir }) => {
  const keys = await open(dir);
  await putKeys(keys, 1);
  const syncs = keys.stats().syncs;
  await keys.destroy([randomBytes(16), keyIdOfSlot(99)]);
  await keys.destroy([]);
  await keys.put([]);
  assert.is(keys.stats().syncs, syncs);
  assert.is(await keys.get(keyIdOfSlot(99)), undefined);
  assert.is(await keys.get(randomBytes(3)), undefined);
  assert.not.ok(keys.holds(keyIdOfSlot(1)));
  assert.not.ok(keys.holds(randomBytes(16)));
  assert.ok(keys.holds(keyIdOfSlot(0)));
  await keys.close();
});

store('finishes the writes it accepted before closing, and refuses every call after', async ({ dir }) => {
  const keys = await open(dir);
  const key = keys.mint(digestOf('last'));
  const put = keys.put([key]);
  await keys.close();
  await put;
  await keys.close();
  for (const call of [
    keys.put([keys.mint(digestOf('x'))]),
    keys.destroy([key.id]),
    keys.get(key.id),
    keys.lookup(),
    keys.verify(),
  ]) {
    assert.instance(await rejection(call), KeyStoreUnavailableError);
  }
  const reopened = await open(dir, false);
  assertSameKey(await reopened.get(key.id), key);
  assert.match(reopened.description, /^keys:.*keys\.db$/);
  await reopened.close();
});

store.run();
