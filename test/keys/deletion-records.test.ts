// The record of deletions in keys.db (format 2): a deleted report's key slot destroyed in place and
// holding the report id and the version the delete took it to; a deletion of content written in
// the clear taking a slot of its own; sharing the group commit of puts and destroys; format 1 read
// and upgraded.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash, randomBytes } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { deletionOf } from '../../src/keys/deletion-records.js';
import { openFileKeyStore } from '../../src/keys/file-key-store.js';
import { encodeHeader, encodeSlot, SLOT_BYTES, SlotState, viewSlot } from '../../src/keys/key-slots.js';
import { readKeyTable, writeKeyFile } from '../../src/keys/key-tables.js';
import { keyIdText } from '../../src/keys/key-store.js';
import { planSlotWrites } from '../../src/keys/slot-plan.js';
import { rejection, withTimeout } from '../helpers/async.js';
import { memoryLogger, tempDir } from '../helpers/server.js';
import { holdThreadPool } from './hold-thread-pool.js';

const digestOf = (text: string) => createHash('sha256').update(text).digest();
const keysFile = (dir: string) => join(dir, 'keys.db');

const slots = suite('deletion slots');

slots('hold the report id (int64) and the version where the secret was, zeros after, and no key', () => {
  for (const [reportId, version] of [
    ['-9223372036854775808', 2],
    ['9223372036854775807', 2 ** 31],
    ['0', 4],
  ] as const) {
    const bytes = encodeSlot({ deletion: { reportId, version } });
    assert.equal(viewSlot(bytes, 0), { kind: 'deletion', reportId, version });
    assert.is(bytes[4], SlotState.deletion);
    assert.ok(bytes.subarray(20).equals(Buffer.alloc(SLOT_BYTES - 20)), 'nothing but the record');
  }
});

slots('an erasure records a deletion in place of a held key, and past the end for a slot minted and never put', () => {
  const planned = planSlotWrites(
    [
      {
        kind: 'erase',
        slots: [
          { slot: 1, deletion: { reportId: '7', version: 2 } },
          { slot: 6, deletion: { reportId: '8', version: 4 } },
          { slot: 7 },
        ],
      },
    ],
    5,
  );
  const kinds = planned.runs.map(({ slot, bytes }) => [
    slot,
    Array.from({ length: bytes.length / SLOT_BYTES }, (_, i) => viewSlot(bytes, i * SLOT_BYTES).kind),
  ]);
  assert.equal(kinds, [
    [1, ['deletion']],
    [5, ['reserved', 'deletion', 'destroyed']],
  ]);
  assert.equal([planned.end, planned.destroyed, planned.recorded], [8, 1, 2]);
});

slots('a destroy in the same group leaves a recorded deletion as it is', () => {
  const planned = planSlotWrites(
    [
      { kind: 'erase', slots: [{ slot: 2, deletion: { reportId: '7', version: 2 } }] },
      { kind: 'destroy', slots: [2] },
    ],
    5,
  );
  assert.equal(viewSlot(planned.runs[0]?.bytes ?? Buffer.alloc(0), 0), { kind: 'deletion', reportId: '7', version: 2 });
});

slots.run();

const store = suite<{ dir: string }>('FileKeyStore.recordDeletions');
store.before.each(async (context) => {
  context.dir = await tempDir('reports-deletions-');
});
store.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

store(
  "records a sealed report's deletion in its key's slot and one written in the clear in a new slot, durably",
  async ({ dir }) => {
    const keys = await openFileKeyStore({ dir, logger: memoryLogger().logger, create: true });
    const [doomed, kept] = [keys.mint(digestOf('doomed')), keys.mint(digestOf('kept'))];
    await keys.put([doomed, kept]);
    await keys.recordDeletions([
      deletionOf('7', 1, { sealed: { key: keyIdText(doomed.id), box: '' } }),
      deletionOf('-12', 3, { name: 'in the clear' }),
    ]);
    assert.is(await keys.get(doomed.id), undefined);
    assert.equal([keys.slots, keys.stats().erasures, keys.stats().deletions], [3, 1, 2]);
    await keys.close();
    const bytes = await readFile(keysFile(dir));
    assert.is(bytes.indexOf(doomed.secret), -1, 'the secret is overwritten');
    assert.is(bytes.indexOf(doomed.contentDigest), -1, 'the digest is overwritten');
    const table = await readKeyTable(dir);
    assert.equal(
      [table?.view(0), table?.view(2)],
      [
        { kind: 'deletion', reportId: '7', version: 2 },
        { kind: 'deletion', reportId: '-12', version: 4 },
      ],
    );
    assert.ok(table?.get(kept.id)?.secret.equals(kept.secret), 'another key is untouched');
  },
);

