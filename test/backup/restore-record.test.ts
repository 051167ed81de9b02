// The pure parts of a restore: keys.db merged from the data directory's and the backup's, the
// record of deletions read from them, and the reports of a backup that record says were deleted.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { createState } from '../../projections/reports.js';
import { deletedSince } from '../../src/backup/deleted-since.js';
import { encodeSlot, keyIdOfSlot, SlotState, viewSlot, type SlotContent } from '../../src/keys/key-slots.js';
import { keyIdText } from '../../src/keys/key-store.js';
import { mergeKeyTables } from '../../src/keys/merged-keys.js';
import { recordedDeletions } from '../../src/keys/recorded-deletions.js';
import { SlotTable } from '../../src/keys/slot-table.js';

const live = () => ({ secret: randomBytes(32), contentDigest: randomBytes(32) });
const table = (contents: readonly SlotContent[], damaged: readonly number[] = []) =>
  new SlotTable(Buffer.concat(contents.map(encodeSlot)), contents.length, damaged);
const kinds = (merged: ReturnType<typeof mergeKeyTables>) =>
  Array.from({ length: merged.slots }, (_, slot) => viewSlot(encodeSlot(merged.contentOf(slot)), 0).kind);

const merge = suite('mergeKeyTables');

merge(
  'spans the longer table, keeps every deletion and every key the current store destroyed (or holds damaged), and the live keys of either',
  () => {
    const current = table(
      [SlotState.destroyed, live(), { deletion: { reportId: '4', version: 2 } }, SlotState.reserved, live(), live()],
      [5],
    );
    const backup = table([
      live(),
      SlotState.destroyed,
      live(),
      live(),
      SlotState.destroyed,
      live(),
      live(),
      { deletion: { reportId: '9', version: 2 } },
    ]);
    const merged = mergeKeyTables(current, backup);
    assert.equal(kinds(merged), ['destroyed', 'live', 'deletion', 'live', 'live', 'destroyed', 'live', 'deletion']);
    assert.equal(
      merged.contentOf(1),
      {
        secret: (current.view(1) as { secret: Buffer }).secret,
        contentDigest: (current.view(1) as { contentDigest: Buffer }).contentDigest,
      },
      "the current store's key first",
    );
    // A damaged slot of the current store may be a destruction a crash tore: never the backup's key.
    assert.equal(merged.contentOf(5), SlotState.destroyed, 'a damaged slot of the current store stays destroyed');
  },
);

merge('with one table or none', () => {
  assert.equal(kinds(mergeKeyTables(undefined, table([live(), SlotState.reserved]))), ['live', 'destroyed']);
  assert.equal(kinds(mergeKeyTables(table([SlotState.destroyed]), undefined)), ['destroyed']);
  assert.is(mergeKeyTables(undefined, undefined).slots, 0);
});

merge.run();

const since = suite('deletedSince');

since(
  'finds a sealed report by its destroyed key and one in the clear by its recorded deletion at its next version',
  () => {
    const record = recordedDeletions([
      table([SlotState.destroyed, live(), { deletion: { reportId: '5', version: 2 } }]),
      table([live(), live(), live(), { deletion: { reportId: '6', version: 4 } }]),
    ]);
    const state = createState();
    const sealed = (slot: number) => ({ sealed: { key: keyIdText(keyIdOfSlot(slot)), box: '' } });
    state.set('1', sealed(0));
    state.set('2', sealed(1));
    state.set('3', sealed(2));
    state.set('5', { name: 'plain, deleted at version 2' });
    state.set('6', { name: 'plain, deleted at version 4 in another incarnation' });
    state.set('8', sealed(40));
    const found = deletedSince(state, record);
    assert.equal(
      found.map(({ id, version, key }) => [id, version, key === undefined ? undefined : keyIdText(key)]),
      [
        ['1', 1, keyIdText(keyIdOfSlot(0))],
        ['3', 1, keyIdText(keyIdOfSlot(2))],
        ['5', 1, undefined],
      ],
    );
    assert.is(record.deletions, 2);
    assert.not.ok(record.keyDestroyed(Buffer.alloc(16)), 'an id of another store names no slot');
  },
);

since(
  "also finds what the data directory's log took further, and counts the current store's damaged slots as destroyed",
  () => {
    const current = table([live(), live(), live()], [2]);
    const backup = table([live(), live(), live()]);
    const state = createState();
    const sealed = (slot: number) => ({ sealed: { key: keyIdText(keyIdOfSlot(slot)), box: '' } });
    state.set('1', sealed(0));
    state.set('2', sealed(1));
    state.set('3', sealed(2));
    state.set('4', { name: 'plain' });
    // The log continuing the backup's history: 1 deleted (version 2), 4 deleted and created again (3).
    const versions = new Map([
      ['1', 2],
      ['2', 1],
      ['3', 1],
      ['4', 3],
    ]);
    const continued = { version: (id: string) => versions.get(id) ?? 0 };
    const found = deletedSince(state, recordedDeletions([current, backup], current), continued);
    assert.equal(
      found.map(({ id }) => id),
      ['1', '3', '4'],
    );
    assert.equal(
      deletedSince(state, recordedDeletions([current, backup])).map(({ id }) => id),
      [],
      'damaged counts only in the table named, and no log: nothing',
    );
  },
);

since.run();
