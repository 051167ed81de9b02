// Report id -> its version and the position of its record in the report table. A JS Map of a
// million keys costs ~40 bytes and two cache misses a lookup, and must be rebuilt entry by entry
// when a snapshot is loaded. This is an open-addressing hash table (linear probing) in one
// Uint32Array of four words a slot, [low word, high word, record, version]: every int64 id is a key
// (int64-id.ts), a lookup touches one cache line, and a snapshot or another thread takes the
// table as one block of bytes.
// Every 64-bit value is an id, so a slot's state is never told by its key: version 0 is an empty
// slot (a new array is all empty, without a fill), and a held id whose record is NO_RECORD is a
// deleted report, kept for its version (the fold voids a late write decided on an older version).
// Ids are never removed, so there are no tombstones, and the table only grows. It grows a few
// slots at a time: a rehash of a million ids at once stopped the server's event loop for 125-230 ms
// in the middle of its writes, so the old table stays beside the new one and every add moves a few
// of its slots over (an id looked up meanwhile moves at once), until it is empty.
import type { BytesIn, BytesOut } from './bytes.js';
import { idText } from './int64-id.js';
import { sortInt64, type Int64Keys } from './int64-sort.js';
import { home, MAX_LOAD, MIN_CAPACITY, MOVED, next, NO_RECORD, probe, SLOT_WORDS } from './id-slots.js';
import { FrozenSlots } from './frozen-slots.js';
import { readIndexParts, writeIndexBytes } from './id-index-bytes.js';

export { NO_RECORD } from './id-slots.js';
/** Versions stop here rather than wrap (four billion events on one report). */
export const MAX_VERSION = 0xffffffff;
/**
 * Growing by half (not doubling) keeps the load between 0.47 and 0.7 rather than 0.35 and 0.7:
 * about a third fewer bytes a report on average, for one more rehash in three.
 */
const GROWTH = 1.5;
/**
 * Old slots moved per add while a rehash drains. The new table starts at 0.7 / 1.5 = 0.47 load;
 * moving 16 a time empties the old one after capacity / 16 adds, at 0.51 load, well before it must grow again.
 */
const DRAIN_PER_ADD = 16;

/** An IdIndex's contents as a structured clone carries them (the array is transferable). */
export interface IdIndexParts {
  readonly slots: Uint32Array;
  readonly ids: number;
  readonly live: number;
}

export class IdIndex {
  private slots: Uint32Array;
  private capacity: number;
  /** Ids held, live or deleted. */
  private ids = 0;
  private live = 0;
  /** While a rehash drains: the old table, its capacity and the next old slot to move. */
  private draining: { readonly slots: Uint32Array; readonly capacity: number; next: number } | undefined;
  /** While a snapshot copies the slots: every write to them tells it first. */
  private frozen: FrozenSlots | undefined;

  constructor(capacity = MIN_CAPACITY) {
    this.slots = new Uint32Array(capacity * SLOT_WORDS);
    this.capacity = capacity;
  }

  /** Live ids. */
  get size(): number {
    return this.live;
  }

  /** Deleted ids remembered with their versions. */
  get deletedIds(): number {
    return this.ids - this.live;
  }

  /** Bytes of the slots (what the index costs; 4 a slot are the versions). */
  get slotBytes(): number {
    return this.slots.byteLength + (this.draining?.slots.byteLength ?? 0);
  }

  /**
   * The slot holding `key` ([low, high], see int64-id.ts), or -1. The key is passed as its array,
   * not as two numbers: a word beyond 2^30 would be boxed at every call that is not inlined.
   */
  find(key: Uint32Array): number {
    const slot = probe(this.slots, this.capacity, key[0] as number, key[1] as number);
    if (slot >= 0 || this.draining === undefined) return slot;
    const old = probe(this.draining.slots, this.draining.capacity, key[0] as number, key[1] as number);
    return old < 0 ? -1 : this.moveOld(old);
  }

  /** The record position of the id at `slot`, or NO_RECORD when its report is deleted. */
  recordAt(slot: number): number {
    return this.slots[slot * SLOT_WORDS + 2] as number;
  }

  versionAt(slot: number): number {
    return this.slots[slot * SLOT_WORDS + 3] as number;
  }

