// The compact report table: the same answers as a Map of reports for every int64 id and text, the
// same canonical digest, the space of deleted reports reused, and each id's version (deleted ids
// included) kept through deletes, compaction, merges, moves between threads and its byte form.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { StoredReport } from '../../projections/reports.js';
import { BytesIn, BytesOut } from '../../src/read-model/bytes.js';
import { ReportTable } from '../../src/read-model/report-table.js';
import { shardOfId } from '../../src/read-model/shard-fold.js';
import { stateDigest } from '../../src/projector/fold-log.js';
import { INT64_EDGES, random, randomInt64 } from '../helpers/random.js';

const samples: [string, StoredReport][] = [
  ['1', { name: 'plain' }],
  ['0', { name: '', tag: '' }],
  ['-7', { name: 'negative', tag: 'finance' }],
  ['9007199254740991', { name: 'largest safe integer' }],
  ['9007199254740992', { name: 'first unsafe integer', tag: 't' }],
  ['-9223372036854775808', { name: 'lowest int64' }],
  ['9223372036854775807', { name: 'highest int64', tag: 'x' }],
  ['42', { name: 'ünïcödé "quoted" \\ back\n', tag: 'naïve' }],
  ['43', { name: 'emoji 📄 and a lone \ud800 surrogate', tag: '中文' }],
  ['44', { name: 'control \u0001 char' }],
];

function tableOf(entries: Iterable<[string, StoredReport]>): ReportTable {
  const table = new ReportTable();
  for (const [id, report] of entries) table.set(id, report);
  return table;
}

const table = suite('ReportTable');

table('answers has, get and size as a Map of the same reports does', () => {
  const compact = tableOf(samples);
  const map = new Map(samples);
  assert.is(compact.size, map.size);
  for (const [id] of samples) {
    assert.ok(compact.has(id), id);
    assert.equal(compact.get(id), map.get(id), id);
  }
  assert.not.ok(compact.has('2'));
  assert.is(compact.get('2'), undefined);
  assert.equal(new Map(compact), map);
});

table('keeps non-canonical spellings apart from the canonical id, and refuses to store one', () => {
  const compact = tableOf([
    ['7', { name: 'seven' }],
    ['0', { name: 'zero' }],
  ]);
  for (const other of ['07', '-0', '+7', '7.0', ' 7', '0x7', '', '9223372036854775808']) {
    assert.not.ok(compact.has(other), other);
    assert.is(compact.get(other), undefined, other);
    assert.is(compact.version(other), 0, other);
    assert.not.ok(compact.delete(other), other);
    assert.throws(() => compact.set(other, { name: 'x' }), RangeError, other);
  }
  assert.is(compact.size, 2);
});

table('deletes and overwrites, and reuses the space of deleted reports', () => {
  const compact = new ReportTable();
  for (let round = 0; round < 5; round += 1) {
    for (let i = 0; i < 50_000; i += 1)
      compact.set(String(i), { name: `report number ${i} of round ${round}`, tag: 'finance' });
    for (let i = 0; i < 50_000; i += 1) assert.ok(compact.delete(String(i)));
  }
  assert.is(compact.size, 0);
  assert.ok(compact.arenaBytes <= 16 * 1024 * 1024, `arena of ${compact.arenaBytes} bytes after deleting everything`);
  compact.set('5', { name: 'a' });
  compact.set('5', { name: 'b', tag: 'c' });
  assert.equal(compact.get('5'), { name: 'b', tag: 'c' });
  assert.not.ok(compact.delete('6'));
});

table('gives the same state digest as the canonical form of a Map', () => {
  assert.is(stateDigest(tableOf(samples)), stateDigest(new Map(samples)));
  assert.is(stateDigest(new ReportTable()), stateDigest(new Map()));
});

