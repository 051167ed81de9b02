// A snapshot copies the id index a slice at a time while writes go on (copy on write): what it
// writes is the index as it was when frozen, whatever adds, updates, deletes, rehashes and
// remaps happened meanwhile, and the live index answers as if nothing were being copied.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BytesOut } from '../../src/read-model/bytes.js';
import { FrozenSlots } from '../../src/read-model/frozen-slots.js';
import { writeIndexBytes } from '../../src/read-model/id-index-bytes.js';
import { IdIndex, NO_RECORD } from '../../src/read-model/id-index.js';
import { random, randomInt64, words } from '../helpers/random.js';

const frozen = suite('frozen id index slots');

function keyOf(value: bigint): Uint32Array {
  return new Uint32Array(words(value));
}

function written(write: (out: BytesOut) => void): Buffer {
  const chunks: Buffer[] = [];
  const out = new BytesOut((bytes) => chunks.push(bytes));
  write(out);
  out.flush();
  return Buffer.concat(chunks);
}

frozen('keeps each word as it was when frozen, copying a block before its first write', () => {
  const source = new Uint32Array(3 * 4096 + 10).map((_, i) => i);
  let ends = 0;
  const slots = new FrozenSlots(source, () => void (ends += 1));
  assert.throws(() => slots.result(), /not all copied/);
  slots.beforeWrite(source, 4096 * 2 + 5);
  source[4096 * 2 + 5] = 0;
  slots.beforeWrite(new Uint32Array(1), 0); // another array: nothing to copy
  assert.not.ok(slots.copySome(4096));
  source[1] = 0; // block 0 was copied by copySome: a write after it needs no copy
  source[4096 + 1] = 0; // not told: block 1 is not copied yet, so the copy gets the new word
  assert.ok(slots.copySome(Number.POSITIVE_INFINITY));
  const copy = slots.result();
  assert.is(copy[4096 * 2 + 5], 4096 * 2 + 5);
  assert.is(copy[1], 1);
  assert.is(copy[4096 + 1], 0);
  assert.is(copy[3 * 4096 + 9], 3 * 4096 + 9);
  assert.is(ends, 1);
  slots.release();
  assert.is(ends, 1, 'ends once');
  assert.is(slots.result()[1], 1, 'a copy done outlives its release');
});

frozen('released before it is done, lets writes go uncopied and refuses to go on', () => {
  const source = new Uint32Array(2 * 4096).map((_, i) => i);
  let ends = 0;
  const slots = new FrozenSlots(source, () => void (ends += 1));
  assert.not.ok(slots.copySome(1));
  slots.release();
  assert.is(ends, 1);
  slots.beforeWrite(source, 4096); // no longer copies
  assert.throws(() => slots.copySome(1), /released before they were all copied/);
  assert.throws(() => slots.result(), /not all copied/);
});

/** An index of random ids 30 short of a growth (slots of 4 MiB: 256 blocks), with a way to add more and change held ones. */
function indexNearGrowth(seed: number) {
  const rng = random(seed);
  const index = new IdIndex();
  const ids: bigint[] = [];
  let record = 0;
  const add = () => {
    const id = randomInt64(rng);
    if (index.find(keyOf(id)) >= 0) return;
    index.add(keyOf(id), (record += 1), 1);
    ids.push(id);
  };
  while (index.slotBytes < 4 << 20) add();
  while (!index.settleSome(Number.POSITIVE_INFINITY));
  const capacity = index.slotBytes / 16;
  while (index.size + index.deletedIds < capacity * 0.7 - 30) add();
  const held = [...ids];
  const change = () => {
    const slot = index.find(keyOf(held[Math.floor(rng() * held.length)] as bigint));
    index.update(slot, rng() < 0.3 ? NO_RECORD : (record += 1));
  };
  return { index, ids, add, change };
}

/** Freezes `index`, copies a block a turn with `between(turn)` after each, and checks the copy against the index's bytes at the freeze; the turns taken. */
function frozenAcross(index: IdIndex, between: (turn: number) => void): number {
  const atFreeze = written((out) => index.writeTo(out));
  const freeze = index.freeze();
  assert.throws(() => index.freeze(), /frozen already/);
  let turns = 0;
  while (!freeze.slots.copySome(4096)) between((turns += 1));
  const frozenBytes = written((out) =>
    writeIndexBytes(out, { slots: freeze.slots.result(), ids: freeze.ids, live: freeze.live }, true),
  );
  assert.ok(frozenBytes.equals(atFreeze), 'the frozen index is the index at the freeze');
  // The freeze is over: another can start.
  index.freeze().slots.release();
  return turns;
}

frozen('writes the index as it was at the freeze after adds, updates, deletes and a rehash meanwhile', () => {
  const { index, ids, add, change } = indexNearGrowth(17);
  const capacity = index.slotBytes / 16;
  const turns = frozenAcross(index, () => {
    // Growth within the first turns: the rehash then moves old slots, and an old slot that a
    // lookup finds moves at once (its MOVED word is a write to the frozen table).
    for (let k = 0; k < 5; k += 1) add();
    for (let k = 0; k < 3; k += 1) change();
  });
  assert.ok(turns > 20, `${turns} turns`);
  assert.ok(index.slotBytes > capacity * 16, 'the index grew during the freeze');
  for (const id of ids) assert.ok(index.find(keyOf(id)) >= 0);
});

frozen('writes the index as it was at the freeze after a remap meanwhile (a compaction moving every record)', () => {
  const { index, change } = indexNearGrowth(29);
  const turns = frozenAcross(index, (turn) => {
    change();
    // It rewrites every live slot, which copies every block not copied yet first.
    if (turn === 5) index.remap((at) => at + 1);
  });
  assert.is(turns, 5);
});

frozen.run();
