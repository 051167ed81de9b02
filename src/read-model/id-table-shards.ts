// The id tables of a sharded fold (sharded-fold.ts): the directory each shard's table starts from,
// and the shards' directories joined into one by handing their segments over (id-table.ts).
import { forEachSegmentIn, MAX_DEPTH, pointEntries, type IdDirectory } from './id-directory.js';
import { capacityFor, IdSegment, MIN_SEGMENT_SLOTS, SEGMENT_IDS } from './id-segment.js';
import { idText } from './int64-id.js';

/**
 * An empty table for shard `shard` of 2^bits (its ids' hashes begin with the bits of `shard`,
 * see joinShards), with room for `expectedIds` of them made at once: a table that grows to them
 * from nothing moves each id five or six times (each growth and split of its segment), a fifth of
 * a fold's work. The other shards' parts of the directory get one empty segment each.
 */
export function shardDirectory(bits: number, shard: number, expectedIds: number): IdDirectory {
  const deeper = Math.min(MAX_DEPTH - bits, Math.ceil(Math.log2(Math.max(1, expectedIds / SEGMENT_IDS))));
  const depth = bits + deeper;
  const directory = new Array<IdSegment>(2 ** depth);
  for (let other = 0; other < 2 ** bits; other += 1)
    if (other !== shard) pointEntries(directory, depth, new IdSegment(MIN_SEGMENT_SLOTS, bits, other));
  const slots = capacityFor(Math.ceil(expectedIds / 2 ** deeper));
  for (let part = 0; part < 2 ** deeper; part += 1)
    pointEntries(directory, depth, new IdSegment(slots, depth, shard * 2 ** deeper + part));
  return { directory, depth, ids: 0, live: 0 };
}

/**
 * The tables of a sharded fold's shards as one: the table of shard s (of 2^bits, made with
 * `forShard`) holds only ids whose hashes begin with the bits of s, and hands over the
 * segments under s as they are, with `bases[s]` added to the records of its live ids (where its
 * arena's chunks went). The tables are not to be used after.
 */
export function joinShards(tables: readonly IdDirectory[], bases: readonly number[]): IdDirectory {
  const bits = Math.log2(tables.length);
  if (!Number.isInteger(bits)) throw new Error(`${tables.length} shards: a power of two is needed`);
  const depth = Math.max(...tables.map((table) => table.depth));
  const directory = new Array<IdSegment>(2 ** depth);
  let ids = 0;
  let live = 0;
  tables.forEach((table, shard) => {
    if (table.depth < bits) throw new Error(`the table of shard ${shard} is not a shard's table`);
    const base = bases[shard] ?? 0;
    forEachSegmentIn(table.directory, table.depth, (segment) => {
      if (segment.prefix >>> (segment.depth - bits) !== shard) {
        segment.forEach((low, high) => {
          throw new Error(`report ${idText(low, high)} is in the table of another shard (${shard})`);
        });
        return;
      }
      if (base !== 0) segment.remap((record) => record + base);
      pointEntries(directory, depth, segment);
    });
    ids += table.ids;
    live += table.live;
  });
  return { directory, depth, ids, live };
}
