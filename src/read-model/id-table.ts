// Report id -> its version and the position of its record in the report table, for every int64 id
// (int64-id.ts). A JS Map of a million keys costs ~40 bytes and two cache misses a lookup, and must
// be rebuilt entry by entry when a snapshot is loaded. This table is a directory of small segments
// (id-segment.ts), as in extendible hashing or Java's old ConcurrentHashMap: the first bits of an
// id's hash choose the segment, and a segment holds its ids in one array of 16-byte slots.
// One mechanism does everything that changes its shape, one segment at a time:
// - growth: a full segment grows by a quarter or, at its largest, splits in two by one more bit of
//   the hash (tens of µs; a rehash of a million ids at once held the event loop for 125-230 ms);
// - a snapshot: it holds the segments' arrays as they are, and a segment written meanwhile copies
//   its array first (copy before write, in the segment itself, so no write can forget it);
// - a sharded fold: each shard's table holds the ids of its own first bits of the hash, so the
//   tables hand their segments over to one directory instead of being re-inserted.
import type { BytesOut, BytesReader } from './bytes.js';
import {
  capacityFor,
  hashId,
  IdSegment,
  MAX_SEGMENT_SLOTS,
  MIN_SEGMENT_SLOTS,
  SEGMENT_IDS,
  NO_RECORD,
  prefixOf,
  readSegment,
  SLOT_BYTES,
} from './id-segment.js';
import { idText } from './int64-id.js';
import { sortInt64, type Int64Keys } from './int64-sort.js';

export { MAX_VERSION, NO_RECORD } from './id-segment.js';

/**
 * A slot is named to callers as directory index × SLOT_SPAN + slot: a number that stays valid until
 * the next `add` (which may grow or split a segment, and returns the new id's name).
 */
const SLOT_SPAN = 2 ** 26;
/**
 * Bits of the hash the directory uses at most: a million entries (8 MB), for billions of ids, far
 * beyond what 32-bit record positions allow. Past it a full segment grows instead of splitting.
 */
const MAX_DEPTH = 20;

/** One segment as a structured clone carries it (its words are transferable). */
export interface IdSegmentParts {
  readonly capacity: number;
  readonly depth: number;
  readonly prefix: number;
  readonly ids: number;
  readonly words: Uint32Array;
}

/** An IdTable's contents as a structured clone carries them. */
export interface IdTableParts {
  readonly depth: number;
  readonly segments: readonly IdSegmentParts[];
  readonly ids: number;
  readonly live: number;
}

export class IdTable {
  /** Entry i: the segment of the ids whose hashes begin with the `depth` bits of i. */
  private directory: IdSegment[];
  private depth: number;
  /** Ids held, live or deleted. */
  private ids = 0;
  private live = 0;
  /** Whether a snapshot holds the segments' arrays (`snapshot`, until its release). */
  private held = false;
  /** The last lookup that found no id: its id, its segment and the empty slot where it ended (add puts the id there). */
  private readonly missed = { low: 0, high: 0, segment: undefined as IdSegment | undefined, slot: 0 };

  /** An empty table of 2^depth segments. */
  constructor(depth = 0) {
    this.depth = depth;
    this.directory = Array.from({ length: 2 ** depth }, (_, prefix) => new IdSegment(MIN_SEGMENT_SLOTS, depth, prefix));
  }

  /**
   * An empty table for shard `shard` of 2^bits (its ids' hashes begin with the bits of `shard`,
   * see joinShards), with room for `expectedIds` of them made at once: a table that grows to them
   * from nothing moves each id five or six times (each growth and split of its segment), a fifth of
   * a fold's work. The other shards' parts of the directory get one empty segment each.
   */
  static forShard(bits: number, shard: number, expectedIds = 0): IdTable {
    const deeper = Math.min(MAX_DEPTH - bits, Math.ceil(Math.log2(Math.max(1, expectedIds / SEGMENT_IDS))));
    const table = new IdTable(0);
    table.depth = bits + deeper;
    table.directory = new Array<IdSegment>(2 ** table.depth);
    for (let other = 0; other < 2 ** bits; other += 1)
      if (other !== shard) table.replace([new IdSegment(MIN_SEGMENT_SLOTS, bits, other)]);
    const slots = capacityFor(Math.ceil(expectedIds / 2 ** deeper));
    for (let part = 0; part < 2 ** deeper; part += 1)
      table.replace([new IdSegment(slots, table.depth, shard * 2 ** deeper + part)]);
    return table;
  }

