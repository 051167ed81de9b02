// The fast path of the JSON body parser. Almost every body is a flat object whose only number is
// a small integer id, `{"id": 42, "name": "…", "tag": "…"}`; for those, the native JSON.parse gives
// exactly what the exact parser (json-body.ts) gives, once the id is taken from its literal text.
// Everything else goes to the exact parser: nested values (lossless-json refuses duplicate keys
// with different values at any depth, JSON.parse keeps the last), duplicate keys, escaped keys,
// any other number (`1.0`, `1e3`, 16 or more digits, a second number: JSON.parse would round them
// or make 1.0 look like 1), and text that JSON.parse refuses (so the error message is the exact
// parser's). test/http/flat-json.test.ts compares both parsers on many generated bodies.

/** At most 15 digits: always a safe integer, so BigInt of the literal is the exact parser's value. -0 is left to it. */
const SMALL_INTEGER = /^(?:0|-?[1-9][0-9]{0,14})$/;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;

function isWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

/** The object `text` holds when it is flat and its only number is a small integer `id`; else undefined. */
export function parseFlatJson(text: string): Record<string, unknown> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const members = scanMembers(text);
  if (members === undefined) return undefined;
  const object = parsed as Record<string, unknown>;
  // Fewer own keys than members in the text: a key was repeated.
  if (Object.keys(object).length !== members.count) return undefined;
  if (members.idLiteral !== undefined) {
    if (!SMALL_INTEGER.test(members.idLiteral)) return undefined;
    object['id'] = BigInt(members.idLiteral);
  }
  return object;
}

/**
 * Walks the members of the top-level object of `text`, which JSON.parse has accepted (so its
 * syntax is valid and only the shape is checked here): their number, and the literal of a
 * numeric `id`. Undefined when a key holds an escape, a value is an object or an array, or a
 * number is anything but the one `id`.
 */
function scanMembers(text: string): { count: number; idLiteral: string | undefined } | undefined {
  let i = text.indexOf('{') + 1;
  let count = 0;
  let idLiteral: string | undefined;
  for (;;) {
    while (isWhitespace(text.charCodeAt(i))) i++;
    if (text.charCodeAt(i) !== QUOTE) return { count, idLiteral }; // `}`: the end (an empty object included)
    const keyStart = i + 1;
    i = text.indexOf('"', keyStart);
    const key = text.slice(keyStart, i);
    if (key.includes('\\')) return undefined;
    i = text.indexOf(':', i + 1) + 1;
    while (isWhitespace(text.charCodeAt(i))) i++;
    const first = text.charCodeAt(i);
    if (first === QUOTE) {
      i = endOfString(text, i + 1);
    } else if (first === OPEN_BRACE || first === OPEN_BRACKET) {
      return undefined;
    } else {
      const valueStart = i;
      while (
        i < text.length &&
        !isWhitespace(text.charCodeAt(i)) &&
        text.charCodeAt(i) !== COMMA &&
        text.charCodeAt(i) !== 0x7d
      )
        i++;
      const literal = text.slice(valueStart, i);
      const isNumber = literal !== 'true' && literal !== 'false' && literal !== 'null';
      if (isNumber) {
        if (key !== 'id' || idLiteral !== undefined) return undefined;
        idLiteral = literal;
      }
    }
    count += 1;
    while (isWhitespace(text.charCodeAt(i))) i++;
    if (text.charCodeAt(i) !== COMMA) return { count, idLiteral };
    i++;
  }
}

/** The index just past the closing quote of the string whose content starts at `i`. */
function endOfString(text: string, i: number): number {
  for (;;) {
    const quote = text.indexOf('"', i);
    // An escaped quote is preceded by an odd number of backslashes.
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    i = quote + 1;
  }
}
