// The directory of an id table (id-table.ts) as plain values: what the modules that make, join,
// move, write and walk a table share with it, so that none of them reaches into the class, and the
// one way a directory's entries are pointed at a segment and its segments visited.
import { IdSegment, MIN_SEGMENT_SLOTS } from './id-segment.js';

/**
 * Bits of the hash the directory uses at most: a million entries (8 MB), for billions of ids, far
 * beyond what 32-bit record positions allow. Past it a full segment grows instead of splitting.
 */
export const MAX_DEPTH = 20;

/** What an IdTable is made of. */
export interface IdDirectory {
  /** Entry i: the segment of the ids whose hashes begin with the `depth` bits of i. */
  readonly directory: IdSegment[];
  readonly depth: number;
  /** Ids held, live or deleted. */
  readonly ids: number;
  readonly live: number;
}

/** The directory of an empty table of 2^depth segments. */
export function emptyDirectory(depth: number): IdSegment[] {
  return Array.from({ length: 2 ** depth }, (_, prefix) => new IdSegment(MIN_SEGMENT_SLOTS, depth, prefix));
}

/** Points the entries of `directory` (of 2^depth) that `segment` covers at it. */
export function pointEntries(directory: IdSegment[], depth: number, segment: IdSegment): void {
  const shift = depth - segment.depth;
  const end = (segment.prefix + 1) * 2 ** shift;
  for (let i = segment.prefix * 2 ** shift; i < end; i += 1) directory[i] = segment;
}

/** Calls `visit` with each segment once, in directory order (a segment's entries lie together). */
export function forEachSegmentIn(
  directory: readonly IdSegment[],
  depth: number,
  visit: (segment: IdSegment) => void,
): void {
  for (let i = 0; i < directory.length;) {
    const segment = directory[i] as IdSegment;
    visit(segment);
    i += 2 ** (depth - segment.depth);
  }
}