  /** Live ids. */
  get size(): number {
    return this.live;
  }

  /** Deleted ids remembered with their versions. */
  get deletedIds(): number {
    return this.ids - this.live;
  }

  /** Bytes of the slots and the directory (what the table costs; 4 a slot are the versions). */
  get slotBytes(): number {
    let bytes = this.directory.length * 8;
    this.forEachSegment((segment) => {
      bytes += segment.byteLength;
    });
    return bytes;
  }

  /** Segments. */
  get segments(): number {
    let count = 0;
    this.forEachSegment(() => {
      count += 1;
    });
    return count;
  }

  /** Slots of all segments. */
  get slots(): number {
    let count = 0;
    this.forEachSegment((segment) => {
      count += segment.capacity;
    });
    return count;
  }

  /**
   * The slot holding `key` ([low, high], see int64-id.ts), or -1. The key is passed as its array,
   * not as two numbers: a word beyond 2^30 would be boxed at every call that is not inlined.
   */
  find(key: Uint32Array): number {
    const low = key[0] as number;
    const high = key[1] as number;
    const hash = hashId(low, high);
    const index = prefixOf(hash, this.depth);
    const segment = this.directory[index] as IdSegment;
    const slot = segment.find(hash, low, high);
    if (slot >= 0) return index * SLOT_SPAN + slot;
    const { missed } = this;
    missed.low = low;
    missed.high = high;
    missed.segment = segment;
    missed.slot = -1 - slot;
    return -1;
  }

  /** The record position of the id at `slot`, or NO_RECORD when its report is deleted. */
  recordAt(slot: number): number {
    const index = Math.floor(slot / SLOT_SPAN);
    return (this.directory[index] as IdSegment).recordAt(slot - index * SLOT_SPAN);
  }

  versionAt(slot: number): number {
    const index = Math.floor(slot / SLOT_SPAN);
    return (this.directory[index] as IdSegment).versionAt(slot - index * SLOT_SPAN);
  }

  /** One more event took effect on the id at `slot`: its record is now `record` (NO_RECORD: deleted). */
  update(slot: number, record: number): void {
    const index = Math.floor(slot / SLOT_SPAN);
    const segment = this.directory[index] as IdSegment;
    const within = slot - index * SLOT_SPAN;
    const previous = segment.recordAt(within);
    if (previous === NO_RECORD && record !== NO_RECORD) this.live += 1;
    else if (previous !== NO_RECORD && record === NO_RECORD) this.live -= 1;
    segment.update(within, record);
  }

  /** Adds an id the table does not hold, with its record (or NO_RECORD) and version (at least 1); its slot. */
  add(key: Uint32Array, record: number, version: number): number {
    const low = key[0] as number;
    const high = key[1] as number;
    const hash = hashId(low, high);
    let index = prefixOf(hash, this.depth);
    let segment = this.directory[index] as IdSegment;
    while (segment.full) {
      this.makeRoom(segment);
      index = prefixOf(hash, this.depth);
      segment = this.directory[index] as IdSegment;
    }
    const { missed } = this;
    const slot =
      missed.segment === segment && missed.low === low && missed.high === high && segment.isEmpty(missed.slot)
        ? segment.addAt(missed.slot, low, high, record, version)
        : segment.add(hash, low, high, record, version);
    missed.segment = undefined;
    this.ids += 1;
    if (record !== NO_RECORD) this.live += 1;
    return index * SLOT_SPAN + slot;
  }

  /**
   * A full segment grows by a quarter, or at its largest splits in two by the next bit of the hash
   * (the directory doubling when it must). Ids that the next bit would not part (ids chosen to share
   * their hash's first bits; random ids never do) grow their segment past its largest instead, so
   * the directory stays within MAX_DEPTH.
   */
  private makeRoom(segment: IdSegment): void {
    if (segment.capacity < MAX_SEGMENT_SLOTS) {
      this.replace([segment.regrown(capacityFor(segment.ids + 1))]);
      return;
    }
    const parts = segment.depth < MAX_DEPTH ? segment.split() : undefined;
    if (parts === undefined) {
      this.replace([segment.regrown(Math.ceil(segment.capacity * 1.25))]);
      return;
    }
    if (segment.depth === this.depth) this.doubleDirectory();
    this.replace(parts);
  }

