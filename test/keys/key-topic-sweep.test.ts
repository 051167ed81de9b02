// The key topic's sweep (key-upkeep.ts sweepKeyTopic): the keys no live report used when the start
// caught up are looked at again after a wait, once the read model holds the log's head, and only
// those still held and still unused are destroyed.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { keyIdText, type KeyId, type KeyStore } from '../../src/keys/key-store.js';
import { sweepKeyTopic } from '../../src/keys/key-upkeep.js';
import type { ReadModel } from '../../src/read-model/read-model.js';
import { memoryLogger } from '../helpers/server.js';

const id = (n: number): KeyId => Buffer.from([0, 0, 0, 0, n >> 8, n & 255]);

/** A key topic held in memory, and a read model whose live reports use `live`. */
function world(held: number[], live: number[]) {
  const heldTexts = new Set(held.map((n) => keyIdText(id(n))));
  const liveIds = new Set(live);
  const keys = {
    heldInMemory: (key: KeyId) => heldTexts.has(keyIdText(key)),
    heldCount: () => heldTexts.size,
    unnamedInMemory: (named: Iterable<string>) => {
      const names = new Set(named);
      return Promise.resolve([...heldTexts].filter((text) => !names.has(text)));
    },
  } as unknown as KeyStore;
  const model = {
    reports: {
      *sealedKeyIds() {
        for (const n of liveIds) yield id(n);
      },
    },
  } as unknown as ReadModel;
  return { keys, model, heldTexts, liveIds };
}

const test = suite('sweepKeyTopic');

/** A sweep with no wait, with what it erased and logged. */
async function sweepAtOnce(model: Parameters<typeof sweepKeyTopic>[0], keys: Parameters<typeof sweepKeyTopic>[1]) {
  const erased: KeyId[] = [];
  const { logger, lines } = memoryLogger();
  const swept = await sweepKeyTopic(model, keys, {
    afterMs: 1,
    signal: new AbortController().signal,
    erase: (ids) => erased.push(...ids),
    current: () => Promise.resolve(),
    logger,
  });
  return { swept, erased, lines };
}

test('destroys, after the wait, the keys unused then and still unused and held; spares the rest', async () => {
  const { keys, model, heldTexts, liveIds } = world([1, 2, 3, 4], [1]);
  const erased: string[] = [];
  const sweep = sweepKeyTopic(model, keys, {
    afterMs: 50,
    signal: new AbortController().signal,
    erase: (ids) => erased.push(...ids.map(keyIdText)),
    current: () => Promise.resolve(),
    logger: memoryLogger().logger,
  });
  // During the wait: report 2's create lands (its key was on its way), key 3 is destroyed by its writer.
  await new Promise((resolve) => setTimeout(resolve, 10));
  liveIds.add(2);
  heldTexts.delete(keyIdText(id(3)));
  assert.is(await sweep, 1);
  assert.equal(erased, [keyIdText(id(4))]);
});

test('waits while the read model is behind the log, and sweeps once it has caught up', async () => {
  const { keys, model } = world([1, 5], [1]);
  const erased: KeyId[] = [];
  let lagging = 2;
  const { logger, lines } = memoryLogger();
  const swept = await sweepKeyTopic(model, keys, {
    afterMs: 10,
    signal: new AbortController().signal,
    erase: (ids) => erased.push(...ids),
    current: () => (lagging-- > 0 ? Promise.reject(new Error('a partition cannot be read')) : Promise.resolve()),
    logger,
  });
  assert.is(swept, 1);
  assert.equal(erased.map(keyIdText), [keyIdText(id(5))]);
  assert.is(lines().filter((line) => /the read model is behind/.test(String(line['msg']))).length, 2);
});

test('a server that closes during the wait destroys nothing', async () => {
  const { keys, model } = world([1, 6], [1]);
  const erased: KeyId[] = [];
  const closing = new AbortController();
  const sweep = sweepKeyTopic(model, keys, {
    afterMs: 10_000,
    signal: closing.signal,
    erase: (ids) => erased.push(...ids),
    current: () => Promise.resolve(),
    logger: memoryLogger().logger,
  });
  await new Promise((resolve) => setTimeout(resolve, 10));
  closing.abort();
  assert.is(await sweep, 0);
  assert.equal(erased, []);
});

test('a key topic most of whose keys no live report here uses (shared with another event topic) is not swept', async () => {
  const many = Array.from({ length: 1200 }, (_, i) => i + 10);
  const { keys, model } = world([1, ...many], [1]);
  const { swept, erased, lines } = await sweepAtOnce(model, keys);
  assert.is(swept, 0);
  assert.equal(erased, []);
  assert.ok(lines().some((line) => /must serve one event topic only/.test(String(line['msg']))));
});

test("a small key topic none of whose keys a live report here uses (another deployment's) is not swept", async () => {
  const theirs = Array.from({ length: 20 }, (_, i) => i + 10);
  const { keys, model } = world(theirs, []);
  const { swept, erased, lines } = await sweepAtOnce(model, keys);
  assert.is(swept, 0);
  assert.equal(erased, []);
  assert.ok(lines().some((line) => /must serve one event topic only/.test(String(line['msg']))));
});

test('a few unused keys among many live ones (what a crash leaves) are swept', async () => {
  const live = Array.from({ length: 30 }, (_, i) => i + 1);
  const left = Array.from({ length: 12 }, (_, i) => i + 100);
  const { keys, model } = world([...live, ...left], live);
  const { swept, erased } = await sweepAtOnce(model, keys);
  assert.is(swept, 12);
  assert.is(erased.length, 12);
});

test.run();
