// The open-addressing id index answers as a Map of id -> {record, version} would through any mix
// of new ids, updates and deletes, for ids over the whole int64 range; keeps deleted ids with
// their versions; survives its byte form and a move to another thread; refuses bytes that would
// make a lookup wrong or endless.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BytesIn, BytesOut } from '../../src/read-model/bytes.js';
import { IdIndex, MAX_VERSION, NO_RECORD } from '../../src/read-model/id-index.js';
import { idText } from '../../src/read-model/int64-id.js';
import { INT64_EDGES, random, randomInt64, words } from '../helpers/random.js';

interface Entry {
  record: number;
  version: number;
}

function keyOf(value: bigint): Uint32Array {
  return new Uint32Array(words(value));
}

function bytesOf(index: IdIndex): Buffer {
  const chunks: Buffer[] = [];
  const out = new BytesOut((bytes) => chunks.push(bytes));
  index.writeTo(out);
  out.flush();
  return Buffer.concat(chunks);
}

function roundTrip(index: IdIndex): IdIndex {
  const input = new BytesIn(bytesOf(index));
  const read = IdIndex.readFrom(input);
  assert.ok(input.done);
  return read;
}

/** What the index answers for each of `ids`. */
function answers(index: IdIndex, ids: Iterable<bigint>): Map<bigint, Entry | undefined> {
  const found = new Map<bigint, Entry | undefined>();
  for (const id of ids) {
    const slot = index.find(keyOf(id));
    found.set(id, slot < 0 ? undefined : { record: index.recordAt(slot), version: index.versionAt(slot) });
  }
  return found;
}

function liveInOrder(index: IdIndex): [string, number][] {
  const { keys, count } = index.liveInOrder();
  return Array.from({ length: count }, (_, i): [string, number] => [
    idText(keys.low[i] as number, keys.high[i] as number),
    keys.payload[i] as number,
  ]);
}

const ids = suite('IdIndex');

ids('answers as a Map of records and versions does through 200,000 random operations on ids of the whole range', () => {
  const next = random(42);
  const pool: bigint[] = [...INT64_EDGES];
  for (let i = 0; i < 2000; i += 1)
    pool.push(
      randomInt64(next),
      BigInt(Math.floor(next() * 5000)),
      7n * 10n ** 18n + BigInt(Math.floor(next() * 5000)),
    );
  const index = new IdIndex();
  const map = new Map<bigint, Entry>();
  for (let step = 0; step < 200_000; step += 1) {
    const id = pool[Math.floor(next() * pool.length)] as bigint;
    const record = next() < 0.3 ? NO_RECORD : Math.floor(next() * 2 ** 31);
    const slot = index.find(keyOf(id));
    const entry = map.get(id);
    assert.is(slot >= 0, entry !== undefined);
    if (entry === undefined) {
      if (record === NO_RECORD) continue;
      index.add(keyOf(id), record, 1);
      map.set(id, { record, version: 1 });
    } else {
      index.update(slot, record);
      map.set(id, { record, version: entry.version + 1 });
    }
    if (step % 20_000 === 0) assert.equal(answers(index, pool), answers(roundTrip(index), pool));
  }
  const live = [...map].filter(([, entry]) => entry.record !== NO_RECORD);
  assert.is(index.size, live.length);
  assert.is(index.deletedIds, map.size - live.length);
  assert.equal(answers(index, map.keys()), new Map(map));
  assert.equal(answers(roundTrip(index), map.keys()), new Map(map));
  assert.equal(answers(IdIndex.fromParts(index.parts()), map.keys()), new Map(map));
  const order = live
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([id, entry]): [string, number] => [String(id), entry.record]);
  assert.equal(liveInOrder(index), order);
});

ids('grows past a million ids and keeps every one, in 16-byte slots at least 47 % held', () => {
  const index = new IdIndex();
  for (let id = 1; id <= 1_000_000; id += 1) index.add(keyOf(BigInt(id)), id % 4096, 1);
  assert.is(index.size, 1_000_000);
  for (let id = 1; id <= 1_000_000; id += 997) assert.is(index.recordAt(index.find(keyOf(BigInt(id)))), id % 4096);
  assert.is(index.find(keyOf(1_000_001n)), -1);
  index.parts(); // finishes a rehash under way: the old table's bytes go
  assert.ok(index.slotBytes <= (1_000_000 / 0.47) * 16, `${index.slotBytes} bytes of slots`);
});

ids(
  'grows a few slots at a time: both tables are kept while the old one drains, every id answers meanwhile, then the old one goes',
  () => {
    const index = new IdIndex();
    let id = 0;
    const add = () => {
      id += 1;
      index.add(keyOf(BigInt(id)), id, 1);
    };
    while (id < 50_000) add();
    const steady = index.slotBytes;
    while (index.slotBytes === steady) add();
    const grown = index.slotBytes;
    assert.ok(grown > steady * 2.4, `old and new tables side by side: ${steady} -> ${grown} bytes`);
    // While it drains: an id not moved yet is found (and moves), updated, deleted and found again.
    index.update(index.find(keyOf(BigInt(id - 1))), 7);
    const early = index.find(keyOf(1n));
    index.update(early, NO_RECORD);
    assert.is(index.recordAt(index.find(keyOf(1n))), NO_RECORD);
    assert.is(index.versionAt(index.find(keyOf(1n))), 2);
    let adds = 0;
    while (index.slotBytes === grown) {
      add();
      adds += 1;
      if (adds % 1000 === 0)
        for (let probe = 2; probe <= id; probe += 101)
          assert.is(
            index.recordAt(index.find(keyOf(BigInt(probe)))),
            probe === id - adds - 1 ? 7 : probe,
            `id ${probe} after ${adds} adds`,
          );
    }
    assert.ok(adds < steady / 16 / 16 + 16, `drained after ${adds} adds`);
    assert.is(index.slotBytes, grown - steady);
    assert.is(index.size, id - 1);
    assert.is(index.deletedIds, 1);
    for (let probe = 2; probe <= id; probe += 1) assert.ok(index.find(keyOf(BigInt(probe))) >= 0, `id ${probe}`);
    assert.equal(answers(roundTrip(index), [1n, 2n, BigInt(id)]), answers(index, [1n, 2n, BigInt(id)]));
  },
);