  private doubleDirectory(): void {
    const old = this.directory;
    this.directory = Array.from({ length: old.length * 2 }, (_, i) => old[i >>> 1] as IdSegment);
    this.depth += 1;
  }

  /** Points the directory's entries of each of `segments` at it. */
  private replace(segments: readonly IdSegment[]): void {
    for (const segment of segments) {
      const shift = this.depth - segment.depth;
      const end = (segment.prefix + 1) * 2 ** shift;
      for (let i = segment.prefix * 2 ** shift; i < end; i += 1) this.directory[i] = segment;
    }
  }

  /** Calls `visit` with each segment once, in directory order (a segment's entries lie together). */
  private forEachSegment(visit: (segment: IdSegment) => void): void {
    const { directory, depth } = this;
    for (let i = 0; i < directory.length;) {
      const segment = directory[i] as IdSegment;
      visit(segment);
      i += 2 ** (depth - segment.depth);
    }
  }

  /** Calls `visit` with every live id's record. */
  forEachRecord(visit: (record: number) => void): void {
    this.forEachSegment((segment) =>
      segment.forEach((_low, _high, record) => {
        if (record !== NO_RECORD) visit(record);
      }),
    );
  }

  /** The records of the live ids, in slot order. */
  records(): Uint32Array {
    const records = new Uint32Array(this.live);
    let count = 0;
    this.forEachRecord((record) => {
      records[count] = record;
      count += 1;
    });
    return records.subarray(0, count);
  }

  /** The live ids (their words) and records, in numeric order of ids (the canonical order). */
  liveInOrder(): { readonly keys: Int64Keys; readonly count: number } {
    const { live } = this;
    const keys = { low: new Uint32Array(live), high: new Uint32Array(live), payload: new Uint32Array(live) };
    let count = 0;
    this.forEachSegment((segment) =>
      segment.forEach((low, high, record) => {
        if (record === NO_RECORD) return;
        keys.low[count] = low;
        keys.high[count] = high;
        keys.payload[count] = record;
        count += 1;
      }),
    );
    return { keys: sortInt64(keys, count), count };
  }

  /** Calls `update` with every live id's record, letting it give a new one (the table moving its records). */
  remap(update: (record: number) => number): void {
    this.forEachSegment((segment) => segment.remap(update));
  }

  /** What the table holds, for another thread (the arrays move with the message, see fromParts). */
  parts(): IdTableParts {
    const segments: IdSegmentParts[] = [];
    this.forEachSegment((segment) =>
      segments.push({
        capacity: segment.capacity,
        depth: segment.depth,
        prefix: segment.prefix,
        ids: segment.ids,
        words: segment.transferable(),
      }),
    );
    return { depth: this.depth, segments, ids: this.ids, live: this.live };
  }

  /** The table another thread's `parts()` described (this process wrote it: not checked again). */
  static fromParts(parts: IdTableParts): IdTable {
    const table = new IdTable(0);
    table.directory = new Array<IdSegment>(2 ** parts.depth);
    table.depth = parts.depth;
    table.ids = parts.ids;
    table.live = parts.live;
    table.replace(parts.segments.map((part) => new IdSegment(part.capacity, part.depth, part.prefix, part)));
    return table;
  }

  /**
   * The tables of a sharded fold's shards as one: the table of shard s (of 2^bits, made with
   * `forShard`) holds only ids whose hashes begin with the bits of s, and hands over the
   * segments under s as they are, with `bases[s]` added to the records of its live ids (where its
   * arena's chunks went). The tables are not to be used after.
   */
  static joinShards(tables: readonly IdTable[], bases: readonly number[]): IdTable {
    const bits = Math.log2(tables.length);
    if (!Number.isInteger(bits)) throw new Error(`${tables.length} shards: a power of two is needed`);
    const joined = new IdTable(0);
    joined.depth = Math.max(...tables.map((table) => table.depth));
    joined.directory = new Array<IdSegment>(2 ** joined.depth);
    tables.forEach((table, shard) => {
      if (table.depth < bits) throw new Error(`the table of shard ${shard} is not a shard's table`);
      const base = bases[shard] ?? 0;
      table.forEachSegment((segment) => {
        if (segment.prefix >>> (segment.depth - bits) !== shard) {
          segment.forEach((low, high) => {
            throw new Error(`report ${idText(low, high)} is in the table of another shard (${shard})`);
          });
          return;
        }
        if (base !== 0) segment.remap((record) => record + base);
        joined.replace([segment]);
      });
      joined.ids += table.ids;
      joined.live += table.live;
    });
    return joined;
  }

