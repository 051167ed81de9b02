// A report id is a canonical decimal int64; the id index keys it as two 32-bit words (two's
// complement, low word first) so every id, snowflake-sized ones included, takes the same path.
// Neither direction uses BigInt: a BigInt per id costs an allocation on the fold's hot path
// (parsing) and ~200 ns per id in a digest (printing), several times what these cost.

const TWO_32 = 4294967296;
/** A double holds every integer up to 15 decimal digits exactly; the rest are at most 4 digits. */
const EXACT_DIGITS = 15;
/** High words (signed) of the ids within ±2^53: a double holds them exactly. */
const SAFE_HIGH = 0x200000;

/**
 * Parses a canonical decimal int64 ("0", "-7", no leading zero, no "-0", no sign on positive
 * ids) into `key` as [low word, high word]; false (and `key` unchanged) for anything else, so a
 * non-canonical spelling such as "07" is never taken for another id.
 */
export function parseId(id: string, key: Uint32Array): boolean {
  const length = id.length;
  const negative = length > 0 && id.charCodeAt(0) === 45;
  const first = negative ? 1 : 0;
  const digits = length - first;
  if (digits === 0 || digits > 19) return false;
  if (id.charCodeAt(first) === 48 && (digits > 1 || negative)) return false;
  const split = digits > EXACT_DIGITS ? first + EXACT_DIGITS : length;
  let head = 0;
  for (let i = first; i < split; i += 1) {
    const digit = id.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return false;
    head = head * 10 + digit;
  }
  let low = head >>> 0;
  let high = (head - low) / TWO_32;
  if (split < length) {
    // The last digits: head * 10^k + tail in 32-bit halves, the low half's carry into the high one
    // (head's low word * 10^4 + tail < 2^46, exact in a double).
    let tail = 0;
    let scale = 1;
    for (let i = split; i < length; i += 1) {
      const digit = id.charCodeAt(i) - 48;
      if (digit < 0 || digit > 9) return false;
      tail = tail * 10 + digit;
      scale *= 10;
    }
    const lowPart = low * scale + tail;
    low = lowPart >>> 0;
    high = high * scale + (lowPart - low) / TWO_32;
  }
  // The magnitude is high * 2^32 + low: at most 2^63 - 1, or 2^63 for a negative id.
  if (high > 0x7fffffff && !(negative && high === 0x80000000 && low === 0)) return false;
  if (negative && low !== 0) {
    low = TWO_32 - low;
    high += 1;
  }
  // Stored as uint32: -high wraps to the two's complement high word.
  key[0] = low;
  key[1] = negative ? -high : high;
  return true;
}

/** The canonical decimal id of the int64 whose words are `low` and `high` (as uint32 or int32). */
export function idText(low: number, high: number): string {
  const signedHigh = high | 0;
  if (signedHigh >= -SAFE_HIGH && signedHigh < SAFE_HIGH) return String(signedHigh * TWO_32 + (low >>> 0));
  // Beyond ±2^53: the magnitude divided by 10^9 in three steps (32, 16, 16 bits; every partial
  // value below 2^53), the quotient and the 9-digit remainder printed apart.
  const negative = signedHigh < 0;
  const lowWord = low >>> 0;
  const magnitudeLow = negative && lowWord !== 0 ? TWO_32 - lowWord : lowWord;
  const magnitudeHigh = negative ? -signedHigh - (lowWord !== 0 ? 1 : 0) : signedHigh;
  const top = Math.floor(magnitudeHigh / 1e9);
  let rest = magnitudeHigh - top * 1e9;
  let part = rest * 65536 + (magnitudeLow >>> 16);
  const middle = Math.floor(part / 1e9);
  rest = part - middle * 1e9;
  part = rest * 65536 + (magnitudeLow & 0xffff);
  const bottom = Math.floor(part / 1e9);
  rest = part - bottom * 1e9;
  const quotient = top * TWO_32 + middle * 65536 + bottom;
  return `${negative ? '-' : ''}${quotient}${String(rest).padStart(9, '0')}`;
}
