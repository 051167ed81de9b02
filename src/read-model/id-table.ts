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
import { emptyDirectory, forEachSegmentIn, MAX_DEPTH, pointEntries, type IdDirectory } from './id-directory.js';
import {
  capacityFor,
  hashId,
  type IdSegment,
  MAX_SEGMENT_SLOTS,
  NO_RECORD,
  prefixOf,
  type SlotVisit,
} from './id-segment.js';
import { bytesOf, readIdDirectory, writeIdDirectory } from './id-table-format.js';
import { directoryFromParts, partsOf, type IdTableParts } from './id-table-parts.js';
import { joinShards, shardDirectory } from './id-table-shards.js';
import {
  forEachLiveId,
  forEachLiveRecord,
  liveInOrder,
  liveRecords,
  segmentCount,
  slotBytesOf,
  slotCount,
} from './id-table-walks.js';
import type { Int64Keys } from './int64-sort.js';

export { MAX_VERSION, NO_RECORD } from './id-segment.js';
export type { IdSegmentParts, IdTableParts } from './id-table-parts.js';

/**
 * A slot is named to callers as directory index × SLOT_SPAN + slot: a number that stays valid until
 * the next `add` (which may grow or split a segment, and returns the new id's name).
 */
const SLOT_SPAN = 2 ** 26;

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
    this.directory = emptyDirectory(depth);
  }

  /** An empty table for shard `shard` of 2^bits, with room for `expectedIds` of its ids (id-table-shards.ts). */
  static forShard(bits: number, shard: number, expectedIds = 0): IdTable {
    return IdTable.of(shardDirectory(bits, shard, expectedIds));
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
    return slotBytesOf(this.directory, this.depth);
  }

  /** Segments. */
  get segments(): number {
    return segmentCount(this.directory, this.depth);
  }

  /** Slots of all segments. */
  get slots(): number {
    return slotCount(this.directory, this.depth);
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
      pointEntries(this.directory, this.depth, segment.regrown(capacityFor(segment.ids + 1)));
      return;
    }
    const parts = segment.depth < MAX_DEPTH ? segment.split() : undefined;
    if (parts === undefined) {
      pointEntries(this.directory, this.depth, segment.regrown(Math.ceil(segment.capacity * 1.25)));
      return;
    }
    if (segment.depth === this.depth) this.doubleDirectory();
    for (const part of parts) pointEntries(this.directory, this.depth, part);
  }

  private doubleDirectory(): void {
    const old = this.directory;
    this.directory = Array.from({ length: old.length * 2 }, (_, i) => old[i >>> 1] as IdSegment);
    this.depth += 1;
  }

  /** Calls `visit` with every live id's record (id-table-walks.ts). */
  forEachRecord(visit: (record: number) => void): void {
    forEachLiveRecord(this.contents(), visit);
  }

  /** Calls `visit` with every live id's words, record and version, in slot order (id-table-walks.ts). */
  forEachLive(visit: SlotVisit): void {
    forEachLiveId(this.contents(), visit);
  }

  /** The records of the live ids, in slot order. */
  records(): Uint32Array {
    return liveRecords(this.contents());
  }

  /** The live ids (their words) and records, in numeric order of ids (the canonical order). */
  liveInOrder(): { readonly keys: Int64Keys; readonly count: number } {
    return liveInOrder(this.contents());
  }

  /** Calls `update` with every live id's record, letting it give a new one (the table moving its records). */
  remap(update: (record: number) => number): void {
    forEachSegmentIn(this.directory, this.depth, (segment) => segment.remap(update));
  }

  /** What the table holds, for another thread (the arrays move with the message, see fromParts). */
  parts(): IdTableParts {
    return partsOf(this.contents());
  }

  /** The table another thread's `parts()` described (this process wrote it: not checked again). */
  static fromParts(parts: IdTableParts): IdTable {
    return IdTable.of(directoryFromParts(parts));
  }

  /** The tables of a sharded fold's shards (made with `forShard`) as one (joinShards in id-table-shards.ts). */
  static joinShards(tables: readonly IdTable[], bases: readonly number[]): IdTable {
    const shards = tables.map((table) => table.contents());
    return IdTable.of(joinShards(shards, bases));
  }

  /** The table as bytes, copied (see writeIdDirectory). */
  writeTo(out: BytesOut): void {
    writeIdDirectory(out, this.contents(), (segment) => out.bytes(bytesOf(segment.peek())));
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
    writeIdDirectory(out, this.contents(), (segment) => out.unchanging(bytesOf(segment.hold())));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      forEachSegmentIn(this.directory, this.depth, (segment) => segment.release());
      this.held = false;
    };
  }

  /** Reads what `writeTo` wrote; RangeError when it does not hold a table (readIdDirectory). */
  static readFrom(input: BytesReader): IdTable {
    return IdTable.of(readIdDirectory(input, SLOT_SPAN));
  }

  /** Its directory and counts, for the modules that move, join and write a table. */
  private contents(): IdDirectory {
    return { directory: this.directory, depth: this.depth, ids: this.ids, live: this.live };
  }

  /** The table of a directory made, moved, joined or read elsewhere (the directory is the table's from here on). */
  private static of(contents: IdDirectory): IdTable {
    const table = new IdTable(0);
    table.directory = contents.directory;
    table.depth = contents.depth;
    table.ids = contents.ids;
    table.live = contents.live;
    return table;
  }
}
