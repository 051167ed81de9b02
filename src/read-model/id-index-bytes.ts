// The id index as bytes (a snapshot's section): capacity, ids held, live ids, then the slots as
// they are (16 bytes each, little-endian words). Reading checks what the layout needs (id-slots.ts).
import type { BytesIn, BytesOut } from './bytes.js';
import type { IdIndexParts } from './id-index.js';
import { checkSlots, MAX_LOAD, MIN_CAPACITY, SLOT_WORDS } from './id-slots.js';

/** Writes the index; `handOver`: the slots are a copy nobody changes again, passed on as they are. */
export function writeIndexBytes(out: BytesOut, { slots, ids, live }: IdIndexParts, handOver: boolean): void {
  out.u32(slots.length / SLOT_WORDS);
  out.u32(ids);
  out.u32(live);
  const bytes = Buffer.from(slots.buffer, slots.byteOffset, slots.byteLength);
  if (handOver) out.unchanging(bytes);
  else out.bytes(bytes);
}

/** Reads what writeIndexBytes wrote; RangeError when it does not hold an index. */
export function readIndexParts(input: BytesIn): IdIndexParts {
  const capacity = input.u32();
  if (capacity < MIN_CAPACITY || capacity > 2 ** 28) throw new RangeError(`an id index of ${capacity} slots`);
  const ids = input.u32();
  const live = input.u32();
  if (ids > capacity * MAX_LOAD || live > ids)
    throw new RangeError(`an id index of ${capacity} slots holding ${ids} ids, ${live} live`);
  // Taken before the array is made (a capacity beyond the data allocates nothing), then copied
  // into an array of its own: typed arrays need aligned memory, and the file's buffer goes.
  const bytes = input.bytes(capacity * SLOT_WORDS * 4);
  const slots = new Uint32Array(capacity * SLOT_WORDS);
  new Uint8Array(slots.buffer).set(bytes);
  const held = checkSlots(slots);
  if (held.ids !== ids || held.live !== live)
    throw new RangeError(`an id index that holds ${held.ids} ids (${held.live} live), not ${ids} (${live})`);
  return { slots, ids, live };
}
