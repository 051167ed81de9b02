// One shard of a sharded fold. Events of different reports commute, so a long history can be
// folded on several threads at once: each is handed every record of the file log (by the log's
// frame walker) but decodes and folds only those whose key falls in its shard, into a read model of
// its own. The idempotency
// keys need one more thing to merge: the offset where each was first seen (the earliest wins, as
// in a fold from the start). A key is the report id for every record this service writes; a
// record whose event names a report of another shard (a key that is not the id) is `misrouted`,
// and the caller folds the history on one thread instead. Pure: records' bytes in, a read model out.
import type { FrameParts } from '../log/file/frames.js';
import { decodeForFold } from './fold-decode.js';
import { hashId, prefixOf } from './id-segment.js';
import { parseId, parseIdBytes } from './int64-id.js';
import { applyInput, createReadModel, type ReadModel } from './read-model.js';
import { ReportTable } from './report-table.js';

/**
 * The shard of a report id, of 2^bits: the first bits of its hash in the id table (a shard's table
 * holds only its own segments, which a join hands over, ReportTable.joinShards). An id that is not
 * a canonical int64 (no table holds it) is shard 0's. `key` is where the id's words are parsed to.
 */
export function shardOfId(id: string, bits: number, key = new Uint32Array(2)): number {
  return parseId(id, key) ? prefixOf(hashId(key[0] as number, key[1] as number), bits) : 0;
}

/** shardOfId of the id a record's key holds (its bytes from `start` to `end`). */
function shardOfKey(bytes: Buffer, start: number, end: number, bits: number, key: Uint32Array): number {
  return parseIdBytes(bytes, start, end, key) ? prefixOf(hashId(key[0] as number, key[1] as number), bits) : 0;
}

/** Whether a record's key (its bytes from `start` to `end`) is `id` (a report id: ASCII), as it is for every record this service writes. */
function keyIs(bytes: Buffer, start: number, end: number, id: string): boolean {
  if (end - start !== id.length) return false;
  for (let i = 0; i < id.length; i += 1) if (bytes[start + i] !== id.charCodeAt(i)) return false;
  return true;
}

/** The shards of a sharded fold for `threads` threads: a power of two, at most `threads`, as 2^bits. */
export function shardBits(threads: number): number {
  return Math.floor(Math.log2(Math.max(1, Math.floor(threads))));
}
/** A record skipped because it is not a valid report event. */
export interface SkippedRecord {
  readonly offset: number;
  readonly reason: string;
}

export class ShardFold {
  readonly model: ReadModel;
  /** Where each record's id is parsed to, to find its shard. */
  readonly #key = new Uint32Array(2);
  /** Offset of the first record carrying each idempotency key the shard holds. */
  readonly keyOffsets = new Map<string, number>();
  /** Where the newest sealed create of this shard lies (its key is the model's newestKey). */
  newestKeyAt: number | undefined;
  readonly skipped: SkippedRecord[] = [];
  /** A record whose event belongs to another shard: the fold must not be sharded. */
  misrouted: number | undefined;
  /** The log's timestamp of the last record handed over. */
  lastTimestampMs: number | undefined;

  /** Shard `shard` of 2^bits, of a history of `records` records. */
  constructor(
    private readonly shard: number,
    private readonly bits: number,
    records = 0,
  ) {
    // Room made at once for ids of a quarter of the history's records: fewer than any history of
    // creates and deletes has (a report's create and its delete make two records), so that the table
    // ends as it would have grown by itself (room for half of them left a history of a million
    // creates and half as many deletes 12 % more slot bytes), having grown less of the way.
    this.model = createReadModel({ reports: ReportTable.forShard(bits, shard, Math.floor(records / 4 / 2 ** bits)) });
  }

  /**
   * Folds the record at `offset` (whose parts lie in `buffer`) if it is of this shard; returns
   * false once a record proves the fold must not be sharded (it is `misrouted`).
   */
  fold(buffer: Buffer, offset: number, { timestampMs, keyStart, keyEnd, end }: FrameParts): boolean {
    this.lastTimestampMs = timestampMs;
    if (shardOfKey(buffer, keyStart, keyEnd, this.bits, this.#key) !== this.shard) return true;
    const input = decodeForFold(buffer, keyEnd, end);
    if (
      input.ok &&
      !keyIs(buffer, keyStart, keyEnd, input.event.data.id) &&
      shardOfId(input.event.data.id, this.bits, this.#key) !== this.shard
    ) {
      this.misrouted = offset;
      return false;
    }
    applyInput(this.model, { partition: 0, offset }, input);
    if (!input.ok) {
      this.skipped.push({ offset, reason: input.reason });
      return true;
    }
    const { event } = input;
    if (event.type === 'ReportCreated' && 'sealed' in event.data) this.newestKeyAt = offset;
    // Where the key was claimed: an event void as superseded carries it without claiming it.
    const key = event.data.idempotencyKey;
    if (key !== undefined && !this.keyOffsets.has(key) && this.model.keys.has(key)) this.keyOffsets.set(key, offset);
    return true;
  }
}
