// Sorts int64 keys held as two 32-bit words, each with a payload (the id table's record position), in numeric
// order. The state digest visits every live report in id order, so this runs over a million keys
// for `reports replay`. No comparison sort can carry the payload natively (a BigInt64Array sorts
// keys alone, and each would then be looked up again), so this is an LSD radix sort a byte at a
// time: one pass counts every byte position, then each position where the keys differ costs a
// pass that moves key and payload. Ids of one range (1 to a million, or 7×10^18 onwards) differ in
// three bytes: three passes, as fast as the native sort of packed small keys it replaces; ids
// spread over the whole range take up to eight.

const BYTES = 8;

export interface Int64Keys {
  readonly low: Uint32Array;
  readonly high: Uint32Array;
  readonly payload: Uint32Array;
}

function bump(counts: Uint32Array, at: number): void {
  counts[at] = (counts[at] as number) + 1;
}

/** The count of each value of each byte of the keys (the high word's sign bit flipped: signed order). */
function byteCounts({ low, high }: Int64Keys, length: number): Uint32Array {
  const counts = new Uint32Array(BYTES * 256);
  for (let i = 0; i < length; i += 1) {
    const l = low[i] as number;
    const h = ((high[i] as number) ^ 0x80000000) >>> 0;
    bump(counts, l & 255);
    bump(counts, 256 + ((l >>> 8) & 255));
    bump(counts, 512 + ((l >>> 16) & 255));
    bump(counts, 768 + (l >>> 24));
    bump(counts, 1024 + (h & 255));
    bump(counts, 1280 + ((h >>> 8) & 255));
    bump(counts, 1536 + ((h >>> 16) & 255));
    bump(counts, 1792 + (h >>> 24));
  }
  return counts;
}

/** Turns byte `position`'s counts into where each value's run starts; false when every key has the same byte there. */
function startsOf(counts: Uint32Array, position: number, length: number): boolean {
  let sum = 0;
  for (let value = position * 256, end = value + 256; value < end; value += 1) {
    const count = counts[value] as number;
    if (count === length) return false;
    counts[value] = sum;
    sum += count;
  }
  return true;
}

/**
 * The first `length` keys with their payloads, sorted by signed int64 value (ties keep their
 * order). The arrays given may be reordered or reused; use the ones returned.
 */
export function sortInt64(keys: Int64Keys, length: number): Int64Keys {
  const counts = byteCounts(keys, length);
  let { low, high, payload } = keys;
  let spare: Int64Keys | undefined;
  for (let position = 0; position < BYTES; position += 1) {
    if (!startsOf(counts, position, length)) continue;
    spare ??= { low: new Uint32Array(length), high: new Uint32Array(length), payload: new Uint32Array(length) };
    const { low: toLow, high: toHigh, payload: toPayload } = spare;
    const word = position < 4 ? low : high;
    const shift = (position & 3) * 8;
    // The sign bit is flipped for the top byte only (the others are the same either way).
    const flip = position === BYTES - 1 ? 0x80 : 0;
    const base = position * 256;
    for (let i = 0; i < length; i += 1) {
      const bucket = base + ((((word[i] as number) >>> shift) & 255) ^ flip);
      const to = counts[bucket] as number;
      counts[bucket] = to + 1;
      toLow[to] = low[i] as number;
      toHigh[to] = high[i] as number;
      toPayload[to] = payload[i] as number;
    }
    spare = { low, high, payload };
    ({ low, high, payload } = { low: toLow, high: toHigh, payload: toPayload });
  }
  return { low, high, payload };
}
