// The file key store's memory of recent keys: copies in and out, one entry per slot modulo the
// capacity, zeroed when forgotten.
import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { keyIdOfSlot } from '../../src/keys/key-slots.js';
import type { ContentKey } from '../../src/keys/key-store.js';
import { RecentKeys } from '../../src/keys/recent-keys.js';

const recent = suite('RecentKeys');

const keyOf = (slot: number): ContentKey => ({
  id: keyIdOfSlot(slot),
  secret: randomBytes(32),
  contentDigest: randomBytes(32),
});

recent('keeps a copy of a key by its slot, and hands out copies', () => {
  const keys = new RecentKeys(8);
  const key = keyOf(5);
  const expected = {
    id: keyIdOfSlot(5),
    secret: Buffer.from(key.secret),
    contentDigest: Buffer.from(key.contentDigest),
  };
  keys.remember(5, key);
  key.secret.fill(7);
  assert.equal(keys.get(5), expected, 'its own copy');
  keys.get(5)?.secret.fill(1);
  assert.equal(keys.get(5), expected, 'a caller changing its copy changes nothing held');
  assert.is(keys.get(4), undefined);
});

recent('holds the newest puts in slot order, each in place of the one capacity slots before it', () => {
  const keys = new RecentKeys(4);
  const put = Array.from({ length: 10 }, (_, slot) => keyOf(slot));
  put.forEach((key, slot) => keys.remember(slot, key));
  for (let slot = 0; slot < 6; slot += 1)
    assert.is(keys.get(slot), undefined, `slot ${slot} gave its entry to slot ${slot + 4}`);
  for (let slot = 6; slot < 10; slot += 1) assert.equal(keys.get(slot)?.secret, put[slot]?.secret);
});

recent('forgets a key by zeroing its entry, and leaves the entry alone when another key holds it', () => {
  const keys = new RecentKeys(4);
  keys.remember(9, keyOf(9));
  keys.forget(5);
  assert.ok(keys.get(9), 'slot 5 shares the entry but is not the key held');
  keys.forget(9);
  assert.is(keys.get(9), undefined);
  const bytes = (keys as unknown as { bytes: Buffer }).bytes;
  assert.ok(
    bytes.every((byte) => byte === 0),
    'no byte of the secret or the digest is left',
  );
});

recent.run();
