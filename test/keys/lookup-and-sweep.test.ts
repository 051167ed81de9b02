import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash, randomBytes } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openFileKeyStore, type FileKeyStore } from '../../src/keys/file-key-store.js';
import { keyIdOfSlot, slotPosition } from '../../src/keys/key-slots.js';
import type { ContentKey, KeyId } from '../../src/keys/key-store.js';
import { SWEEP_SLICE_KEYS } from '../../src/keys/sweep-orphans.js';
import { memoryLogger, tempDir } from '../helpers/server.js';

const digestOf = (text: string) => createHash('sha256').update(text).digest();

async function putMany(store: FileKeyStore, count: number, perPut = 10_000): Promise<ContentKey[]> {
  const keys: ContentKey[] = [];
  for (let done = 0; done < count; done += perPut) {
    const batch = Array.from({ length: Math.min(perPut, count - done) }, (_, i) =>
      store.mint(digestOf(String(done + i))),
    );
    await store.put(batch);
    keys.push(...batch);
  }
  return keys;
}

const lookup = suite<{ dir: string }>('FileKeyStore.lookup');
lookup.before.each(async (context) => {
  context.dir = await tempDir('reports-keys-lookup-');
});
lookup.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

lookup(
  'answers for every one of 100,000 keys from memory, destroyed ones and unknown ids as undefined',
  async ({ dir }) => {
    const store = await openFileKeyStore({ dir, logger: memoryLogger().logger, create: true });
    const keys = await putMany(store, 100_000);
    const destroyed = keys.filter((_, i) => i % 7 === 0);
    await store.destroy(destroyed.map(({ id }) => id));
    const table = await store.lookup();
    let live = 0;
    for (const [i, key] of keys.entries()) {
      const found = table.get(key.id);
      if (i % 7 === 0) {
        assert.is(found, undefined);
        continue;
      }
      if (!found || !found.secret.equals(key.secret) || !found.contentDigest.equals(key.contentDigest))
        assert.unreachable(`key ${i} differs`);
      live += 1;
    }
    assert.is(live, keys.length - destroyed.length);
    assert.is(table.get(keyIdOfSlot(100_000)), undefined);
    assert.is(table.get(randomBytes(16)), undefined);
    await store.close();
  },
);

lookup('holds the keys of one moment: keys put after it are not in it', async ({ dir }) => {
  const store = await openFileKeyStore({ dir, logger: memoryLogger().logger, create: true });
  const [before] = await putMany(store, 1);
  const table = await store.lookup();
  const [after] = await putMany(store, 1);
  assert.ok(table.get(before!.id));
  assert.is(table.get(after!.id), undefined);
  await store.close();
});

lookup.run();

/** What live reports reference, as a sweep is told: every slot up to 10,000 that `used` says is used. */
function* referencing(used: (slot: number) => boolean): Generator<KeyId> {
  for (let slot = 0; slot < 10_000; slot += 1) if (used(slot)) yield keyIdOfSlot(slot);
}

const sweep = suite<{ dir: string }>('FileKeyStore.sweepOrphans');
sweep.before.each(async (context) => {
  context.dir = await tempDir('reports-keys-sweep-');
});
sweep.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

