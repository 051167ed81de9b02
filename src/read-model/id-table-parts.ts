// An id table (id-table.ts) as a structured clone carries it to another thread: its segments'
// arrays move with the message instead of being copied.
import { forEachSegmentIn, pointEntries, type IdDirectory } from './id-directory.js';
import { IdSegment } from './id-segment.js';

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

/** What the table holds, for another thread (the arrays move with the message, see directoryFromParts). */
export function partsOf(table: IdDirectory): IdTableParts {
  const segments: IdSegmentParts[] = [];
  forEachSegmentIn(table.directory, table.depth, (segment) =>
    segments.push({
      capacity: segment.capacity,
      depth: segment.depth,
      prefix: segment.prefix,
      ids: segment.ids,
      words: segment.transferable(),
    }),
  );
  return { depth: table.depth, segments, ids: table.ids, live: table.live };
}

/** The table another thread's `partsOf` described (this process wrote it: not checked again). */
export function directoryFromParts(parts: IdTableParts): IdDirectory {
  const directory = new Array<IdSegment>(2 ** parts.depth);
  for (const part of parts.segments)
    pointEntries(directory, parts.depth, new IdSegment(part.capacity, part.depth, part.prefix, part));
  return { directory, depth: parts.depth, ids: parts.ids, live: parts.live };
}