table('orders ids numerically over the whole int64 range: small, snowflake-sized, negative, the edges', () => {
  const next = random(7);
  const values = [
    ...INT64_EDGES,
    ...Array.from({ length: 3000 }, () => randomInt64(next)),
    ...Array.from({ length: 3000 }, () => BigInt(Math.floor(next() * 2 ** 32))),
  ];
  const reports = [...new Set(values)].map((value, i): [string, StoredReport] => [String(value), { name: `r${i}` }]);
  assert.is(stateDigest(tableOf(reports)), stateDigest(new Map(reports)));
  assert.equal([...tableOf(reports).keys()], [...new Set(values)].sort((a, b) => (a < b ? -1 : 1)).map(String));
});

table("joins the tables of a sharded fold's shards, and takes over a table whole", () => {
  const bits = 2;
  const shards = Array.from({ length: 2 ** bits }, (_, shard) => ReportTable.forShard(bits, shard));
  for (const [id, report] of samples) (shards[shardOfId(id, bits)] as ReportTable).set(id, report);
  assert.ok(shards.filter((shard) => shard.size > 0).length > 1, 'the reports lie in several shards');
  const joined = ReportTable.joinShards(shards);
  assert.equal(new Map(joined), new Map(samples));
  assert.is(stateDigest(joined), stateDigest(new Map(samples)));
  joined.set('100', { name: 'written after the join' });
  assert.equal(joined.get('100'), { name: 'written after the join' });
  const misplaced = [ReportTable.forShard(1, 0), ReportTable.forShard(1, 1)];
  const [id] = samples.find(([sample]) => shardOfId(sample, 1) === 1) as [string, StoredReport];
  (misplaced[0] as ReportTable).set(id, { name: 'in the wrong shard' });
  assert.throws(() => ReportTable.joinShards(misplaced), /in the table of another shard/);
  const empty = new ReportTable();
  empty.takeOver(ReportTable.fromParts(tableOf(samples).parts()));
  assert.equal(new Map(empty), new Map(samples));
  assert.throws(() => empty.takeOver(new ReportTable()), /only an empty report table/);
});

table('round-trips through its byte form', () => {
  const chunks: Buffer[] = [];
  const out = new BytesOut((bytes) => chunks.push(bytes));
  tableOf(samples).writeTo(out);
  out.flush();
  const input = new BytesIn(Buffer.concat(chunks));
  assert.equal(new Map(ReportTable.readFrom(input)), new Map(samples));
  assert.ok(input.done);
});

function bytesOf(compact: ReportTable): Buffer {
  const chunks: Buffer[] = [];
  const out = new BytesOut((bytes) => chunks.push(bytes));
  compact.writeTo(out);
  out.flush();
  return Buffer.concat(chunks);
}

// The largest record the configuration admits: 1,048,576 characters of name and of tag, two bytes each.
const largest: StoredReport = { name: 'Ā'.repeat(1024 * 1024), tag: '€'.repeat(1024 * 1024) };

table('round-trips a record larger than a chunk whole, last in the table or followed by others', () => {
  const alone = tableOf([['1', largest]]);
  assert.equal(ReportTable.readFrom(new BytesIn(bytesOf(alone))).get('1'), largest, 'the large record last');
  const followed = tableOf([
    ['1', largest],
    ['2', { name: 'after it' }],
  ]);
  const back = ReportTable.readFrom(new BytesIn(bytesOf(followed)));
  assert.equal(back.get('1'), largest);
  assert.equal(back.get('2'), { name: 'after it' });
  assert.is(
    stateDigest(back),
    stateDigest(
      new Map([
        ['1', largest],
        ['2', { name: 'after it' }],
      ]),
    ),
  );
});

