import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { SLOT_BYTES, viewSlot } from '../../src/keys/key-slots.js';
import { planSlotWrites, type SlotKey, type SlotRun } from '../../src/keys/slot-plan.js';

const key = (slot: number): SlotKey => ({ slot, secret: randomBytes(32), contentDigest: randomBytes(32) });

/** Each run as [first slot, the kinds of its slots]. */
const shape = (runs: readonly SlotRun[]) =>
  runs.map(({ slot, bytes }) => [
    slot,
    Array.from({ length: bytes.length / SLOT_BYTES }, (_, i) => viewSlot(bytes, i * SLOT_BYTES).kind),
  ]);

const plan = suite('planSlotWrites');

plan('writes the puts of a group at the end of the file as one run', () => {
  const planned = planSlotWrites(
    [
      { kind: 'put', keys: [key(5), key(6)] },
      { kind: 'put', keys: [key(7)] },
    ],
    5,
  );
  assert.equal(shape(planned.runs), [[5, ['live', 'live', 'live']]]);
  assert.is(planned.end, 8);
  assert.is(planned.puts, 3);
  assert.is(planned.destroyed, 0);
});

plan('reserves the slots a later key went past, leaving the file without holes', () => {
  const planned = planSlotWrites(
    [
      { kind: 'put', keys: [key(7)] },
      { kind: 'put', keys: [key(5)] },
    ],
    4,
  );
  assert.equal(shape(planned.runs), [[4, ['reserved', 'live', 'reserved', 'live']]]);
  assert.is(planned.end, 8);
});

plan('writes a late put into its reserved slot in place, apart from the end', () => {
  const planned = planSlotWrites([{ kind: 'put', keys: [key(2), key(9)] }], 9);
  assert.equal(shape(planned.runs), [
    [2, ['live']],
    [9, ['live']],
  ]);
  assert.is(planned.end, 10);
});

plan('rewrites a destroyed slot in place, and shares one write between neighbours', () => {
  const planned = planSlotWrites(
    [
      { kind: 'destroy', slots: [3, 1, 2] },
      { kind: 'destroy', slots: [7] },
    ],
    10,
  );
  assert.equal(shape(planned.runs), [
    [1, ['destroyed', 'destroyed', 'destroyed']],
    [7, ['destroyed']],
  ]);
  assert.is(planned.end, 10);
  assert.is(planned.destroyed, 4);
});

plan('a key put and destroyed in one group never reaches the disk', () => {
  const put = key(4);
  const planned = planSlotWrites(
    [
      { kind: 'put', keys: [put] },
      { kind: 'destroy', slots: [4] },
    ],
    4,
  );
  assert.equal(shape(planned.runs), [[4, ['destroyed']]]);
  const written = Buffer.concat(planned.runs.map(({ bytes }) => bytes));
  assert.is(written.indexOf(put.secret), -1);
  assert.is(written.indexOf(put.contentDigest), -1);
  assert.is(planned.puts, 1);
  assert.is(planned.destroyed, 1);
});

plan('ignores a destroy of a slot no key was written to, and counts a slot destroyed twice once', () => {
  const planned = planSlotWrites(
    [
      { kind: 'destroy', slots: [12, 2] },
      { kind: 'put', keys: [key(11)] },
      { kind: 'destroy', slots: [10, 2] },
    ],
    10,
  );
  // 12: past the end; 10: reserved in this group, never a key.
  assert.equal(shape(planned.runs), [
    [2, ['destroyed']],
    [10, ['reserved', 'live']],
  ]);
  assert.is(planned.destroyed, 1);
});

plan('writes nothing for a group that changes nothing', () => {
  assert.equal(planSlotWrites([{ kind: 'destroy', slots: [5] }], 5), {
    runs: [],
    end: 5,
    puts: 0,
    destroyed: 0,
    recorded: 0,
  });
});

plan.run();
