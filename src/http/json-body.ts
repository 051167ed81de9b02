// JSON with exact integers. Plain JSON.parse turns 9007199254740993 into 9007199254740992, so the
// body is parsed with lossless-json and every number that is mathematically an integer becomes a
// bigint (1.0 and 1e3 included, as JSON Schema's `integer` allows); other numbers stay numbers.
import { parse } from 'lossless-json';
import { parseFlatJson } from './flat-json.js';

/** Exponents beyond this make the value far outside int64; keep them as (non-integer) numbers. */
const MAX_SCALE = 40;

export function exactInteger(literal: string): bigint | undefined {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(literal);
  if (!match) return undefined;
  const [, sign = '', whole = '', fraction = '', exponent = '0'] = match;
  const digits = (whole + fraction).replace(/^0+(?=\d)/, '');
  const scale = Number(exponent) - fraction.length;
  if (/^0+$/.test(digits)) return 0n;
  let magnitude: bigint;
  if (scale >= 0) {
    if (scale + digits.length > MAX_SCALE) return undefined;
    magnitude = BigInt(digits) * 10n ** BigInt(scale);
  } else {
    const dropped = digits.slice(scale);
    if (!/^0*$/.test(dropped)) return undefined;
    magnitude = BigInt(digits.slice(0, digits.length + scale) || '0');
  }
  return sign === '-' ? -magnitude : magnitude;
}

function parseNumber(literal: string): bigint | number {
  return exactInteger(literal) ?? Number(literal);
}

export class InvalidJsonError extends Error {}

/**
 * Arrays and objects nested deeper than this are refused before parsing. lossless-json recurses
 * once a level: 30,000 levels overflowed the stack (the engine's "Maximum call stack size exceeded"
 * reached the client) after ~20 ms of CPU. A NewReport is flat; unknown properties may nest, as
 * deep as anyone sends on purpose.
 */
export const MAX_JSON_DEPTH = 64;

export class JsonTooDeepError extends Error {
  constructor() {
    super(`nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`);
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Whether `text` opens more than `max` arrays or objects inside each other (brackets in strings do not count). */
export function nestedDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      // Skip the string: to its closing quote, past escaped characters.
      for (i++; i < text.length && text.charCodeAt(i) !== QUOTE; i++) if (text.charCodeAt(i) === BACKSLASH) i++;
    } else if (code === 0x5b || code === 0x7b) {
      if (++depth > max) return true;
    } else if (code === 0x5d || code === 0x7d) {
      depth--;
    }
  }
  return false;
}

export function parseExactJson(text: string): unknown {
  if (nestedDeeperThan(text, MAX_JSON_DEPTH)) throw new JsonTooDeepError();
  try {
    return parse(text, null, parseNumber);
  } catch (error) {
    throw new InvalidJsonError(error instanceof Error ? error.message : 'invalid JSON');
  }
}

/** The exact parse, through the fast path (flat-json.ts) for the flat bodies it proves equal. */
export function parseJsonBody(text: string): unknown {
  return parseFlatJson(text) ?? parseExactJson(text);
}
