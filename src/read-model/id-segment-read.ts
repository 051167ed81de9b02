// A segment of the id table read back from a snapshot file, and the check that its slots are a
// segment's. Only a snapshot's reader needs it, so it lies apart from id-segment.ts (what a segment
// does with its slots), and sees the slots through the segment's accessors, not their layout.
import type { BytesReader } from './bytes.js';
import { hashId, homeSlot, IdSegment, NO_RECORD, prefixOf, SLOT_BYTES, SLOT_WORDS } from './id-segment.js';
import { idText } from './int64-id.js';

/** The segment whose slots `input` holds next, read into an array of its own and checked; its live ids. */
export function readSegment(
  input: BytesReader,
  capacity: number,
  depth: number,
  prefix: number,
): { readonly segment: IdSegment; readonly live: number } {
  // Not zeroed first: every byte is read over at once (an ArrayBuffer of its own, so aligned).
  const bytes = Buffer.allocUnsafeSlow(capacity * SLOT_BYTES);
  input.into(bytes);
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, capacity * SLOT_WORDS);
  const segment = IdSegment.fromWords(capacity, depth, prefix, words);
  return { segment, live: checkSegment(segment) };
}

/**
 * Checks a segment's slots read from a file: empty slots all zero (as a segment leaves them),
 * every id of the segment's prefix and where a lookup finds it (between its home slot and the
 * slot, only held slots); counts the live ids. A checksum only proves that some writer wrote the
 * bytes, and a lookup walks slots until it meets an empty one, so slots that break the layout
 * could make it wrong or never end. RangeError when they are not a segment's slots.
 */
function checkSegment(segment: IdSegment): number {
  const { capacity, depth, prefix } = segment;
  let first = -1;
  for (let slot = 0; slot < capacity && first < 0; slot += 1) if (segment.isEmpty(slot)) first = slot;
  if (first < 0) throw new RangeError('an id segment without an empty slot');
  let live = 0;
  // From an empty slot on, so that no run of held slots is cut in two by the end of the array.
  let runStart = -1;
  for (let step = 1; step <= capacity; step += 1) {
    const slot = (first + step) % capacity;
    const low = segment.lowAt(slot);
    const high = segment.highAt(slot);
    if (segment.isEmpty(slot)) {
      if (low !== 0 || high !== 0 || segment.recordAt(slot) !== 0)
        throw new RangeError(`the empty slot ${slot} is not zero`);
      runStart = -1;
      continue;
    }
    if (runStart < 0) runStart = slot;
    if (segment.recordAt(slot) !== NO_RECORD) live += 1;
    const hash = hashId(low, high);
    if (prefixOf(hash, depth) !== prefix) throw new RangeError(`report ${idText(low, high)} lies in another segment`);
    if ((slot - homeSlot(hash, capacity) + capacity) % capacity > (slot - runStart + capacity) % capacity)
      throw new RangeError(`report ${idText(low, high)} lies where a lookup does not find it`);
  }
  return live;
}
