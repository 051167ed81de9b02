// A report's version in the report table: how many events took effect on its id, kept after the
// report is deleted (the fold voids a late write decided on an older version), through compaction,
// the join of a sharded fold's tables, moves between threads and the table's byte form, while everything else sees live
// reports only (the state digest of a history does not change).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BytesIn, BytesOut } from '../../src/read-model/bytes.js';
import { ReportTable } from '../../src/read-model/report-table.js';
import { shardOfId } from '../../src/read-model/shard-fold.js';
import { stateDigest } from '../../src/projector/fold-log.js';

const SNOWFLAKE = '7000000000000000001';
const LOWEST = '-9223372036854775808';

/**
 * Created 1, deleted 2 (SNOWFLAKE), created again 3 (LOWEST), created 1 ('5'); each id's events
 * written to the table `tableOf` gives for it (one table unless given).
 */
function history(tableOf?: (id: string) => ReportTable): ReportTable {
  const table = new ReportTable();
  const to = tableOf ?? (() => table);
  to(SNOWFLAKE).set(SNOWFLAKE, { name: 'snowflake' });
  to(SNOWFLAKE).delete(SNOWFLAKE);
  to(LOWEST).set(LOWEST, { name: 'lowest', tag: 't' });
  to(LOWEST).delete(LOWEST);
  to(LOWEST).set(LOWEST, { name: 'lowest again' });
  to('5').set('5', { name: 'five' });
  return table;
}

function versions(table: ReportTable): Record<string, number> {
  return Object.fromEntries([SNOWFLAKE, LOWEST, '5', '6'].map((id) => [id, table.version(id)]));
}

const EXPECTED = { [SNOWFLAKE]: 2, [LOWEST]: 3, '5': 1, '6': 0 };

function roundTrip(table: ReportTable): ReportTable {
  const chunks: Buffer[] = [];
  const out = new BytesOut((bytes) => chunks.push(bytes));
  table.writeTo(out);
  out.flush();
  return ReportTable.readFrom(new BytesIn(Buffer.concat(chunks)));
}

const version = suite('ReportTable.version');

version('is 0 for an id never written, and one more for each create and each delete that took effect', () => {
  assert.equal(versions(history()), EXPECTED);
});

version('keeps a deleted id and its version while size, has, get, keys and the digest see live reports only', () => {
  const table = history();
  assert.equal([table.size, table.deletedIds], [2, 1]);
  assert.not.ok(table.has(SNOWFLAKE));
  assert.is(table.get(SNOWFLAKE), undefined);
  assert.equal([...table.keys()], [LOWEST, '5']);
  assert.is(
    stateDigest(table),
    stateDigest(
      new Map([
        [LOWEST, { name: 'lowest again' }],
        ['5', { name: 'five' }],
      ]),
    ),
  );
});

version('does not change for a delete of an id that is not live, and rises for an overwrite', () => {
  const table = history();
  assert.not.ok(table.delete(SNOWFLAKE));
  assert.not.ok(table.delete('6'));
  table.set('5', { name: 'five, replaced' });
  assert.equal(versions(table), { ...EXPECTED, '5': 2 });
  assert.is(table.deletedIds, 1);
});

version('survives the byte form, a move to another thread and a take-over, for live and deleted ids', () => {
  assert.equal(versions(roundTrip(history())), EXPECTED);
  assert.equal(versions(ReportTable.fromParts(history().parts())), EXPECTED);
  const empty = new ReportTable();
  empty.takeOver(history());
  assert.equal(versions(empty), EXPECTED);
  const remembers = new ReportTable();
  remembers.set('1', { name: 'one' });
  remembers.delete('1');
  assert.throws(() => remembers.takeOver(history()), /only an empty report table/);
});

version('survives compaction: live records move, deleted ids keep their versions', () => {
  const table = new ReportTable();
  const name = 'x'.repeat(100);
  for (let id = 0; id < 60_000; id += 1) table.set(String(id), { name });
  const before = table.arenaBytes;
  for (let id = 0; id < 50_000; id += 1) table.delete(String(id));
  assert.ok(table.arenaBytes < before, `the arena of ${table.arenaBytes} bytes was compacted`);
  assert.equal([table.size, table.deletedIds, table.version('1'), table.version('59999')], [10_000, 50_000, 2, 1]);
  assert.equal(table.get('59999'), { name });
  table.set('1', { name: 'back' });
  assert.equal([table.version('1'), table.get('1')], [3, { name: 'back' }]);
});

version("is kept through a join of a sharded fold's tables, deleted ids included", () => {
  const shards = [ReportTable.forShard(1, 0), ReportTable.forShard(1, 1, 1000)];
  const shardOf = (id: string) => shards[shardOfId(id, 1)] as ReportTable;
  history(shardOf);
  shardOf('6').set('6', { name: 'six' });
  const joined = ReportTable.joinShards(shards);
  assert.equal(versions(joined), { ...EXPECTED, '6': 1 });
  assert.equal([joined.size, joined.deletedIds], [3, 1]);
});

version.run();
