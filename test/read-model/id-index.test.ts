// The open-addressing id index answers as a Map would through any mix of inserts, overwrites and
// deletes (tombstones reused, growth, clean-ups), for small, negative, huge and non-numeric keys,
// and survives its byte form.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BytesIn, BytesOut } from '../../src/read-model/bytes.js';
import { IdIndex } from '../../src/read-model/id-index.js';

/** A small deterministic generator (mulberry32), so a failure repeats. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const keyPool: (number | string)[] = [0, 1, -1, 2 ** 31, -(2 ** 31), 2 ** 32 + 7, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, '9223372036854775807', '-9223372036854775808'];

function roundTrip(index: IdIndex): IdIndex {
  const chunks: Buffer[] = [];
  const out = new BytesOut((bytes) => chunks.push(bytes));
  index.writeTo(out);
  out.flush();
  const input = new BytesIn(Buffer.concat(chunks));
  const read = IdIndex.readFrom(input);
  assert.ok(input.done);
  return read;
}

const ids = suite('IdIndex');

ids('answers has, get, size and entries as a Map does through 200,000 random operations', () => {
  const next = random(42);
  const index = new IdIndex();
  const map = new Map<number | string, number>();
  for (let i = 0; i < 2000; i += 1) keyPool.push(Math.floor((next() - 0.5) * 2 ** 40), Math.floor(next() * 5000));
  for (let step = 0; step < 200_000; step += 1) {
    const key = keyPool[Math.floor(next() * keyPool.length)] as number | string;
    const roll = next();
    if (roll < 0.55) {
      const value = Math.floor(next() * 2 ** 32);
      index.set(key, value);
      map.set(key, value);
    } else if (roll < 0.85) {
      assert.is(index.delete(key), map.delete(key));
    } else {
      assert.is(index.has(key), map.has(key));
      assert.is(index.get(key), map.get(key));
    }
    if (step % 20_000 === 0) assert.equal(new Map(index.entries()), map);
  }
  assert.is(index.size, map.size);
  assert.equal(new Map(index.entries()), map);
  assert.equal(new Map(roundTrip(index).entries()), map);
});

ids('grows past a million keys and keeps every one', () => {
  const index = new IdIndex();
  for (let key = 1; key <= 1_000_000; key += 1) index.set(key, key % 4096);
  assert.is(index.size, 1_000_000);
  for (let key = 1; key <= 1_000_000; key += 997) assert.is(index.get(key), key % 4096);
  assert.not.ok(index.has(1_000_001));
  assert.ok(index.slotBytes <= 2 ** 21 * 12, `${index.slotBytes} bytes of slots`);
});

ids('reuses the room of deleted keys instead of growing for ever', () => {
  const index = new IdIndex();
  for (let round = 0; round < 50; round += 1) {
    for (let key = 0; key < 500; key += 1) index.set(round * 500 + key, key);
    for (let key = 0; key < 500; key += 1) assert.ok(index.delete(round * 500 + key));
  }
  assert.is(index.size, 0);
  assert.ok(index.slotBytes <= 4096 * 12, `${index.slotBytes} bytes of slots after 25,000 keys came and went`);
});

ids('refuses bytes that do not hold an index', () => {
  for (const edit of [(bytes: Buffer) => bytes.writeUInt32LE(1000, 0), (bytes: Buffer) => bytes.writeUInt32LE(5, 4)]) {
    const chunks: Buffer[] = [];
    const out = new BytesOut((bytes) => chunks.push(bytes));
    new IdIndex().writeTo(out);
    out.flush();
    const bytes = Buffer.concat(chunks);
    edit(bytes);
    assert.throws(() => IdIndex.readFrom(new BytesIn(bytes)), RangeError);
  }
});

ids.run();
