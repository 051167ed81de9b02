// One segment of the id table (id-table.ts): a small open-addressing hash table (linear probing)
// in one Uint32Array of four words a slot. This is the one file that knows where a field lies in a
// slot, and a segment is the one writer of its words: a write to words a snapshot holds gives the
// segment a copy of them first (copy before write), so what the snapshot holds never changes.
// Every 64-bit value is an id, so a slot's state is never told by its key: version 0 is an empty
// slot (a new array is all empty, without a fill), and a held id whose record is NO_RECORD is a
// deleted report, kept for its version. Ids are never removed: no tombstones. Slots read back
// from a snapshot are checked in id-segment-read.ts, through the accessors here.

/** The record of a deleted report: no position of the record arena (they stay below 2^22 in each 2^23 of a chunk). */
export const NO_RECORD = 0xffffffff;
/** Versions stop here rather than wrap (four billion events on one report). */
export const MAX_VERSION = 0xffffffff;

/** A slot's fields, in words: the id's low and high words, its record's position, its version. */
const [LOW, HIGH, RECORD, VERSION] = [0, 1, 2, 3] as const;
export const SLOT_WORDS = 4;
export const SLOT_BYTES = SLOT_WORDS * 4;

/** A segment's slots: the least, and the most before it splits rather than grows (128 KiB). */
export const MIN_SEGMENT_SLOTS = 1024;
export const MAX_SEGMENT_SLOTS = 8192;
/** More than this share of a segment's slots held: it grows, or splits. */
export const MAX_LOAD = 0.8;
/**
 * The load a segment is given when it grows or splits: growing by a quarter (not doubling) keeps
 * the load between 0.64 and 0.8, so a report costs fewer slot bytes than in one table grown by half
 * between 0.47 and 0.7 (what the id index was), for a few more probes a lookup.
 */
const GROWN_LOAD = 0.64;

/** The ids a segment of the most slots holds as it is made (after a split): what a table made for many ids divides them by. */
export const SEGMENT_IDS = Math.floor(MAX_SEGMENT_SLOTS * GROWN_LOAD);

/**
 * The slots a segment of `ids` ids is given when it is made: up to the largest, more only for the
 * ids of a segment that could not split (id-table.ts).
 */
export function capacityFor(ids: number): number {
  const wanted = Math.ceil(ids / GROWN_LOAD);
  return Math.max(
    MIN_SEGMENT_SLOTS,
    ids <= MAX_SEGMENT_SLOTS * MAX_LOAD ? Math.min(MAX_SEGMENT_SLOTS, wanted) : wanted,
  );
}

/**
 * The hash of an id: the high word folded into the low one, then MurmurHash3's finaliser, so
 * every bit of the id moves it. Its high bits choose the segment (id-table.ts); a single
 * multiplication (what an earlier table used) kept the low bits of ids in step: ids that are
 * multiples of 1,000 or 1,024 took 5 to 9 times the probes of sequential ones.
 */
export function hashId(low: number, high: number): number {
  let hash = low ^ Math.imul(high, 0x85ebca6b);
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}

/**
 * The slot to start probing at. The hash times the golden ratio (Fibonacci hashing): the high bits
 * it shares with every id of the segment add a constant, the others spread the ids over the slots.
 * As a fraction of 2^32 times the capacity: every capacity works, not only powers of two.
 */
export function homeSlot(hash: number, capacity: number): number {
  return Math.floor((Math.imul(hash, 0x9e3779b1) >>> 0) * capacity * 2.3283064365386963e-10);
}

/** The prefix of `depth` bits of `hash` (the directory index at that depth). */
export function prefixOf(hash: number, depth: number): number {
  return depth === 0 ? 0 : hash >>> (32 - depth);
}

/** What a segment's ids are visited with (a deleted report's record is NO_RECORD). */
export type SlotVisit = (low: number, high: number, record: number, version: number) => void;

export class IdSegment {
  private words: Uint32Array;
  /** Whether a snapshot holds `words`: the next write copies them first. */
  private shared = false;
  /** Ids held, live or deleted. */
  private held: number;

  /** The ids whose hashes begin with the `depth` bits of `prefix`, in `capacity` slots. */
  constructor(
    readonly capacity: number,
    readonly depth: number,
    readonly prefix: number,
    words?: { readonly words: Uint32Array; readonly ids: number },
  ) {
    this.words = words?.words ?? new Uint32Array(capacity * SLOT_WORDS);
    this.held = words?.ids ?? 0;
  }

  /** A segment over slots read from a file, not yet checked (id-segment-read.ts): it counts their ids. */
  static fromWords(capacity: number, depth: number, prefix: number, words: Uint32Array): IdSegment {
    let ids = 0;
    for (let at = VERSION; at < words.length; at += SLOT_WORDS) if (words[at] !== 0) ids += 1;
    return new IdSegment(capacity, depth, prefix, { words, ids });
  }

  get ids(): number {
    return this.held;
  }

  /** Whether one more id would take it past MAX_LOAD. */
  get full(): boolean {
    return this.held + 1 > this.capacity * MAX_LOAD;
  }

  get byteLength(): number {
    return this.words.byteLength;
  }

  /**
   * The slot holding the id [low, high] of `hash`, or -1 - the empty slot where the lookup ended:
   * where `add` would put the id (a fold looks an id up, then adds it when it is new).
   */
  find(hash: number, low: number, high: number): number {
    const { words, capacity } = this;
    for (let slot = homeSlot(hash, capacity); ; slot = slot + 1 === capacity ? 0 : slot + 1) {
      const at = slot * SLOT_WORDS;
      if (words[at + VERSION] === 0) return -1 - slot;
      if (words[at + LOW] === low && words[at + HIGH] === high) return slot;
    }
  }

