// The id table's bytes in a snapshot (id-table.ts): the one file that knows their layout, writing
// it and reading it back, checked, since a lookup in a table read from a file must stay right and end.
import type { BytesOut, BytesReader } from './bytes.js';
import { forEachSegmentIn, MAX_DEPTH, pointEntries, type IdDirectory } from './id-directory.js';
import { type IdSegment, MIN_SEGMENT_SLOTS, SLOT_BYTES } from './id-segment.js';
import { readSegment } from './id-segment-read.js';
import { segmentCount } from './id-table-walks.js';

/**
 * The table as bytes: directory depth, segments, ids held, live ids; then per segment, in
 * directory order, its capacity, depth and prefix and its slots as they are (16 bytes each,
 * little-endian words). `slots` writes the slots' bytes: copied (a table that goes on changing)
 * or held (a snapshot's, which nothing changes until it is released).
 */
export function writeIdDirectory(out: BytesOut, table: IdDirectory, slots: (segment: IdSegment) => void): void {
  const { directory, depth } = table;
  out.u32(depth);
  out.u32(segmentCount(directory, depth));
  out.u32(table.ids);
  out.u32(table.live);
  forEachSegmentIn(directory, depth, (segment) => {
    out.u32(segment.capacity);
    out.u32(segment.depth);
    out.u32(segment.prefix);
    slots(segment);
  });
}

/** The bytes of `words`, not copied. */
export function bytesOf(words: Uint32Array): Buffer {
  return Buffer.from(words.buffer, words.byteOffset, words.byteLength);
}

/**
 * Reads what `writeIdDirectory` wrote; RangeError when it does not hold a table. A segment has
 * fewer than `slotSpan` slots (how id-table.ts names a slot).
 */
export function readIdDirectory(input: BytesReader, slotSpan: number): IdDirectory {
  const depth = input.u32();
  if (depth > MAX_DEPTH) throw new RangeError(`an id table of directory depth ${depth}`);
  const segments = input.u32();
  const ids = input.u32();
  const live = input.u32();
  if (segments < 1 || segments > 2 ** depth || live > ids)
    throw new RangeError(`an id table of ${segments} segments at depth ${depth}, ${ids} ids, ${live} live`);
  const directory = new Array<IdSegment>(2 ** depth);
  let heldIds = 0;
  let heldLive = 0;
  for (let n = 0; n < segments; n += 1) {
    const { segment, live: segmentLive } = readSegmentInto(input, directory, depth, slotSpan);
    heldIds += segment.ids;
    heldLive += segmentLive;
  }
  for (let i = 0; i < directory.length; i += 1)
    if (directory[i] === undefined) throw new RangeError(`no id segment for directory entry ${i}`);
  if (heldIds !== ids || heldLive !== live)
    throw new RangeError(`an id table that holds ${heldIds} ids (${heldLive} live), not ${ids} (${live})`);
  return { directory, depth, ids, live };
}

/** The next segment of `input`, checked and pointed at by its entries of `directory`, which no other segment took; its live ids. */
function readSegmentInto(
  input: BytesReader,
  directory: IdSegment[],
  depth: number,
  slotSpan: number,
): { readonly segment: IdSegment; readonly live: number } {
  const capacity = input.u32();
  const segmentDepth = input.u32();
  const prefix = input.u32();
  if (capacity < MIN_SEGMENT_SLOTS || capacity >= slotSpan || segmentDepth > depth || prefix >= 2 ** segmentDepth)
    throw new RangeError(`an id segment of ${capacity} slots at depth ${segmentDepth}, prefix ${prefix}`);
  // A capacity beyond the data allocates nothing.
  if (capacity * SLOT_BYTES > input.remaining)
    throw new RangeError(`an id segment of ${capacity} slots where ${input.remaining} bytes are left`);
  const read = readSegment(input, capacity, segmentDepth, prefix);
  const shift = depth - segmentDepth;
  for (let i = prefix * 2 ** shift; i < (prefix + 1) * 2 ** shift; i += 1)
    if (directory[i] !== undefined) throw new RangeError(`two id segments for directory entry ${i}`);
  pointEntries(directory, depth, read.segment);
  return read;
}