  /**
   * The table as bytes: directory depth, segments, ids held, live ids; then per segment, in
   * directory order, its capacity, depth and prefix and its slots as they are (16 bytes each,
   * little-endian words). `write` takes the slots' bytes: copied (a table that goes on changing)
   * or held (a snapshot's, which nothing changes until it is released).
   */
  private write(out: BytesOut, slots: (segment: IdSegment) => void): void {
    out.u32(this.depth);
    out.u32(this.segments);
    out.u32(this.ids);
    out.u32(this.live);
    this.forEachSegment((segment) => {
      out.u32(segment.capacity);
      out.u32(segment.depth);
      out.u32(segment.prefix);
      slots(segment);
    });
  }

  /** The table as bytes, copied (see `write`). */
  writeTo(out: BytesOut): void {
    this.write(out, (segment) => out.bytes(bytesOf(segment.peek())));
  }

  /**
   * The table as it is now, for a snapshot taken while it goes on changing: the segments' arrays
   * go to `out` as they are, not copied, and stay as they are (a segment written meanwhile copies
   * its array first) until the returned release is called, once `out`'s bytes are written or
   * given up. One snapshot at a time.
   */
  snapshot(out: BytesOut): () => void {
    if (this.held) throw new Error('a snapshot holds the id table already');
    this.held = true;
    this.write(out, (segment) => out.unchanging(bytesOf(segment.hold())));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.forEachSegment((segment) => segment.release());
      this.held = false;
    };
  }

  /** Reads what `write` wrote; RangeError when it does not hold a table. */
  static readFrom(input: BytesReader): IdTable {
    const depth = input.u32();
    if (depth > MAX_DEPTH) throw new RangeError(`an id table of directory depth ${depth}`);
    const segments = input.u32();
    const ids = input.u32();
    const live = input.u32();
    if (segments < 1 || segments > 2 ** depth || live > ids)
      throw new RangeError(`an id table of ${segments} segments at depth ${depth}, ${ids} ids, ${live} live`);
    const table = new IdTable(0);
    table.depth = depth;
    table.directory = new Array<IdSegment>(2 ** depth);
    let heldIds = 0;
    let heldLive = 0;
    for (let n = 0; n < segments; n += 1) {
      const capacity = input.u32();
      const segmentDepth = input.u32();
      const prefix = input.u32();
      if (capacity < MIN_SEGMENT_SLOTS || capacity >= SLOT_SPAN || segmentDepth > depth || prefix >= 2 ** segmentDepth)
        throw new RangeError(`an id segment of ${capacity} slots at depth ${segmentDepth}, prefix ${prefix}`);
      // A capacity beyond the data allocates nothing.
      if (capacity * SLOT_BYTES > input.remaining)
        throw new RangeError(`an id segment of ${capacity} slots where ${input.remaining} bytes are left`);
      const { segment, live: segmentLive } = readSegment(input, capacity, segmentDepth, prefix);
      const shift = depth - segmentDepth;
      for (let i = prefix * 2 ** shift; i < (prefix + 1) * 2 ** shift; i += 1)
        if (table.directory[i] !== undefined) throw new RangeError(`two id segments for directory entry ${i}`);
      table.replace([segment]);
      heldIds += segment.ids;
      heldLive += segmentLive;
    }
    for (let i = 0; i < table.directory.length; i += 1)
      if (table.directory[i] === undefined) throw new RangeError(`no id segment for directory entry ${i}`);
    if (heldIds !== ids || heldLive !== live)
      throw new RangeError(`an id table that holds ${heldIds} ids (${heldLive} live), not ${ids} (${live})`);
    table.ids = ids;
    table.live = live;
    return table;
  }
}

function bytesOf(words: Uint32Array): Buffer {
  return Buffer.from(words.buffer, words.byteOffset, words.byteLength);
}
