// The segmented id table answers as a Map of id -> {record, version} would through any mix of new
// ids, updates and deletes, for ids over the whole int64 range; keeps deleted ids with their
// versions; grows one segment at a time; survives its byte form and a move to another thread;
// joins the tables of a sharded fold's shards; a snapshot of it holds it as it was when the
// snapshot began through every kind of write meanwhile; refuses bytes that would make a lookup
// wrong or endless.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BytesIn, BytesOut } from '../../src/read-model/bytes.js';
import { IdTable, MAX_VERSION, NO_RECORD } from '../../src/read-model/id-table.js';
import { idText } from '../../src/read-model/int64-id.js';
import { shardOfId } from '../../src/read-model/shard-fold.js';
import { INT64_EDGES, random, randomInt64, words } from '../helpers/random.js';

interface Entry {
  record: number;
  version: number;
}

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

function bytesOf(table: IdTable): Buffer {
  return written((out) => table.writeTo(out));
}

function roundTrip(table: IdTable): IdTable {
  const input = new BytesIn(bytesOf(table));
  const read = IdTable.readFrom(input);
  assert.ok(input.done);
  return read;
}

/** What the table answers for each of `ids`. */
function answers(table: IdTable, ids: Iterable<bigint>): Map<bigint, Entry | undefined> {
  const found = new Map<bigint, Entry | undefined>();
  for (const id of ids) {
    const slot = table.find(keyOf(id));
    found.set(id, slot < 0 ? undefined : { record: table.recordAt(slot), version: table.versionAt(slot) });
  }
  return found;
}

function liveInOrder(table: IdTable): [string, number][] {
  const { keys, count } = table.liveInOrder();
  return Array.from({ length: count }, (_, i): [string, number] => [
    idText(keys.low[i] as number, keys.high[i] as number),
    keys.payload[i] as number,
  ]);
}

/** A pool of ids: the edges of the int64 ranges, random ones, small ones and snowflake-sized ones. */
function idPool(next: () => number, each: number): bigint[] {
  const pool: bigint[] = [...INT64_EDGES];
  for (let i = 0; i < each; i += 1)
    pool.push(
      randomInt64(next),
      BigInt(Math.floor(next() * 5000)),
      7n * 10n ** 18n + BigInt(Math.floor(next() * 5000)),
    );
  return pool;
}

/** One random write to `table` and to `map` alike: a new id (live or deleted), an update or a delete. */
function randomWrite(table: IdTable, map: Map<bigint, Entry>, pool: readonly bigint[], next: () => number): void {
  const id = pool[Math.floor(next() * pool.length)] as bigint;
  const record = next() < 0.3 ? NO_RECORD : Math.floor(next() * 2 ** 31);
  const slot = table.find(keyOf(id));
  const entry = map.get(id);
  assert.is(slot >= 0, entry !== undefined);
  if (entry === undefined) {
    table.add(keyOf(id), record, 1);
    map.set(id, { record, version: 1 });
  } else {
    table.update(slot, record);
    map.set(id, { record, version: entry.version + 1 });
  }
}

/** A table and the Map it answers as, after `writes` random writes to ids of a pool of about 3 × `each`. */
function writtenTable(seed: number, each: number, writes: number) {
  const next = random(seed);
  const pool = idPool(next, each);
  const table = new IdTable();
  const map = new Map<bigint, Entry>();
  const write = () => randomWrite(table, map, pool, next);
  for (let step = 0; step < writes; step += 1) write();
  return { table, map, pool, write };
}

const ids = suite('IdTable');

ids('answers as a Map of records and versions does through 200,000 random operations on ids of the whole range', () => {
  const { table, map, pool, write } = writtenTable(42, 6000, 0);
  for (let step = 0; step < 200_000; step += 1) {
    write();
    if (step % 20_000 === 0) assert.equal(answers(table, pool), answers(roundTrip(table), pool));
  }
  assert.ok(table.segments > 1, `${table.segments} segments: the table split`);
  const live = [...map].filter(([, entry]) => entry.record !== NO_RECORD);
  assert.is(table.size, live.length);
  assert.is(table.deletedIds, map.size - live.length);
  assert.equal(answers(table, map.keys()), new Map(map));
  assert.equal(answers(roundTrip(table), map.keys()), new Map(map));
  assert.equal(answers(IdTable.fromParts(table.parts()), map.keys()), new Map(map));
  const order = live
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([id, entry]): [string, number] => [String(id), entry.record]);
  assert.equal(liveInOrder(table), order);
});

