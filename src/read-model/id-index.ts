// Report id -> position of its record in the report table. A JS Map of a million number keys costs
// ~40 bytes and two cache misses a lookup, and must be rebuilt entry by entry when a snapshot is
// loaded. This is an open-addressing hash table in two typed arrays (linear probing): 12 bytes a
// slot, one probe sequence a lookup, and a snapshot stores and loads it as two blocks of bytes.
// Safe-integer ids (nearly all of them) live there; any other id (beyond ±2^53) in a small Map.
import type { BytesIn, BytesOut } from './bytes.js';

/** Map key of an id: the number for a canonical decimal safe integer (no string kept), else the id. */
export function tableKey(id: string): number | string {
  const length = id.length;
  const negative = length > 0 && id.charCodeAt(0) === 45;
  const first = negative ? 1 : 0;
  const digits = length - first;
  // Up to 15 digits always fit a double exactly; 16 may, and are left to the check below.
  if (digits === 0 || digits > 16) return id;
  // No leading zero, no "-0": only the canonical form maps to a number, so "07" stays another id.
  if (id.charCodeAt(first) === 48 && (digits > 1 || negative)) return id;
  let value = 0;
  for (let i = first; i < length; i += 1) {
    const digit = id.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return id;
    value = value * 10 + digit;
  }
  if (digits === 16 && !(value <= Number.MAX_SAFE_INTEGER && String(value) === id.slice(first))) return id;
  // Below 2^31 the key is made a small integer (`| 0`), which a Map hashes without boxing a number.
  if (value < 0x80000000) return negative ? -value | 0 : value | 0;
  return negative ? -value : value;
}


/** The packed sort of forEachNumberInOrder puts the key in a 64-bit integer's high word, which comes second in memory only here. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Slots with this key are free; a deleted key leaves a tombstone (probing goes on past it). */
const EMPTY = Number.NaN;
const TOMBSTONE = Number.POSITIVE_INFINITY;
const MIN_CAPACITY = 1024;
/** More than this share of slots used (live or tombstones): grow or clean. */
const MAX_LOAD = 0.7;

/** The slot to start probing `key` at: the 53 bits of a safe integer mixed into the table's bits. */
function home(key: number, mask: number): number {
  const low = key >>> 0;
  const high = ((key - low) / 4294967296) | 0;
  let hash = Math.imul(low ^ Math.imul(high, 0x85ebca6b), 0x9e3779b1);
  hash ^= hash >>> 16;
  return hash & mask;
}

/** An IdIndex's contents as a structured clone carries them (the typed arrays are transferable). */
export interface IdIndexParts {
  readonly keys: Float64Array;
  readonly values: Uint32Array;
  readonly count: number;
  readonly tombstones: number;
  readonly named: ReadonlyMap<string, number>;
}

export class IdIndex {
  private keys: Float64Array;
  private values: Uint32Array;
  private mask: number;
  private count = 0;
  private tombstones = 0;
  private readonly named = new Map<string, number>();

  constructor(capacity = MIN_CAPACITY) {
    this.keys = new Float64Array(capacity).fill(EMPTY);
    this.values = new Uint32Array(capacity);
    this.mask = capacity - 1;
  }

  get size(): number {
    return this.count + this.named.size;
  }

  /** Bytes of the two arrays (what the index costs beside the small map of other ids). */
  get slotBytes(): number {
    return this.keys.byteLength + this.values.byteLength;
  }

  /** The slot holding `key`, or -1. */
  private find(key: number): number {
    const { keys, mask } = this;
    for (let slot = home(key, mask); ; slot = (slot + 1) & mask) {
      const found = keys[slot] as number;
      if (found === key) return slot;
      if (found !== found) return -1; // EMPTY (NaN)
    }
  }

  has(key: number | string): boolean {
    return typeof key === 'number' ? this.find(key) >= 0 : this.named.has(key);
  }

