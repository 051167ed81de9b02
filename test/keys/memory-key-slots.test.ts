// Keys in memory: copies in and out, zeroed slots reused, everything forgotten on clear.
import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KeySlots } from '../../src/keys/memory-key-slots.js';
import { keyIdText } from '../../src/keys/key-store.js';

const slots = suite('KeySlots');

slots('keeps a copy of the secret and digest under the id, and hands out copies', () => {
  const table = new KeySlots();
  const id = randomBytes(16);
  const material = randomBytes(64);
  const original = Buffer.from(material);
  table.set(keyIdText(id), material);
  material.fill(7);
  const expected = { id, secret: original.subarray(0, 32), contentDigest: original.subarray(32) };
  const got = table.get(keyIdText(id));
  assert.equal(got, expected, 'the table kept its own copy');
  got?.secret.fill(1);
  assert.equal(table.get(keyIdText(id)), expected, 'a caller changing its copy changes nothing held');
});

slots('a destroyed key is gone, a key given earlier stays as it was, and its slot goes to the next key', () => {
  const table = new KeySlots();
  const first = randomBytes(64);
  table.set('first', first);
  const given = table.get('first');
  assert.ok(table.delete('first'));
  assert.not.ok(table.delete('first'));
  assert.is(table.get('first'), undefined);
  assert.equal(given?.secret, first.subarray(0, 32));
  const second = randomBytes(64);
  table.set('second', second);
  assert.is(table.size, 1);
  assert.equal(table.get('second')?.contentDigest, second.subarray(32));
});

slots('holds more keys than one chunk, and clear forgets them all', () => {
  const table = new KeySlots();
  const ids = Array.from({ length: 5000 }, () => keyIdText(randomBytes(16)));
  const material = ids.map(() => randomBytes(64));
  ids.forEach((id, i) => table.set(id, material[i] as Buffer));
  assert.is(table.size, 5000);
  assert.equal(table.get(ids[4999] as string)?.secret, (material[4999] as Buffer).subarray(0, 32));
  table.set(ids[0] as string, material[1] as Buffer);
  assert.equal(
    table.get(ids[0] as string)?.secret,
    (material[1] as Buffer).subarray(0, 32),
    'a second set replaces the key in place',
  );
  assert.is(table.size, 5000);
  table.clear();
  assert.is(table.size, 0);
  assert.not.ok(table.has(ids[0] as string));
});

slots.run();
