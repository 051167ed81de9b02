// The slot layout of the id index (id-index.ts) and what a reader of one from a file must check:
// a checksum only proves that some writer wrote the bytes, and a lookup walks slots until it
// meets an empty one, so slots that break the layout could make it wrong or never end.
import { idText } from './int64-id.js';

/** Words a slot: [low word of the id, high word, record position, version]. */
export const SLOT_WORDS = 4;
export const MIN_CAPACITY = 1024;
/** More than this share of slots held: the index grows. */
export const MAX_LOAD = 0.7;
/** The record of a deleted report: no position of the table (they stay below 2^22 in each 2^23 of a chunk). */
export const NO_RECORD = 0xffffffff;
/** The record word of an old slot already moved to the new table (the id stays, so probing passes it). Never a record position: offsets stay below 2^22. */
export const MOVED = 0xfffffffe;

/**
 * The slot to start probing an id at: the high word folded into the low one, then MurmurHash3's
 * finaliser, so every bit of the id moves the slot. A single multiplication (what this was) keeps
 * the low bits of ids in step: ids that are multiples of 1,000 or 1,024 took 5 to 9 times the
 * probes of sequential ones; with the finaliser every shape measured takes the probes of random ids.
 */
export function home(low: number, high: number, capacity: number): number {
  let hash = low ^ Math.imul(high, 0x85ebca6b);
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  // The hash as a fraction of 2^32 times the capacity: every capacity works, not only powers of two.
  return Math.floor((hash >>> 0) * capacity * 2.3283064365386963e-10);
}

/** The slot after `slot`, the first one after the last. */
export function next(slot: number, capacity: number): number {
  return slot + 1 === capacity ? 0 : slot + 1;
}

/** The slot of the id [low, high] in `slots`, or -1. A moved old slot still matches: the caller looked in the new table first. */
export function probe(slots: Uint32Array, capacity: number, low: number, high: number): number {
  for (let slot = home(low, high, capacity); ; slot = next(slot, capacity)) {
    const at = slot * SLOT_WORDS;
    if (slots[at + 3] === 0) return -1;
    if (slots[at] === low && slots[at + 1] === high) return slots[at + 2] === MOVED ? -1 : slot;
  }
}

/** The first empty slot (there is one: the index never fills up), -1 when there is none. */
function firstEmpty(slots: Uint32Array): number {
  for (let at = 3; at < slots.length; at += SLOT_WORDS) if (slots[at] === 0) return (at - 3) / SLOT_WORDS;
  return -1;
}

/**
 * Checks slots read from a file: empty ones all zero (as the table leaves them), every id where a
 * lookup finds it (between its home slot and the slot, only held slots); counts the ids and the
 * live ones. RangeError when they are not an index's slots.
 */
export function checkSlots(slots: Uint32Array): { ids: number; live: number } {
  const capacity = slots.length / SLOT_WORDS;
  const first = firstEmpty(slots);
  if (first < 0) throw new RangeError('an id index without an empty slot');
  let ids = 0;
  let live = 0;
  // From an empty slot on, so that no run of held slots is cut in two by the end of the array.
  let runStart = -1;
  for (let step = 1; step <= capacity; step += 1) {
    const slot = (first + step) % capacity;
    const at = slot * SLOT_WORDS;
    const low = slots[at] as number;
    const high = slots[at + 1] as number;
    if (slots[at + 3] === 0) {
      if (low !== 0 || high !== 0 || slots[at + 2] !== 0) throw new RangeError(`the empty slot ${slot} is not zero`);
      runStart = -1;
      continue;
    }
    if (runStart < 0) runStart = slot;
    ids += 1;
    if (slots[at + 2] !== NO_RECORD) live += 1;
    if ((slot - home(low, high, capacity) + capacity) % capacity > (slot - runStart + capacity) % capacity)
      throw new RangeError(`report ${idText(low, high)} lies where a lookup does not find it`);
  }
  return { ids, live };
}