  get(key: number | string): number | undefined {
    if (typeof key !== 'number') return this.named.get(key);
    const slot = this.find(key);
    return slot < 0 ? undefined : this.values[slot];
  }

  set(key: number | string, value: number): this {
    if (typeof key !== 'number') {
      this.named.set(key, value);
      return this;
    }
    const existing = this.find(key);
    if (existing >= 0) {
      this.values[existing] = value;
      return this;
    }
    if (this.count + this.tombstones + 1 > this.keys.length * MAX_LOAD) this.resize();
    const { keys, mask } = this;
    let slot = home(key, mask);
    // The first free slot of the probe: an empty one, or a tombstone it may reuse.
    while (keys[slot] === keys[slot] && keys[slot] !== TOMBSTONE) slot = (slot + 1) & mask;
    if (keys[slot] === TOMBSTONE) this.tombstones -= 1;
    keys[slot] = key;
    this.values[slot] = value;
    this.count += 1;
    return this;
  }

  delete(key: number | string): boolean {
    if (typeof key !== 'number') return this.named.delete(key);
    const slot = this.find(key);
    if (slot < 0) return false;
    this.keys[slot] = TOMBSTONE;
    this.count -= 1;
    this.tombstones += 1;
    return true;
  }

  /** Twice the room when mostly live, the same room when mostly tombstones: rehashed either way. */
  private resize(): void {
    this.rehash(Math.max(MIN_CAPACITY, this.count * 2 > this.keys.length * MAX_LOAD ? this.keys.length * 2 : this.keys.length));
  }

  private rehash(capacity: number): void {
    const { keys, values } = this;
    this.keys = new Float64Array(capacity).fill(EMPTY);
    this.values = new Uint32Array(capacity);
    this.mask = capacity - 1;
    this.count = 0;
    this.tombstones = 0;
    for (let slot = 0; slot < keys.length; slot += 1) {
      const key = keys[slot] as number;
      if (key === key && key !== TOMBSTONE) this.set(key, values[slot] as number);
    }
  }

  /** Every key with its value: safe-integer ids in slot order, then the others. */
  *entries(): IterableIterator<[number | string, number]> {
    const { keys, values } = this;
    for (let slot = 0; slot < keys.length; slot += 1) {
      const key = keys[slot] as number;
      if (key === key && key !== TOMBSTONE) yield [key, values[slot] as number];
    }
    yield* this.named;
  }

  /** Calls `visit` with every value and its key, as Map.forEach does (no entry objects made). */
  forEach(visit: (value: number, key: number | string) => void): void {
    const { keys, values } = this;
    for (let slot = 0; slot < keys.length; slot += 1) {
      const key = keys[slot] as number;
      if (key === key && key !== TOMBSTONE) visit(values[slot] as number, key);
    }
    this.named.forEach(visit);
  }

  /**
   * Calls `visit` with every safe-integer key and its value, in ascending key order. When every
   * key is in [0, 2^32) (the common case), key and value are packed into one 64-bit integer each
   * and sorted natively (no lookup afterwards); otherwise the keys are sorted and looked up.
   */
  forEachNumberInOrder(visit: (key: number, value: number) => void): void {
    const { keys, values } = this;
    let small = true;
    for (let slot = 0; slot < keys.length && small; slot += 1) {
      const key = keys[slot] as number;
      if (key === key && key !== TOMBSTONE && (key < 0 || key > 0xffffffff)) small = false;
    }
    if (small && LITTLE_ENDIAN) {
      // Little-endian words: the value low, the key high, so the 64-bit order is the key order.
      const packed = new BigUint64Array(this.count);
      const words = new Uint32Array(packed.buffer);
      let at = 0;
      for (let slot = 0; slot < keys.length; slot += 1) {
        const key = keys[slot] as number;
        if (key !== key || key === TOMBSTONE) continue;
        words[at] = values[slot] as number;
        words[at + 1] = key;
        at += 2;
      }
      packed.sort();
      for (let i = 0; i < words.length; i += 2) visit(words[i + 1] as number, words[i] as number);
      return;
    }
    const sorted = new Float64Array(this.count);
    let count = 0;
    for (let slot = 0; slot < keys.length; slot += 1) {
      const key = keys[slot] as number;
      if (key === key && key !== TOMBSTONE) sorted[count++] = key;
    }
    sorted.sort();
    for (const key of sorted) visit(key, values[this.find(key)] as number);
  }

