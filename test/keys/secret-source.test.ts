// Random bytes for keys come from a pool drawn a few thousand bytes at a time: every byte handed
// out once, wiped from the pool as it goes, and one draw from the system per pool, not per key.
import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createRandomSource, createSecretSource } from '../../src/keys/secret-source.js';

/** A draw that counts its calls and keeps the pools it gave (bytes 1, 2, 3, ... so each is told apart). */
function countingDraw() {
  const pools: Buffer[] = [];
  let next = 0;
  const draw = (size: number) => {
    const pool = Buffer.alloc(size);
    for (let at = 0; at < size; at += 1) pool[at] = (next++ % 255) + 1;
    pools.push(pool);
    return pool;
  };
  return { draw, pools };
}

const source = suite('keys: the pool of random bytes');

source('hands out each drawn byte once, in order, and wipes it from the pool', () => {
  const { draw, pools } = countingDraw();
  const random = createRandomSource(draw, 64);
  const first = random(13);
  const second = random(32);
  assert.equal(
    [...first],
    [...Array(13).keys()].map((at) => at + 1),
  );
  assert.equal(
    [...second],
    [...Array(32).keys()].map((at) => at + 14),
  );
  assert.is(pools.length, 1);
  assert.ok(
    pools[0]?.subarray(0, 45).every((byte) => byte === 0),
    'what was handed out is no longer in the pool',
  );
  assert.ok(
    pools[0]?.subarray(45).every((byte) => byte !== 0),
    'what was not is still there',
  );
});

source('draws once per pool, not once per call, and a request larger than the pool alone', () => {
  const { draw, pools } = countingDraw();
  const random = createRandomSource(draw, 1024);
  for (let call = 0; call < 1000; call += 1) random(13);
  // 1000 × 13 bytes from pools of 1024 (78 calls each, the rest of a pool left): 13 draws.
  assert.is(pools.length, 13);
  assert.is(random(4096).length, 4096);
  assert.is(pools.length, 14);
  assert.is(pools[13]?.length, 4096);
});

source('a secret source gives secrets of its size from pools of 512 secrets', () => {
  const pools: number[] = [];
  const secret = createSecretSource(32, (size) => {
    pools.push(size);
    return randomBytes(size);
  });
  const secrets = Array.from({ length: 600 }, () => secret());
  assert.ok(secrets.every((each) => each.length === 32));
  assert.is(new Set(secrets.map((each) => each.toString('hex'))).size, 600);
  assert.equal(pools, [32 * 512, 32 * 512]);
});

source.run();