sweep('destroys exactly the live keys below `below` that no live report uses', async ({ dir }) => {
  const first = await openFileKeyStore({ dir, logger: memoryLogger().logger, create: true });
  const keys = await putMany(first, 12);
  await first.destroy([keys[3]!.id]);
  await first.close();
  const { logger, lines } = memoryLogger();
  const store = await openFileKeyStore({ dir, logger });
  const below = store.slots;
  const minted = await putMany(store, 2);
  const referenced = new Set([0, 1, 5, 9]);
  const swept = await store.sweepOrphans(
    referencing((slot) => referenced.has(slot)),
    { below: below - 2 },
  );
  // Below 10: live 0-9 but 3 (destroyed); 10, 11 and this process's keys are above.
  assert.is(swept, 5);
  for (const [slot, key] of [...keys, ...minted].entries()) {
    const live = referenced.has(slot) || slot >= 10;
    assert.is((await store.get(key.id)) !== undefined, live, `slot ${slot}`);
  }
  assert.is(store.stats().erasures, 5);
  const info = lines().find(
    (line) =>
      line['msg'] === 'destroyed keys no live report uses (left by a crash, or by a restore of an older backup)',
  );
  assert.equal([info?.['orphans'], info?.['damagedSlots']], [5, 0]);
  assert.is(
    await store.sweepOrphans(
      referencing(() => false),
      { below: 10 },
    ),
    4,
    'the referenced ones, once unreferenced',
  );
  assert.is(
    await store.sweepOrphans(
      referencing(() => false),
      { below: 10 },
    ),
    0,
  );
  await store.close();
});

sweep(
  'destroys a damaged slot no live report uses (what a torn destroy leaves), and keeps one that is used',
  async ({ dir }) => {
    const first = await openFileKeyStore({ dir, logger: memoryLogger().logger, create: true });
    await putMany(first, 6);
    await first.close();
    const path = join(dir, 'keys.db');
    const bytes = await readFile(path);
    for (const slot of [1, 3]) bytes[slotPosition(slot) + 30] = (bytes[slotPosition(slot) + 30] as number) ^ 0x40;
    await writeFile(path, bytes);
    const store = await openFileKeyStore({ dir, logger: memoryLogger().logger });
    assert.is(
      await store.sweepOrphans(
        referencing((slot) => slot !== 1),
        { below: store.slots },
      ),
      1,
    );
    assert.equal(await store.verify(), [3]);
    await store.close();
  },
);

sweep('destroys many orphans in slices, each one durable write', async ({ dir }) => {
  const store = await openFileKeyStore({ dir, logger: memoryLogger().logger, create: true });
  const keys = await putMany(store, 3 * SWEEP_SLICE_KEYS + 10);
  const syncs = store.stats().syncs;
  assert.is(
    await store.sweepOrphans(
      referencing((slot) => slot % 2 === 0),
      { below: store.slots },
    ),
    keys.length / 2,
  );
  assert.is(store.stats().syncs - syncs, Math.ceil(keys.length / 2 / SWEEP_SLICE_KEYS));
  assert.is((await store.get(keys[0]!.id)) !== undefined, true);
  assert.is(await store.get(keys[1]!.id), undefined);
  await store.close();
});

sweep.run();

const secrets = suite<{ dir: string }>('what the key store logs');
secrets.before.each(async (context) => {
  context.dir = await tempDir('reports-keys-logs-');
});
secrets.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

secrets('no line carries a secret or a content digest, in any encoding', async ({ dir }) => {
  const { logger, text } = memoryLogger();
  const store = await openFileKeyStore({ dir, logger, create: true });
  const keys = await putMany(store, 8);
  await store.destroy([keys[0]!.id]);
  await store.close();
  const path = join(dir, 'keys.db');
  const bytes = await readFile(path);
  bytes[slotPosition(2) + 50] = (bytes[slotPosition(2) + 50] as number) ^ 1;
  await writeFile(path, Buffer.concat([bytes, Buffer.alloc(40)]));
  const reopened = await openFileKeyStore({ dir, logger });
  await reopened.get(keys[2]!.id);
  await reopened.lookup();
  await reopened.sweepOrphans(
    referencing((slot) => slot > 5),
    { below: reopened.slots },
  );
  await reopened.close();
  const logged = text();
  assert.ok(
    logged.includes('cut a torn tail') && logged.includes('fails its check') && logged.includes('destroyed keys'),
    logged,
  );
  for (const { secret, contentDigest } of keys) {
    for (const bytesOf of [secret, contentDigest]) {
      for (const encoding of ['hex', 'base64', 'base64url'] as const)
        assert.not.ok(logged.includes(bytesOf.toString(encoding)), `${encoding} of a key's bytes in the log`);
    }
  }
});

secrets.run();