  /** One more event took effect on the id at `slot`: its record is now `record` (NO_RECORD: deleted). */
  update(slot: number, record: number): void {
    const at = slot * SLOT_WORDS;
    const { slots } = this;
    this.frozen?.beforeWrite(slots, at);
    const previous = slots[at + 2] as number;
    if (previous === NO_RECORD && record !== NO_RECORD) this.live += 1;
    else if (previous !== NO_RECORD && record === NO_RECORD) this.live -= 1;
    slots[at + 2] = record;
    const version = slots[at + 3] as number;
    if (version < MAX_VERSION) slots[at + 3] = version + 1;
  }

  /** Adds an id the index does not hold, with its record (or NO_RECORD) and version (at least 1); its slot. */
  add(key: Uint32Array, record: number, version: number): number {
    if (this.draining !== undefined) this.drain(DRAIN_PER_ADD);
    if (this.ids + 1 > this.capacity * MAX_LOAD) this.startRehash(Math.ceil(this.capacity * GROWTH));
    const slot = this.place(key[0] as number, key[1] as number, record, version);
    this.ids += 1;
    if (record !== NO_RECORD) this.live += 1;
    return slot;
  }

  /** Writes a new id into the first empty slot of its probe sequence. */
  private place(low: number, high: number, record: number, version: number): number {
    const { slots, capacity } = this;
    let slot = home(low, high, capacity);
    while (slots[slot * SLOT_WORDS + 3] !== 0) slot = next(slot, capacity);
    const at = slot * SLOT_WORDS;
    this.frozen?.beforeWrite(slots, at);
    slots[at] = low;
    slots[at + 1] = high;
    slots[at + 2] = record;
    slots[at + 3] = version;
    return slot;
  }

  /** The whole table rehashed at once (a start's merge, which has no writes waiting). */
  private rehash(capacity: number): void {
    this.startRehash(capacity);
    this.settle();
  }

  /** A new table of `capacity` slots; the old one drains into it a few slots at a time. */
  private startRehash(capacity: number): void {
    this.settle();
    this.draining = { slots: this.slots, capacity: this.capacity, next: 0 };
    this.slots = new Uint32Array(capacity * SLOT_WORDS);
    this.capacity = capacity;
  }

  /** Moves up to `count` old slots into the table; the old table goes once it is empty. */
  private drain(count: number): void {
    const draining = this.draining;
    if (draining === undefined) return;
    const { slots: old, capacity } = draining;
    const end = Math.min(capacity, draining.next + count);
    for (let slot = draining.next; slot < end; slot += 1) {
      const at = slot * SLOT_WORDS;
      const version = old[at + 3] as number;
      const record = old[at + 2] as number;
      if (version !== 0 && record !== MOVED) this.place(old[at] as number, old[at + 1] as number, record, version);
    }
    draining.next = end;
    if (end === capacity) this.draining = undefined;
  }

  /** Moves the old slot `old` into the table now (its id was looked up); its new slot. */
  private moveOld(old: number): number {
    const slots = (this.draining as { slots: Uint32Array }).slots;
    const at = old * SLOT_WORDS;
    this.frozen?.beforeWrite(slots, at);
    const slot = this.place(
      slots[at] as number,
      slots[at + 1] as number,
      slots[at + 2] as number,
      slots[at + 3] as number,
    );
    slots[at + 2] = MOVED;
    return slot;
  }

  /** Finishes a rehash under way (before anything that reads the whole table). */
  private settle = (): void => this.drain(Number.POSITIVE_INFINITY);

  /** Moves up to `slots` old slots of a rehash in progress; whether none is left (a snapshot settles a slice per turn). */
  settleSome(slots: number): boolean {
    this.drain(slots);
    return this.draining === undefined;
  }

  /** Room for `more` ids beyond those held, made now (one rehash rather than several while they come). */
  reserve(more: number): void {
    this.settle();
    let capacity = this.capacity;
    while (this.ids + more > capacity * MAX_LOAD) capacity = Math.ceil(capacity * GROWTH);
    if (capacity !== this.capacity) this.rehash(capacity);
  }