store('shares one group commit with the puts and destroys waiting with it', async ({ dir }) => {
  const keys = await openFileKeyStore({ dir, logger: memoryLogger().logger, create: true });
  const old = keys.mint(digestOf('old'));
  await keys.put([old]);
  const before = keys.stats().syncs;
  const pool = holdThreadPool(dir);
  const first = keys.put([keys.mint(digestOf('in flight'))]);
  const together = [
    keys.put([keys.mint(digestOf('new'))]),
    keys.recordDeletions([{ reportId: '1', version: 2 }]),
    keys.destroy([old.id]),
  ];
  await pool.release();
  await withTimeout(Promise.all([first, ...together]), 5000, 'the writes');
  assert.is(keys.stats().syncs - before, 2, 'the write in flight, then one for the three waiting together');
  await keys.close();
});

store('refuses a deletion it cannot record: an id that is no int64, a version beyond 32 bits', async ({ dir }) => {
  const keys = await openFileKeyStore({ dir, logger: memoryLogger().logger, create: true });
  for (const deletion of [
    { reportId: '9223372036854775808', version: 2 },
    { reportId: '007', version: 2 },
    { reportId: '1', version: 2 ** 32 },
    { reportId: '1', version: 1.5 },
  ]) {
    assert.instance(await rejection(keys.recordDeletions([deletion])), RangeError);
  }
  await keys.recordDeletions([]);
  assert.is(keys.slots, 0);
  await keys.close();
  assert.instance(await rejection(keys.recordDeletions([{ reportId: '1', version: 2 }])), Error);
});

store.run();

const formats = suite<{ dir: string }>('keys.db format 1');
formats.before.each(async (context) => {
  context.dir = await tempDir('reports-keys-format-');
});
formats.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

formats(
  'is read by the tools as it is, and upgraded to format 2 (slots unchanged) when the store opens it',
  async ({ dir }) => {
    const secret = randomBytes(32);
    const contentDigest = digestOf('one');
    const slotBytes = Buffer.concat([encodeSlot({ secret, contentDigest }), encodeSlot(SlotState.destroyed)]);
    await writeFile(keysFile(dir), Buffer.concat([encodeHeader(1), slotBytes]));
    const table = await readKeyTable(dir);
    assert.equal([table?.slots, table?.view(1).kind], [2, 'destroyed']);
    assert.ok((await readFile(keysFile(dir))).subarray(0, 16).equals(encodeHeader(1)), 'a read changes nothing');
    const { logger, lines } = memoryLogger();
    const keys = await openFileKeyStore({ dir, logger });
    assert.is(keys.slots, 2);
    assert.ok((await keys.lookup()).get(Buffer.from([0, 0, 0, 0, 0, 0]))?.secret.equals(secret));
    await keys.recordDeletions([{ reportId: '5', version: 2 }]);
    await keys.close();
    const bytes = await readFile(keysFile(dir));
    assert.ok(bytes.subarray(0, 16).equals(encodeHeader()), 'the header says format 2');
    assert.ok(bytes.subarray(16, 16 + slotBytes.length).equals(slotBytes), 'the slots are as they were');
    assert.ok(
      lines().some(
        (line) => line['msg'] === "upgraded the key store's format (its slots are unchanged)" && line['from'] === 1,
      ),
    );
  },
);

formats('a new file written whole reads back slot for slot', async ({ dir }) => {
  const secret = randomBytes(32);
  const contents = [
    { secret, contentDigest: digestOf('a') },
    { deletion: { reportId: '3', version: 2 } },
    SlotState.destroyed,
  ] as const;
  await writeKeyFile(keysFile(dir), 3, (slot) => contents[slot] ?? SlotState.reserved);
  const table = await readKeyTable(dir);
  assert.equal(
    [0, 1, 2].map((slot) => table?.view(slot).kind),
    ['live', 'deletion', 'destroyed'],
  );
  assert.is(await readKeyTable(join(dir, 'nowhere')), undefined);
});

formats.run();