ids('grows past a million ids one segment at a time, keeping every id, in 16-byte slots at least 55 % held', () => {
  const table = new IdTable();
  let largestStep = 0;
  for (let id = 1; id <= 1_000_000; id += 1) {
    const before = table.slotBytes;
    table.add(keyOf(BigInt(id)), id % 4096, 1);
    largestStep = Math.max(largestStep, table.slotBytes - before);
    if (id % 100_000 === 0)
      for (let probe = 1; probe <= id; probe += 997)
        assert.is(table.recordAt(table.find(keyOf(BigInt(probe)))), probe % 4096, `id ${probe} of ${id}`);
  }
  assert.is(table.size, 1_000_000);
  for (let id = 1; id <= 1_000_000; id += 1) assert.ok(table.find(keyOf(BigInt(id))) >= 0, `id ${id}`);
  assert.is(table.find(keyOf(1_000_001n)), -1);
  assert.ok(table.slotBytes <= (1_000_000 / 0.55) * 16, `${table.slotBytes} bytes of slots`);
  // An add makes at most two segments of 8,192 slots (a split) and doubles the directory (8 bytes an entry).
  assert.ok(largestStep <= 2 * 8192 * 16 + table.segments * 2 * 8, `an add took ${largestStep} bytes more`);
  assert.ok(table.segments >= 128, `${table.segments} segments`);
});

ids('keeps a deleted id with its version, and counts it apart from the live ones', () => {
  const table = new IdTable();
  const slot = table.add(keyOf(7n), 100, 1);
  table.update(slot, NO_RECORD);
  assert.is(table.find(keyOf(7n)), slot);
  assert.equal([table.recordAt(slot), table.versionAt(slot)], [NO_RECORD, 2]);
  assert.equal([table.size, table.deletedIds], [0, 1]);
  table.update(slot, 200);
  assert.equal([table.recordAt(slot), table.versionAt(slot), table.size, table.deletedIds], [200, 3, 1, 0]);
  assert.equal(liveInOrder(table), [['7', 200]]);
});

ids('stops a version at 2^32 - 1 rather than wrap to 0', () => {
  const table = new IdTable();
  const slot = table.add(keyOf(1n), 5, MAX_VERSION - 1);
  table.update(slot, NO_RECORD);
  assert.is(table.versionAt(slot), MAX_VERSION);
  table.update(slot, 6);
  assert.is(table.versionAt(slot), MAX_VERSION);
  assert.is(roundTrip(table).versionAt(roundTrip(table).find(keyOf(1n))), MAX_VERSION);
});

ids('keeps ids that share their whole hash: their segment grows past its largest instead of splitting for ever', () => {
  // Ids whose high word's multiple cancels out in the hash's first step all hash alike.
  const table = new IdTable();
  const collide = (i: number): bigint => {
    const high = i;
    const low = (0x12345678 ^ Math.imul(high, 0x85ebca6b)) >>> 0;
    return BigInt.asIntN(64, (BigInt(high) << 32n) | BigInt(low));
  };
  for (let i = 0; i < 7000; i += 1) table.add(keyOf(collide(i)), i, 1);
  for (let i = 0; i < 7000; i += 1) assert.is(table.recordAt(table.find(keyOf(collide(i)))), i);
  assert.equal(answers(roundTrip(table), [collide(0), collide(6999)]), answers(table, [collide(0), collide(6999)]));
});

ids("joins the tables of a sharded fold's shards, live and deleted ids, moving only the live records", () => {
  const next = random(7);
  const pool = idPool(next, 3000);
  const bits = 2;
  // Made with room for more ids than they get, and for fewer (they grow and split).
  const shards = Array.from({ length: 2 ** bits }, (_, shard) =>
    IdTable.forShard(bits, shard, shard % 2 === 0 ? 100_000 : 500),
  );
  const expected = new Map<bigint, Entry>();
  const bases = [0, 1000, 2000, 3000];
  for (const id of new Set(pool)) {
    const shard = shardOfId(String(id), bits);
    const deleted = next() < 0.2;
    const record = Math.floor(next() * 500);
    const slot = (shards[shard] as IdTable).add(keyOf(id), record, 3);
    if (deleted) (shards[shard] as IdTable).update(slot, NO_RECORD);
    expected.set(
      id,
      deleted ? { record: NO_RECORD, version: 4 } : { record: record + (bases[shard] as number), version: 3 },
    );
  }
  const joined = IdTable.joinShards(shards, bases);
  assert.equal(answers(joined, expected.keys()), expected);
  assert.equal(answers(roundTrip(joined), expected.keys()), expected);
  const live = [...expected.values()].filter((entry) => entry.record !== NO_RECORD).length;
  assert.equal([joined.size, joined.deletedIds], [live, expected.size - live]);
  joined.add(keyOf(2n ** 62n + 5n), 1, 1);
  assert.is(joined.recordAt(joined.find(keyOf(2n ** 62n + 5n))), 1);
  // A shard's table that holds an id of another shard is not a shard's table.
  const wrong = [IdTable.forShard(1, 0), IdTable.forShard(1, 1)];
  const id = [...expected.keys()].find((value) => shardOfId(String(value), 1) === 1) as bigint;
  (wrong[0] as IdTable).add(keyOf(id), 1, 1);
  assert.throws(() => IdTable.joinShards(wrong, [0, 0]), /is in the table of another shard/);
});

