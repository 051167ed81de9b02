// A report id is a canonical decimal int64; the id table keys it as two 32-bit words (two's
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
  if (id.length > MAX_ID_CHARS) return false;
  for (let i = 0; i < id.length; i += 1) ID_CHARS[i] = Math.min(id.charCodeAt(i), 0xff);
  return parseIdBytes(ID_CHARS, 0, id.length, key);
}

/** The longest canonical id: a sign and 19 digits. */
const MAX_ID_CHARS = 20;
/** parseId's copy of an id's characters (any beyond Latin-1 as 0xff, which no id holds): reused, never kept. */
const ID_CHARS = new Uint8Array(MAX_ID_CHARS);

/** parseId of the characters bytes[start..end) (ASCII, as a record's key holds a report id). */
export function parseIdBytes(bytes: Uint8Array, start: number, end: number, key: Uint32Array): boolean {
  const negative = end > start && bytes[start] === 45;
  const first = start + (negative ? 1 : 0);
  const digits = end - first;
  if (digits === 0 || digits > 19) return false;
  if (bytes[first] === 48 && (digits > 1 || negative)) return false;
  const split = digits > EXACT_DIGITS ? first + EXACT_DIGITS : end;
  let head = 0;
  for (let i = first; i < split; i += 1) {
    const digit = (bytes[i] as number) - 48;
    if (digit < 0 || digit > 9) return false;
    head = head * 10 + digit;
  }
  let low = head >>> 0;
  let high = (head - low) / TWO_32;
  if (split < end) {
    // The last digits: head * 10^k + tail in 32-bit halves, the low half's carry into the high one
    // (head's low word * 10^4 + tail < 2^46, exact in a double).
    let tail = 0;
    let scale = 1;
    for (let i = split; i < end; i += 1) {
      const digit = (bytes[i] as number) - 48;
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
  const digits = new IdDigits().load(low, high);
  return digits.bytes().toString('latin1');
}

/** "00" to "99": two digits a step halve the steps of printing an id. */
const DIGIT_PAIRS = Buffer.from(Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0')).join(''), 'latin1');

/**
 * Writes `value` (below 10^width, width at most 9) as `width` decimal digits ending before `end`,
 * zero-padded. `rest * 0.01` floors to `rest / 100` exactly below 2^30 (0.01 as a double is a little
 * above 1/100), and a multiplication is several times cheaper than a division.
 */
function writeDigits(buffer: Uint8Array, end: number, value: number, width: number): void {
  const start = end - width;
  let rest = value;
  let at = end;
  while (at - start >= 2) {
    const next = Math.floor(rest * 0.01);
    const pair = (rest - next * 100) * 2;
    buffer[at - 1] = DIGIT_PAIRS[pair + 1] as number;
    buffer[at - 2] = DIGIT_PAIRS[pair] as number;
    rest = next;
    at -= 2;
  }
  if (at > start) buffer[at - 1] = 48 + rest;
}

/** Decimal digits of `value` (below 10^9; at least one). */
function digitCount(value: number): number {
  let count = 1;
  for (let bound = 10; value >= bound && count < 9; bound *= 10) count += 1;
  return count;
}

/**
 * The decimal text of one int64 at a time, written as bytes: the state digest writes every id of
 * the table, and a string per id cost more than the rest of its line.
 */
export class IdDigits {
  private negative = false;
  /** The magnitude in base 10^9, most significant first: top (below 10), middle, bottom. */
  private top = 0;
  private middle = 0;
  private bottom = 0;
  /** Bytes of the text of the id last loaded. */
  length = 1;

  load(low: number, high: number): this {
    const signedHigh = high | 0;
    const lowWord = low >>> 0;
    this.negative = signedHigh < 0;
    if (signedHigh >= -SAFE_HIGH && signedHigh < SAFE_HIGH) {
      // Within ±2^53 the double is exact, and so are its quotient and remainder by 10^9.
      const magnitude = Math.abs(signedHigh * TWO_32 + lowWord);
      this.top = 0;
      this.middle = Math.floor(magnitude / 1e9);
      this.bottom = magnitude - this.middle * 1e9;
    } else {
      // Beyond: the magnitude's words divided by 10^9 in three steps (32, 16, 16 bits; every
      // partial value below 2^53).
      const magnitudeLow = this.negative && lowWord !== 0 ? TWO_32 - lowWord : lowWord;
      const magnitudeHigh = this.negative ? -signedHigh - (lowWord !== 0 ? 1 : 0) : signedHigh;
      const first = Math.floor(magnitudeHigh / 1e9);
      let part = (magnitudeHigh - first * 1e9) * 65536 + (magnitudeLow >>> 16);
      const second = Math.floor(part / 1e9);
      part = (part - second * 1e9) * 65536 + (magnitudeLow & 0xffff);
      const third = Math.floor(part / 1e9);
      const quotient = first * TWO_32 + second * 65536 + third;
      this.bottom = part - third * 1e9;
      this.top = Math.floor(quotient / 1e9);
      this.middle = quotient - this.top * 1e9;
    }
    const sign = this.negative ? 1 : 0;
    if (this.top > 0) this.length = sign + digitCount(this.top) + 18;
    else if (this.middle > 0) this.length = sign + digitCount(this.middle) + 9;
    else this.length = sign + digitCount(this.bottom);
    return this;
  }

  /** Writes the text of the id last loaded at `at` (room for `length` bytes is there). */
  write(buffer: Uint8Array, at: number): void {
    const end = at + this.length;
    if (this.negative) buffer[at] = 45; // -
    if (this.top > 0) {
      writeDigits(buffer, end, this.bottom, 9);
      writeDigits(buffer, end - 9, this.middle, 9);
      writeDigits(buffer, end - 18, this.top, this.length - 18 - (this.negative ? 1 : 0));
    } else if (this.middle > 0) {
      writeDigits(buffer, end, this.bottom, 9);
      writeDigits(buffer, end - 9, this.middle, this.length - 9 - (this.negative ? 1 : 0));
    } else {
      writeDigits(buffer, end, this.bottom, this.length - (this.negative ? 1 : 0));
    }
  }

  /** The text of the id last loaded, as bytes. */
  bytes(): Buffer {
    const buffer = Buffer.allocUnsafe(this.length);
    this.write(buffer, 0);
    return buffer;
  }
}
