// Walks over every segment of an id table (id-table.ts) that only read it: its live records and ids
// listed for a sweep, a digest or a check (in slot order, or sorted into the canonical order of
// ids), and what it costs (segments, slots, bytes).
import { forEachSegmentIn, type IdDirectory } from './id-directory.js';
import { type IdSegment, NO_RECORD, type SlotVisit } from './id-segment.js';
import { sortInt64, type Int64Keys } from './int64-sort.js';

/** Calls `visit` with every live id's record. */
export function forEachLiveRecord(table: IdDirectory, visit: (record: number) => void): void {
  forEachSegmentIn(table.directory, table.depth, (segment) =>
    segment.forEach((_low, _high, record) => {
      if (record !== NO_RECORD) visit(record);
    }),
  );
}

/** Calls `visit` with every live id's words, record and version, in slot order. */
export function forEachLiveId(table: IdDirectory, visit: SlotVisit): void {
  forEachSegmentIn(table.directory, table.depth, (segment) =>
    segment.forEach((low, high, record, version) => {
      if (record !== NO_RECORD) visit(low, high, record, version);
    }),
  );
}

/** The records of the live ids, in slot order. */
export function liveRecords(table: IdDirectory): Uint32Array {
  const records = new Uint32Array(table.live);
  let count = 0;
  forEachLiveRecord(table, (record) => {
    records[count] = record;
    count += 1;
  });
  return records.subarray(0, count);
}

/** The live ids (their words) and records, in numeric order of ids (the canonical order). */
export function liveInOrder(table: IdDirectory): { readonly keys: Int64Keys; readonly count: number } {
  const { live } = table;
  const keys = { low: new Uint32Array(live), high: new Uint32Array(live), payload: new Uint32Array(live) };
  let count = 0;
  forEachSegmentIn(table.directory, table.depth, (segment) =>
    segment.forEach((low, high, record) => {
      if (record === NO_RECORD) return;
      keys.low[count] = low;
      keys.high[count] = high;
      keys.payload[count] = record;
      count += 1;
    }),
  );
  return { keys: sortInt64(keys, count), count };
}

/** The segments of `directory` (of 2^depth). */
export function segmentCount(directory: readonly IdSegment[], depth: number): number {
  let count = 0;
  forEachSegmentIn(directory, depth, () => {
    count += 1;
  });
  return count;
}

/** Slots of all segments of `directory` (of 2^depth). */
export function slotCount(directory: readonly IdSegment[], depth: number): number {
  let count = 0;
  forEachSegmentIn(directory, depth, (segment) => {
    count += segment.capacity;
  });
  return count;
}

/** Bytes of the slots and the directory (what the table costs; 4 a slot are the versions). */
export function slotBytesOf(directory: readonly IdSegment[], depth: number): number {
  let bytes = directory.length * 8;
  forEachSegmentIn(directory, depth, (segment) => {
    bytes += segment.byteLength;
  });
  return bytes;
}