  /**
   * Adds an id at `slot`, an empty slot where a lookup of it ended: every slot before it in the
   * id's probe sequence was held then, and a held slot is never emptied. Its slot.
   */
  addAt(slot: number, low: number, high: number, record: number, version: number): number {
    const words = this.writable();
    const at = slot * SLOT_WORDS;
    words[at + LOW] = low;
    words[at + HIGH] = high;
    words[at + RECORD] = record;
    words[at + VERSION] = version;
    this.held += 1;
    return slot;
  }

  /** Whether `slot` holds no id. */
  isEmpty(slot: number): boolean {
    return this.words[slot * SLOT_WORDS + VERSION] === 0;
  }

  /** The low and high words of the id at `slot`. */
  lowAt(slot: number): number {
    return this.words[slot * SLOT_WORDS + LOW] as number;
  }

  highAt(slot: number): number {
    return this.words[slot * SLOT_WORDS + HIGH] as number;
  }

  recordAt(slot: number): number {
    return this.words[slot * SLOT_WORDS + RECORD] as number;
  }

  versionAt(slot: number): number {
    return this.words[slot * SLOT_WORDS + VERSION] as number;
  }

  /** Adds an id it does not hold into the first empty slot of its probe sequence (the caller made room); its slot. */
  add(hash: number, low: number, high: number, record: number, version: number): number {
    const { words, capacity } = this;
    let slot = homeSlot(hash, capacity);
    while (words[slot * SLOT_WORDS + VERSION] !== 0) slot = slot + 1 === capacity ? 0 : slot + 1;
    return this.addAt(slot, low, high, record, version);
  }

  /** One more event took effect on the id at `slot`: its record is now `record` (NO_RECORD: deleted). */
  update(slot: number, record: number): void {
    const words = this.writable();
    const at = slot * SLOT_WORDS;
    words[at + RECORD] = record;
    const version = words[at + VERSION] as number;
    if (version < MAX_VERSION) words[at + VERSION] = version + 1;
  }

  /** Calls `visit` with every id held, in slot order. */
  forEach(visit: SlotVisit): void {
    const { words } = this;
    for (let at = 0; at < words.length; at += SLOT_WORDS) {
      const version = words[at + VERSION] as number;
      if (version !== 0)
        visit(words[at + LOW] as number, words[at + HIGH] as number, words[at + RECORD] as number, version);
    }
  }

  /** Gives every live id's record the one `update` returns for it (the arena moved its records). */
  remap(update: (record: number) => number): void {
    const { words } = this;
    let writable: Uint32Array | undefined;
    for (let at = 0; at < words.length; at += SLOT_WORDS) {
      const record = words[at + RECORD] as number;
      if (words[at + VERSION] === 0 || record === NO_RECORD) continue;
      writable ??= this.writable();
      writable[at + RECORD] = update(record);
    }
  }

  /**
   * Its ids in two new segments, one level deeper, parted by the next bit of their hashes; undefined
   * when that bit does not part them (ids chosen to share their hashes' first bits). Each id is
   * hashed twice (to count, to move) and moved once, in loops over the words: a split or a growth
   * costs a few tens of µs, and happens to every segment a few times as the table grows.
   */
  split(): readonly [IdSegment, IdSegment] | undefined {
    const { words } = this;
    const depth = this.depth + 1;
    const bit = 32 - depth;
    let upper = 0;
    for (let at = 0; at < words.length; at += SLOT_WORDS)
      if (words[at + VERSION] !== 0)
        upper += (hashId(words[at + LOW] as number, words[at + HIGH] as number) >>> bit) & 1;
    if (upper === 0 || upper === this.held) return undefined;
    const lower = new IdSegment(capacityFor(this.held - upper + 1), depth, this.prefix * 2);
    const higher = new IdSegment(capacityFor(upper + 1), depth, this.prefix * 2 + 1);
    for (let at = 0; at < words.length; at += SLOT_WORDS) {
      const version = words[at + VERSION] as number;
      if (version === 0) continue;
      const low = words[at + LOW] as number;
      const high = words[at + HIGH] as number;
      const hash = hashId(low, high);
      (((hash >>> bit) & 1) === 0 ? lower : higher).add(hash, low, high, words[at + RECORD] as number, version);
    }
    return [lower, higher];
  }

  /** The same ids in `capacity` slots. */
  regrown(capacity: number): IdSegment {
    const grown = new IdSegment(capacity, this.depth, this.prefix);
    const { words } = this;
    for (let at = 0; at < words.length; at += SLOT_WORDS) {
      const version = words[at + VERSION] as number;
      if (version === 0) continue;
      const low = words[at + LOW] as number;
      const high = words[at + HIGH] as number;
      grown.add(hashId(low, high), low, high, words[at + RECORD] as number, version);
    }
    return grown;
  }

  /**
   * The words as they are now, for a snapshot: they never change from here on (the next write
   * copies them first) until `release`.
   */
  hold(): Uint32Array {
    this.shared = true;
    return this.words;
  }

  /** The snapshot that held the words is written (or given up): writes go to them again. */
  release(): void {
    this.shared = false;
  }

  /** The words as they are now, to be copied at once (not kept). */
  peek(): Uint32Array {
    return this.words;
  }

  /** The words, for a move to another thread (the segment is not to be used after). */
  transferable(): Uint32Array {
    return this.words;
  }

  /** The words to write to: a copy of them when a snapshot holds them. */
  private writable(): Uint32Array {
    if (this.shared) {
      this.words = this.words.slice();
      this.shared = false;
    }
    return this.words;
  }
}