ids(
  'settles a rehash under way a slice at a time when asked (a snapshot does), every id answering between two slices',
  () => {
    const index = new IdIndex();
    let id = 0;
    while (id < 50_000) index.add(keyOf(BigInt(++id)), id, 1);
    const steady = index.slotBytes;
    while (index.slotBytes === steady) index.add(keyOf(BigInt(++id)), id, 1);
    const grown = index.slotBytes;
    let slices = 0;
    while (!index.settleSome(10_000)) {
      slices += 1;
      assert.is(index.slotBytes, grown, 'both tables are kept until the last slice');
      for (let probe = 1; probe <= id; probe += 37) assert.is(index.recordAt(index.find(keyOf(BigInt(probe)))), probe);
    }
    // The old table had steady / 16 slots: about that many / 10,000 slices.
    assert.ok(
      slices >= Math.floor(steady / 16 / 10_000) - 1 && slices <= Math.ceil(steady / 16 / 10_000),
      `${slices} slices`,
    );
    assert.is(index.slotBytes, grown - steady);
    assert.ok(index.settleSome(10_000), 'nothing left to settle');
    for (let probe = 1; probe <= id; probe += 1) assert.is(index.recordAt(index.find(keyOf(BigInt(probe)))), probe);
  },
);

ids('keeps a deleted id with its version, and counts it apart from the live ones', () => {
  const index = new IdIndex();
  const slot = index.add(keyOf(7n), 100, 1);
  index.update(slot, NO_RECORD);
  assert.is(index.find(keyOf(7n)), slot);
  assert.equal([index.recordAt(slot), index.versionAt(slot)], [NO_RECORD, 2]);
  assert.equal([index.size, index.deletedIds], [0, 1]);
  index.update(slot, 200);
  assert.equal([index.recordAt(slot), index.versionAt(slot), index.size, index.deletedIds], [200, 3, 1, 0]);
  assert.equal(liveInOrder(index), [['7', 200]]);
});

ids('stops a version at 2^32 - 1 rather than wrap to 0', () => {
  const index = new IdIndex();
  const slot = index.add(keyOf(1n), 5, MAX_VERSION - 1);
  index.update(slot, NO_RECORD);
  assert.is(index.versionAt(slot), MAX_VERSION);
  index.update(slot, 6);
  assert.is(index.versionAt(slot), MAX_VERSION);
  assert.is(roundTrip(index).versionAt(roundTrip(index).find(keyOf(1n))), MAX_VERSION);
});

ids('merges another index of other ids, live and deleted, moving only live records', () => {
  const left = new IdIndex();
  left.add(keyOf(1n), 10, 1);
  const right = new IdIndex();
  right.add(keyOf(-(2n ** 63n)), 20, 3);
  right.update(right.add(keyOf(2n ** 63n - 1n), 30, 1), NO_RECORD);
  left.merge(right, (record) => record + 1000);
  assert.equal(
    answers(left, [1n, -(2n ** 63n), 2n ** 63n - 1n]),
    new Map([
      [1n, { record: 10, version: 1 }],
      [-(2n ** 63n), { record: 1020, version: 3 }],
      [2n ** 63n - 1n, { record: NO_RECORD, version: 2 }],
    ]),
  );
  assert.equal([left.size, left.deletedIds], [2, 1]);
  const again = new IdIndex();
  again.add(keyOf(1n), 1, 1);
  assert.throws(() => left.merge(again, (record) => record), /report 1 is in both tables/);
});

ids('refuses bytes that do not hold an index', () => {
  const index = new IdIndex();
  index.add(keyOf(5n), 9, 1);
  const slotAt = (bytes: Buffer) =>
    12 + 16 * (bytes.subarray(12).findIndex((byte, i) => i % 16 === 0 && byte === 5) / 16);
  const edits: [string, (bytes: Buffer) => void, RegExp][] = [
    ['a capacity below the least', (bytes) => bytes.writeUInt32LE(1000, 0), /an id index of 1000 slots/],
    ['a capacity beyond its bytes', (bytes) => bytes.writeUInt32LE(1025, 0), /the data ends at byte/],
    ['counts that do not match', (bytes) => bytes.writeUInt32LE(2, 4), /holds 1 ids \(1 live\), not 2 \(1\)/],
    ['more live ids than ids', (bytes) => bytes.writeUInt32LE(3, 8), /holding 1 ids, 3 live/],
    [
      'an empty slot that is not zero',
      (bytes) => bytes.writeUInt32LE(1, slotAt(bytes) === 12 ? 28 : 12),
      /the empty slot \d+ is not zero/,
    ],
    [
      'an id away from its probe sequence',
      (bytes) => bytes.writeUInt32LE(6, slotAt(bytes)),
      /report 6 lies where a lookup does not find it/,
    ],
  ];
  for (const [what, edit, reason] of edits) {
    const bytes = bytesOf(index);
    edit(bytes);
    assert.throws(
      () => IdIndex.readFrom(new BytesIn(bytes)),
      (error: unknown) => error instanceof RangeError && reason.test(error.message),
      what,
    );
  }
});

ids.run();