table(
  'refuses bytes whose record runs past what its chunk holds (large records as earlier versions wrote them)',
  () => {
    const bytes = bytesOf(tableOf([['1', largest]]));
    // u32 chunk count, u32 chunk length, u32 bytes used: cut "used" to the 4 MiB chunk size, as they did.
    bytes.writeUInt32LE(4 * 1024 * 1024, 8);
    const cut = Buffer.concat([bytes.subarray(0, 12 + 4 * 1024 * 1024), bytes.subarray(12 + bytes.readUInt32LE(4))]);
    assert.throws(() => ReportTable.readFrom(new BytesIn(cut)), /a chunk of \d+ bytes with 4194304 used/);
    // A chunk of the usual size whose bytes used end inside its last record.
    const small = bytesOf(tableOf([['1', { name: 'a name of some length' }]]));
    const used = small.readUInt32LE(8);
    small.writeUInt32LE(used - 1, 8);
    const shorter = Buffer.concat([small.subarray(0, 12 + used - 1), small.subarray(12 + used)]);
    shorter.writeDoubleLE(used - 1, 12 + used - 1); // the fill, where the bytes used end
    assert.throws(() => ReportTable.readFrom(new BytesIn(shorter)), /a report at 0 points outside the table's bytes/);
  },
);

table("compacts a join of shards' tables whose holes are a third of their records, which no shard alone would", () => {
  const name = 'x'.repeat(1000);
  const shards = [ReportTable.forShard(1, 0), ReportTable.forShard(1, 1)];
  const shardOf = (id: number) => shards[shardOfId(String(id), 1)] as ReportTable;
  for (let id = 0; id < 12_000; id += 1) shardOf(id).set(String(id), { name });
  // Two in five deleted: 4.8 MB of holes beside 7.2 MB of live records, under the holes-are-most threshold.
  for (let id = 0; id < 12_000; id += 5) {
    shardOf(id).delete(String(id));
    shardOf(id + 1).delete(String(id + 1));
  }
  const before = shards.reduce((sum, shard) => sum + shard.arenaBytes, 0);
  assert.ok(before >= 12 * 2 ** 20, `the shards kept their holes: ${before} bytes`);
  const joined = ReportTable.joinShards(shards);
  assert.ok(joined.arenaBytes <= 8 * 2 ** 20, `the join compacted: ${joined.arenaBytes} bytes`);
  assert.equal([joined.size, joined.deletedIds], [7200, 4800]);
  assert.equal(joined.get('2'), { name });
  assert.is(joined.get('1'), undefined);
});

table(
  'refuses an arena whose chunk count, partly filled chunks or fill no table writes, before allocating for them',
  () => {
    const arena = (write: (out: BytesOut) => void) => {
      const chunks: Buffer[] = [];
      const out = new BytesOut((bytes) => chunks.push(bytes));
      write(out);
      out.u32(0); // an empty id table follows: depth 0, one segment...
      out.flush();
      return new BytesIn(Buffer.concat(chunks));
    };
    const refused = (write: (out: BytesOut) => void, reason: RegExp) =>
      assert.throws(
        () => ReportTable.readFrom(arena(write)),
        (error: unknown) => error instanceof RangeError && reason.test(error.message),
        String(reason),
      );
    /** `chunks` chunks said, then one of `length` bytes with 10 used, written. */
    const chunk = (chunks: number, length: number) => (out: BytesOut) => {
      out.u32(chunks);
      out.u32(length);
      out.u32(10);
      out.bytes(Buffer.alloc(10));
    };
    refused((out) => out.u32(2 ** 20), /an arena of 1048576 chunks/);
    // A chunk other than the last written in part: 4 MiB asked for 10 bytes of the file.
    refused(chunk(2, 4 * 2 ** 20), /a chunk of 4194304 bytes with 10 used/);
    refused(chunk(1, 8 * 2 ** 20), /a chunk of 8388608 bytes with 10 used/);
    // New records would go over the last record written.
    refused((out) => {
      chunk(1, 4 * 2 ** 20)(out);
      out.f64(4);
      out.f64(10);
      out.f64(0);
    }, /an arena filled to 4, 10 bytes used, 0 holes/);
  },
);

table.run();