/** Begins a snapshot of `table`, runs `between` until it says stop, then checks the held bytes against the table's bytes at the start. */
function heldAcross(table: IdTable, between: (turn: number) => boolean): void {
  const atStart = bytesOf(table);
  const held: Buffer[] = [];
  const out = new BytesOut((bytes) => held.push(bytes));
  const release = table.snapshot(out);
  out.flush();
  assert.throws(() => table.snapshot(new BytesOut(() => undefined)), /holds the id table already/);
  for (let turn = 0; between(turn); turn += 1);
  assert.ok(Buffer.concat(held).equals(atStart), 'the snapshot holds the table as it was when it began');
  release();
  release();
  // Released: another snapshot can begin.
  table.snapshot(new BytesOut(() => undefined))();
}

ids('a snapshot holds the table as it was when it began, through adds, updates, deletes, growths and splits', () => {
  const { table, map, write } = writtenTable(17, 60_000, 20_000);
  let grew = 0;
  let split = 0;
  for (let round = 0; round < 6; round += 1) {
    const segments = table.segments;
    const bytes = table.slotBytes;
    heldAcross(table, (turn) => {
      write();
      return turn < 10_000 + round * 3000;
    });
    if (table.slotBytes > bytes) grew += 1;
    if (table.segments > segments) split += 1;
    assert.equal(answers(table, map.keys()), new Map(map));
  }
  assert.ok(grew >= 4 && split >= 1, `segments grew during ${grew} snapshots and split during ${split}`);
});

ids('a snapshot holds the table as it was when it began through a remap (a compaction moving every record)', () => {
  const { table, map, write } = writtenTable(29, 5000, 20_000);
  heldAcross(table, (turn) => {
    write();
    if (turn === 5) {
      table.remap((at) => at + 1);
      for (const entry of map.values()) if (entry.record !== NO_RECORD) entry.record += 1;
    }
    return turn < 10;
  });
  assert.equal(answers(table, map.keys()), new Map(map));
});

ids('refuses bytes that do not hold a table', () => {
  const table = new IdTable();
  table.add(keyOf(5n), 9, 1);
  // depth, segments, ids, live (16 bytes); the segment's capacity, depth and prefix (12); its slots.
  const slotAt = (bytes: Buffer) =>
    28 + 16 * (bytes.subarray(28).findIndex((byte, i) => i % 16 === 0 && byte === 5) / 16);
  const edits: [string, (bytes: Buffer) => void, RegExp][] = [
    ['a capacity below the least', (bytes) => bytes.writeUInt32LE(1000, 16), /an id segment of 1000 slots/],
    [
      'a capacity beyond its bytes',
      (bytes) => bytes.writeUInt32LE(1025, 16),
      /an id segment of 1025 slots where 16384 bytes are left/,
    ],
    ['counts that do not match', (bytes) => bytes.writeUInt32LE(2, 8), /holds 1 ids \(1 live\), not 2 \(1\)/],
    ['more live ids than ids', (bytes) => bytes.writeUInt32LE(3, 12), /1 ids, 3 live/],
    [
      'a directory with a hole',
      (bytes) => {
        // A directory of two entries, and the one segment at depth 1 under the prefix of id 5.
        bytes.writeUInt32LE(1, 0);
        bytes.writeUInt32LE(1, 20);
        bytes.writeUInt32LE(shardOfId('5', 1), 24);
      },
      new RegExp(`no id segment for directory entry ${1 - shardOfId('5', 1)}`),
    ],
    ['a segment deeper than the directory', (bytes) => bytes.writeUInt32LE(1, 20), /at depth 1, prefix 0/],
    [
      'an empty slot that is not zero',
      (bytes) => bytes.writeUInt32LE(1, slotAt(bytes) === 28 ? 44 : 28),
      /the empty slot \d+ is not zero/,
    ],
    [
      'an id away from its probe sequence',
      (bytes) => bytes.writeUInt32LE(6, slotAt(bytes)),
      /report 6 lies where a lookup does not find it/,
    ],
  ];
  for (const [what, edit, reason] of edits) {
    const bytes = bytesOf(table);
    edit(bytes);
    assert.throws(
      () => IdTable.readFrom(new BytesIn(bytes)),
      (error: unknown) => error instanceof RangeError && reason.test(error.message),
      what,
    );
  }
  // An id in a segment of another prefix.
  const split = new IdTable(1);
  const id = [0n, 1n, 2n, 3n, 4n].find((value) => shardOfId(String(value), 1) === 0) as bigint;
  split.add(keyOf(id), 1, 1);
  const bytes = bytesOf(split);
  // The first segment (prefix 0) holds the id: give it prefix 1, and the second prefix 0.
  bytes.writeUInt32LE(1, 24);
  bytes.writeUInt32LE(0, 28 + 1024 * 16 + 8);
  assert.throws(
    () => IdTable.readFrom(new BytesIn(bytes)),
    (error: unknown) => error instanceof RangeError && /lies in another segment/.test(error.message),
  );
});

ids.run();
