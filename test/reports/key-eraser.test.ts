// The service's eraser: a delete that took effect is erased through the store's record of
// deletions where it keeps one (its key destroyed with it), through a plain destroy of its key
// where it does not; an erasure the store does not confirm is tried again until it does.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Deletion } from '../../src/keys/deletion-records.js';
import type { KeyId, KeyStore } from '../../src/keys/key-store.js';
import { idleKeyStore } from '../helpers/idle-key-store.js';
import { createKeyEraser } from '../../src/reports/key-eraser.js';
import { rejection, until } from '../helpers/async.js';
import { memoryLogger } from '../helpers/server.js';

interface FakeStore extends KeyStore {
  readonly destroyed: KeyId[][];
  readonly recorded: Deletion[][];
  failing: boolean;
}

function fakeStore(recordsDeletions: boolean): FakeStore {
  const store = {
    ...idleKeyStore('keys:fake'),
    destroyed: [] as KeyId[][],
    recorded: [] as Deletion[][],
    failing: false,
    destroy(ids: readonly KeyId[]) {
      if (store.failing) return Promise.reject(new Error('the disk is gone'));
      store.destroyed.push([...ids]);
      return Promise.resolve();
    },
  };
  if (!recordsDeletions) return store;
  return Object.assign(store, {
    recordDeletions(deletions: readonly Deletion[]) {
      if (store.failing) return Promise.reject(new Error('the disk is gone'));
      store.recorded.push([...deletions]);
      return Promise.resolve();
    },
  });
}

const key = Buffer.from('000000000007', 'hex');
const eraser = suite('createKeyEraser');

eraser(
  'records a deletion where the store keeps a record of them, and destroys only its key where it does not',
  async () => {
    const recording = fakeStore(true);
    await createKeyEraser(recording, memoryLogger().logger).erase({ reportId: '7', version: 2, key }, 1000);
    await createKeyEraser(recording, memoryLogger().logger).erase({ reportId: '8', version: 2 }, 1000);
    assert.equal(
      [recording.recorded, recording.destroyed],
      [[[{ reportId: '7', version: 2, key }], [{ reportId: '8', version: 2 }]], []],
    );
    const plain = fakeStore(false);
    await createKeyEraser(plain, memoryLogger().logger).erase({ reportId: '7', version: 2, key }, 1000);
    await createKeyEraser(plain, memoryLogger().logger).erase({ reportId: '8', version: 2 }, 1000);
    assert.equal(plain.destroyed, [[key]]);
  },
);

eraser('tries an unconfirmed deletion again in the background until the store confirms it', async () => {
  const store = fakeStore(true);
  store.failing = true;
  const erasing = createKeyEraser(store, memoryLogger().logger, 10);
  assert.instance(await rejection(erasing.erase({ reportId: '7', version: 2, key }, 1000)), Error);
  assert.instance(await rejection(erasing.erase([key], 1000)), Error);
  assert.is(erasing.pending(), 2);
  await new Promise((resolve) => setTimeout(resolve, 30));
  store.failing = false;
  await until(() => erasing.pending() === 0, 'the erasures confirmed');
  assert.equal(store.recorded.at(-1), [{ reportId: '7', version: 2, key }]);
  assert.equal(store.destroyed.at(-1), [key]);
  erasing.stop();
});