  /** Calls `update` with every value, letting it give a new one (the table moving its records). */
  remap(update: (value: number) => number): void {
    const { keys, values } = this;
    for (let slot = 0; slot < keys.length; slot += 1) {
      const key = keys[slot] as number;
      if (key === key && key !== TOMBSTONE) values[slot] = update(values[slot] as number);
    }
    for (const [key, value] of this.named) this.named.set(key, update(value));
  }

  /** Room for `more` keys beyond those held, made now (one rehash rather than several while they come). */
  reserve(more: number): void {
    let capacity = this.keys.length;
    while ((this.count + this.tombstones + more) > capacity * MAX_LOAD) capacity *= 2;
    if (capacity !== this.keys.length) this.rehash(capacity);
  }

  /** What the index holds, for another thread (the arrays move with the message, see fromParts). */
  parts(): IdIndexParts {
    return { keys: this.keys, values: this.values, count: this.count, tombstones: this.tombstones, named: this.named };
  }

  /** The index another thread's `parts()` described (this process wrote it: not checked again). */
  static fromParts(parts: IdIndexParts): IdIndex {
    const index = new IdIndex(MIN_CAPACITY);
    index.keys = parts.keys;
    index.values = parts.values;
    index.mask = parts.keys.length - 1;
    index.count = parts.count;
    index.tombstones = parts.tombstones;
    for (const [key, value] of parts.named) index.named.set(key, value);
    return index;
  }

  /** The index as bytes: capacity, counts, the two arrays as they are, the other ids. */
  writeTo(out: BytesOut): void {
    out.u32(this.keys.length);
    out.u32(this.count);
    out.u32(this.tombstones);
    out.bytes(Buffer.from(this.keys.buffer, this.keys.byteOffset, this.keys.byteLength));
    out.bytes(Buffer.from(this.values.buffer, this.values.byteOffset, this.values.byteLength));
    out.u32(this.named.size);
    for (const [key, value] of this.named) {
      out.text(key);
      out.f64(value);
    }
  }

  /** Reads what writeTo wrote; RangeError when it does not hold an index. */
  static readFrom(input: BytesIn): IdIndex {
    const capacity = input.u32();
    if (capacity < MIN_CAPACITY || (capacity & (capacity - 1)) !== 0) throw new RangeError(`an id index of ${capacity} slots`);
    const index = new IdIndex(capacity);
    index.count = input.u32();
    index.tombstones = input.u32();
    // Copied into arrays of their own: typed arrays need aligned memory, and the file's buffer goes.
    new Uint8Array(index.keys.buffer).set(input.bytes(capacity * 8));
    new Uint8Array(index.values.buffer).set(input.bytes(capacity * 4));
    let live = 0;
    let tombstones = 0;
    const { keys } = index;
    for (let slot = 0; slot < keys.length; slot += 1) {
      const key = keys[slot] as number;
      if (key === TOMBSTONE) tombstones += 1;
      else if (key === key) {
        if (key > Number.MAX_SAFE_INTEGER || key < Number.MIN_SAFE_INTEGER || key !== Math.floor(key)) throw new RangeError(`an id key ${key} that is not a safe integer`);
        live += 1;
      }
    }
    if (live !== index.count || tombstones !== index.tombstones) throw new RangeError(`an id index that holds ${live} keys and ${tombstones} tombstones, not ${index.count} and ${index.tombstones}`);
    for (let named = input.u32(); named > 0; named -= 1) index.named.set(input.text(), input.f64());
    return index;
  }
}
