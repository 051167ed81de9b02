// A small deterministic generator (mulberry32), so a failure repeats, and int64 values drawn from it.

/** Numbers in [0, 1) from `seed`, the same sequence on every run. */
export function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An int64 with every bit drawn from `next`. */
export function randomInt64(next: () => number): bigint {
  const high = BigInt(Math.floor(next() * 2 ** 32));
  const low = BigInt(Math.floor(next() * 2 ** 32));
  return BigInt.asIntN(64, (high << 32n) | low);
}

/** The two 32-bit words of an int64, low first, as the id table holds them. */
export function words(value: bigint): [number, number] {
  return [Number(BigInt.asUintN(32, value)), Number(BigInt.asUintN(32, value >> 32n))];
}

/** The int64 values around each edge of the ranges an id can fall in (int32, uint32, safe integers, int64). */
export const INT64_EDGES: readonly bigint[] = [
  -(2n ** 63n),
  -(2n ** 63n) + 1n,
  -(2n ** 53n) - 1n,
  -(2n ** 53n),
  -(2n ** 53n) + 1n,
  -(2n ** 32n),
  -(2n ** 31n) - 1n,
  -(2n ** 31n),
  -1n,
  0n,
  1n,
  999n,
  2n ** 31n - 1n,
  2n ** 31n,
  2n ** 32n - 1n,
  2n ** 32n,
  10n ** 15n - 1n,
  10n ** 15n,
  2n ** 53n - 1n,
  2n ** 53n,
  2n ** 53n + 1n,
  7n * 10n ** 18n,
  2n ** 63n - 1n,
];