eraser(
  "writes the background's erasures a write group at a time: one the store cannot take holds back neither the others nor a retried delete's, and is not sent again while it hangs",
  async () => {
    const store = fakeStore(false);
    let refuseStuck: (error: Error) => void = () => undefined;
    let groupOneTaken = false;
    let groupOneWrites = 0;
    let groupTwoRefusals = 1;
    // Group = the id's first byte (a key topic partition): group 1's first write hangs, then is
    // refused; group 2 refuses its first write at once.
    Object.assign(store, {
      writeGroupOf: (id: KeyId) => id[0] ?? 0,
      destroy(ids: readonly KeyId[]) {
        if (ids.some((id) => id[0] === 1) && !groupOneTaken) {
          groupOneWrites += 1;
          return new Promise<void>((_, reject) => (refuseStuck = reject));
        }
        if (ids.some((id) => id[0] === 2) && groupTwoRefusals > 0) {
          groupTwoRefusals -= 1;
          return Promise.reject(new Error('too many writes waiting'));
        }
        store.destroyed.push([...ids]);
        return Promise.resolve();
      },
    });
    const told: string[] = [];
    const erasing = createKeyEraser(store, memoryLogger().logger, 10, (ids) =>
      told.push(...ids.map((id) => id.toString('hex'))),
    );
    const mine = Buffer.from('00000007', 'hex');
    const stuck = Buffer.from('01000009', 'hex');
    const refusedOnce = Buffer.from('0200000a', 'hex');
    erasing.eraseLater([stuck]);
    erasing.eraseLater([refusedOnce]);
    erasing.eraseLater({ reportId: '7', version: 2, key: mine });
    await until(() => told.includes('00000007'), "group 0's key confirmed while group 1's write hangs");
    assert.not.ok(erasing.waitsFor('7'), "report 7's erasure is done");
    const settled = await Promise.race([
      erasing.settle('7', 5000).then(() => 'settled'),
      new Promise((resolve) => setTimeout(() => resolve('waited'), 500)),
    ]);
    assert.is(settled, 'settled', "a retried delete of report 7 does not wait for group 1's write");
    await until(() => told.includes('0200000a'), "group 2's key, refused once, tried again while group 1's hangs");
    // More erasures handed over meanwhile start more rounds: none sends group 1's key again.
    for (let i = 0; i < 5; i += 1) {
      erasing.eraseLater([Buffer.from([0, 0, 1, i])]);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await until(() => erasing.pending() === 1, 'all but the stuck key confirmed');
    assert.is(groupOneWrites, 1, 'the hanging write is the only one of group 1');
    groupOneTaken = true;
    refuseStuck(new Error('no leader for the partition'));
    await until(() => erasing.pending() === 0, "group 1's key confirmed once the store takes it");
    assert.is(told.at(-1), '01000009');
    erasing.stop();
  },
);

eraser('tries again in the background when the store throws instead of rejecting', async () => {
  const store = fakeStore(false);
  let throwing = true;
  Object.assign(store, {
    destroy(ids: readonly KeyId[]) {
      if (throwing) throw new Error('the store threw');
      store.destroyed.push([...ids]);
      return Promise.resolve();
    },
  });
  const erasing = createKeyEraser(store, memoryLogger().logger, 10);
  erasing.eraseLater([key]);
  // Several background attempts throw; each is tried again, none escapes the timer.
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.is(erasing.pending(), 1);
  throwing = false;
  await until(() => erasing.pending() === 0, 'the erasure confirmed once the store takes it');
  assert.equal(store.destroyed, [[key]]);
  erasing.stop();
});

eraser('lists the deletions it has not confirmed, being written or tried again, and none once confirmed', async () => {
  const store = fakeStore(false);
  let confirm: (() => void) | undefined;
  Object.assign(store, {
    destroy: () =>
      store.failing
        ? Promise.reject(new Error('the broker is gone'))
        : new Promise<void>((resolve) => (confirm = resolve)),
  });
  const erasing = createKeyEraser(store, memoryLogger().logger, 10);
  const writing = erasing.erase({ reportId: '7', version: 2, key }, 1000);
  assert.equal(erasing.unconfirmed(), [{ reportId: '7', version: 2, key }], 'one being written');
  confirm?.();
  await writing;
  assert.equal(erasing.unconfirmed(), []);
  store.failing = true;
  const other = Buffer.from('000000000008', 'hex');
  assert.instance(await rejection(erasing.erase({ reportId: '8', version: 4, key: other }, 20)), Error);
  erasing.eraseLater({ reportId: '9', version: 2, key: Buffer.from('000000000009', 'hex') });
  // A later incarnation of report 9, deleted too: both keys wait.
  erasing.eraseLater({ reportId: '9', version: 4, key: Buffer.from('00000000000b', 'hex') });
  erasing.eraseLater([Buffer.from('00000000000a', 'hex')]); // a void create's key: no deletion
  assert.equal(
    erasing.unconfirmed().map(({ reportId, version }) => [reportId, version]),
    [
      ['8', 4],
      ['9', 2],
      ['9', 4],
    ],
  );
  erasing.stop();
});

eraser(
  'writes a deletion once when the fold queues it around the request erasing it (a record written twice takes two slots)',
  async () => {
    const store = fakeStore(true);
    // A store slower to confirm than the background's delay, as a disk under load.
    Object.assign(store, {
      recordDeletions: (deletions: readonly Deletion[]) =>
        new Promise<void>((resolve) =>
          setTimeout(() => {
            store.recorded.push([...deletions]);
            resolve();
          }, 40),
        ),
    });
    const erasing = createKeyEraser(store, memoryLogger().logger, 5);
    const deletion = { reportId: '8', version: 2 };
    // The fold queues it as it folds the request's own event, then the request erases it.
    erasing.eraseLater(deletion);
    const erased = erasing.erase(deletion, 1000);
    // And the fold may queue it again while the request's write is out.
    erasing.eraseLater(deletion);
    await erased;
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(store.recorded, [[deletion]]);
    assert.is(erasing.pending(), 0);
    erasing.stop();
  },
);

eraser('remembers the newest 4,096 erasures: the fold asks again only for one older than those', async () => {
  const plain = fakeStore(false);
  const erasing = createKeyEraser(plain, memoryLogger().logger, 5);
  const keyOf = (n: number) => Buffer.from(n.toString(16).padStart(12, '0'), 'hex');
  for (let n = 1; n <= 4097; n += 1) await erasing.erase([keyOf(n)], 1000);
  // Erased again by a request: remembered once, so it does not push out another.
  await erasing.erase([keyOf(4097)], 1000);
  plain.destroyed.length = 0;
  erasing.eraseLater([keyOf(2)]);
  erasing.eraseLater([keyOf(4097)]);
  assert.is(erasing.pending(), 0, 'the newest 4,096 (2 to 4,097) are remembered');
  erasing.eraseLater([keyOf(1)]);
  assert.is(erasing.pending(), 1);
  await until(() => erasing.pending() === 0, 'the oldest erased again');
  assert.equal(plain.destroyed, [[keyOf(1)]]);
  erasing.stop();
});

for (const records of [true, false])
  eraser(
    `settles a report's unconfirmed deletion on demand, and has nothing to settle once confirmed (${records ? 'a record of deletions' : 'keys only'})`,
    async () => {
      const store = fakeStore(records);
      store.failing = true;
      // A long retry interval: only settle writes it within the test.
      const erasing = createKeyEraser(store, memoryLogger().logger, 60_000);
      assert.not.ok(erasing.waitsFor('7'));
      assert.instance(await rejection(erasing.erase({ reportId: '7', version: 2, key }, 1000)), Error);
      assert.ok(erasing.waitsFor('7'));
      assert.not.ok(erasing.waitsFor('8'));
      // Still unconfirmed: settle fails as the erasure did, and the report still waits.
      assert.instance(await rejection(erasing.settle('7', 1000)), Error);
      assert.ok(erasing.waitsFor('7'));
      store.failing = false;
      await erasing.settle('7', 1000);
      assert.not.ok(erasing.waitsFor('7'));
      assert.is(erasing.pending(), 0);
      if (records) assert.equal(store.recorded, [[{ reportId: '7', version: 2, key }]]);
      else assert.equal(store.destroyed, [[key]]);
      // Nothing left: settling again writes nothing.
      await erasing.settle('7', 1000);
      assert.is(store.recorded.length + store.destroyed.length, 1);
      erasing.stop();
    },
  );

eraser('forgets a report the fold queued once the background erases it', async () => {
  const store = fakeStore(false);
  const erasing = createKeyEraser(store, memoryLogger().logger, 10);
  erasing.eraseLater({ reportId: '9', version: 2, key });
  assert.ok(erasing.waitsFor('9'));
  await until(() => !erasing.waitsFor('9'), 'the erasure confirmed');
  assert.equal(store.destroyed, [[key]]);
  erasing.stop();
});

eraser(
  'settling while the background is writing the same erasure waits for it, recording the deletion once',
  async () => {
    const store = fakeStore(true);
    store.failing = true;
    const erasing = createKeyEraser(store, memoryLogger().logger, 10);
    assert.instance(await rejection(erasing.erase({ reportId: '7', version: 2, key }, 1000)), Error);
    // The next background attempt hangs until let go: settle comes while it is under way.
    let letGo: () => void = () => undefined;
    const slow = new Promise<void>((resolve) => (letGo = resolve));
    const records = store as FakeStore & { recordDeletions(deletions: readonly Deletion[]): Promise<void> };
    let attempts = 0;
    records.recordDeletions = (deletions) => {
      attempts += 1;
      store.recorded.push([...deletions]);
      return slow;
    };
    store.failing = false;
    await until(() => attempts === 1, 'the background attempt under way');
    const settling = erasing.settle('7', 1000);
    letGo();
    await settling;
    assert.is(attempts, 1, 'the deletion was written again beside the background write');
    assert.not.ok(erasing.waitsFor('7'));
    erasing.stop();
  },
);

eraser('a listener of destroyed keys that throws changes nothing of the erasure', async () => {
  const store = fakeStore(true);
  const told: string[] = [];
  const erasing = createKeyEraser(store, memoryLogger().logger, 10, (ids) => {
    told.push(...ids.map((id) => id.toString('hex')));
    throw new Error('a listener failed');
  });
  await erasing.erase({ reportId: '7', version: 2, key }, 1000);
  assert.equal(told, [key.toString('hex')]);
  assert.is(erasing.pending(), 0);
  assert.equal(store.recorded, [[{ reportId: '7', version: 2, key }]]);
  erasing.stop();
});

eraser(
  "a refusal is written again within the request's time, and the request's 503 comes only when it runs out",
  async () => {
    const store = fakeStore(false);
    store.failing = true;
    setTimeout(() => (store.failing = false), 150);
    const { logger } = memoryLogger();
    await createKeyEraser(store, logger).erase([key], 1000);
    assert.equal(store.destroyed, [[key]], 'erased once the store took it, within the time');
    store.failing = true;
    const started = performance.now();
    const refused = createKeyEraser(store, logger, 60_000);
    assert.instance(await rejection(refused.erase([key], 400)), Error);
    refused.stop();
    assert.ok(performance.now() - started >= 390, 'rejected before the time ran out');
  },
);

eraser.run();