  /**
   * Takes in every id of `other` (live or deleted, none of them held here: the shards of a sharded
   * fold), with its version, and its record moved by `rebase`. `other` is not to be used after.
   */
  merge(other: IdIndex, rebase: (record: number) => number): void {
    this.settle();
    other.settle();
    this.reserve(other.ids);
    const from = other.slots;
    for (let at = 0; at < from.length; at += SLOT_WORDS) {
      const version = from[at + 3] as number;
      if (version === 0) continue;
      const low = from[at] as number;
      const high = from[at + 1] as number;
      if (this.holds(low, high)) throw new Error(`report ${idText(low, high)} is in both tables`);
      const record = from[at + 2] as number;
      this.place(low, high, record === NO_RECORD ? record : rebase(record), version);
    }
    this.ids += other.ids;
    this.live += other.live;
  }

  private holds(low: number, high: number): boolean {
    return probe(this.slots, this.capacity, low, high) >= 0;
  }

  /** Calls `visit` with every live id's record. */
  forEachRecord(visit: (record: number) => void): void {
    this.settle();
    const { slots } = this;
    for (let at = 0; at < slots.length; at += SLOT_WORDS) {
      const record = slots[at + 2] as number;
      if (slots[at + 3] !== 0 && record !== NO_RECORD) visit(record);
    }
  }

  /** The live ids (their words) and records, in numeric order of ids (the canonical order). */
  liveInOrder(): { readonly keys: Int64Keys; readonly count: number } {
    this.settle();
    const { slots, live } = this;
    const keys = { low: new Uint32Array(live), high: new Uint32Array(live), payload: new Uint32Array(live) };
    let count = 0;
    for (let at = 0; at < slots.length; at += SLOT_WORDS) {
      const record = slots[at + 2] as number;
      if (slots[at + 3] === 0 || record === NO_RECORD) continue;
      keys.low[count] = slots[at] as number;
      keys.high[count] = slots[at + 1] as number;
      keys.payload[count] = record;
      count += 1;
    }
    return { keys: sortInt64(keys, count), count };
  }

  /** Calls `update` with every live id's record, letting it give a new one (the table moving its records). */
  remap(update: (record: number) => number): void {
    this.settle();
    const { slots } = this;
    for (let at = 0; at < slots.length; at += SLOT_WORDS) {
      const record = slots[at + 2] as number;
      if (slots[at + 3] === 0 || record === NO_RECORD) continue;
      this.frozen?.beforeWrite(slots, at);
      slots[at + 2] = update(record);
    }
  }

  /** What the index holds, for another thread (the array moves with the message, see fromParts). */
  parts(): IdIndexParts {
    this.settle();
    return { slots: this.slots, ids: this.ids, live: this.live };
  }

  /** The index another thread's `parts()` described (this process wrote it: not checked again). */
  static fromParts(parts: IdIndexParts): IdIndex {
    const index = new IdIndex(0);
    index.slots = parts.slots;
    index.capacity = parts.slots.length / SLOT_WORDS;
    index.ids = parts.ids;
    index.live = parts.live;
    return index;
  }

  /** The index as bytes: capacity, ids held, live ids, then the slots as they are (16 bytes each, little-endian words). */
  writeTo(out: BytesOut): void {
    writeIndexBytes(out, this.parts(), false);
  }

  /**
   * The index as it is now, for a snapshot taken while it goes on changing: the caller copies the
   * slots a slice at a time (FrozenSlots.copySome), every write here copies its block first until
   * the copy is done or released. A rehash under way is finished first (settleSome spreads it over
   * turns). One freeze at a time.
   */
  freeze(): { readonly slots: FrozenSlots; readonly ids: number; readonly live: number } {
    if (this.frozen !== undefined) throw new Error('the id index is frozen already');
    this.settle();
    const slots: FrozenSlots = new FrozenSlots(this.slots, () => {
      if (this.frozen === slots) this.frozen = undefined;
    });
    this.frozen = slots;
    return { slots, ids: this.ids, live: this.live };
  }

  /** Reads what writeTo wrote; RangeError when it does not hold an index. */
  static readFrom(input: BytesIn): IdIndex {
    return IdIndex.fromParts(readIndexParts(input));
  }
}
