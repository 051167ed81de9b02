// Decoding a record for the fold. JSON.parse of the whole CloudEvent and the compiled schema check
// cost about 1.5 µs an event, most of a long replay. Nearly every record is what this service
// writes: its attributes in the order the envelope puts them (src/reports/envelope.ts, the
// authcontext attributes included, then a traceparent from tracing.ts), strings of printable ASCII without escapes. One regular
// expression recognises exactly those and checks what the schema says on the way (about 0.15 µs).
// Anything else (another order, an escape, a non-ASCII character, whitespace, `tracestate`) goes to
// decodeEvent, which decides. The fast path never accepts what decodeEvent refuses and takes out
// the same event: test/read-model/fold-decode.test.ts holds it to that on generated and mutated
// records.
import { decodeEvent } from '../../projections/codec.js';
import { MAX_EXPECTED_VERSION, type FoldEvent } from '../../projections/reports.js';

/** What the fold needs of a decoded record, or why it is not an event. */
export type FoldInput =
  { readonly ok: true; readonly event: FoldEvent } | { readonly ok: false; readonly reason: string };

/** The content of a JSON string that needs no unescaping: printable ASCII except `"` and `\`. */
const PLAIN = '[\\x20\\x21\\x23-\\x5b\\x5d-\\x7f]';
/** The schema's report id pattern; the int64 bound is checked after the match. */
const REPORT_ID = '(0|-?[1-9][0-9]{0,18})';
/** The schema's RFC 3339 pattern. */
const TIME = '[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\\.[0-9]+)?(?:Z|[+-][0-9]{2}:[0-9]{2})';
/** The schema's expectedversion: a non-negative integer; its bound is checked after the match. */
const VERSION = '(?:"expectedversion":(0|[1-9][0-9]{0,9}),)?';
/** The authcontext extension as the envelope writes it (authtype, then authid if any): non-empty strings the fold does not need. */
const AUTH = `(?:"authtype":"${PLAIN}+",(?:"authid":"${PLAIN}+",)?)?`;
/** The schema's traceparent pattern; the all-zero ids it forbids are checked after the match. */
const TRACEPARENT = '(00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2})';
/** The schema's sealed content: a key id (base64url) and a box (base64, at least SEALED_BOX_MIN_CHARS, checked after). */
const SEALED = '"sealed":\\{"key":"([A-Za-z0-9_-]{1,32})","box":"([A-Za-z0-9+/]*={0,2})"\\}';
const SEALED_BOX_MIN_CHARS = 24;

/**
 * The canonical form: groups 1 the subject (which `data.id` must repeat, `\1`), 2 the expected
 * version of a create, 3 the key id and 4 the box of sealed content, or 5 the name and 6 the tag
 * in the clear, 7 the expected version of a delete, 8 the idempotency key, 9 the traceparent.
 * Event id and source are non-empty.
 */
const CANONICAL = new RegExp(
  [
    `^\\{"specversion":"1\\.0","id":"${PLAIN}+","source":"${PLAIN}+","subject":"${REPORT_ID}","time":"${TIME}",`,
    `"datacontenttype":"application/json","type":"Report`,
    `(?:Created",${VERSION}${AUTH}"data":\\{"id":"\\1",(?:${SEALED}|"name":"(${PLAIN}*)"(?:,"tag":"(${PLAIN}*)")?)|Deleted",${VERSION}${AUTH}"data":\\{"id":"\\1")`,
    `(?:,"idempotencyKey":"(${PLAIN}*)")?\\}(?:,"traceparent":"${TRACEPARENT}")?\\}$`,
  ].join(''),
);

const INT64_MAX = '9223372036854775807';
const INT64_MIN_DIGITS = '9223372036854775808';

/** For an id the pattern accepted: whether it lies within int64 (19-digit strings compare as numbers). */
function inInt64(id: string): boolean {
  if (id.startsWith('-')) return id.length < 20 || id.slice(1) <= INT64_MIN_DIGITS;
  return id.length < 19 || id <= INT64_MAX;
}

const ZERO_TRACE_ID = '0'.repeat(32);
const ZERO_PARENT_ID = '0'.repeat(16);

/**
 * The fold event of a record's text (read as latin1, so a non-ASCII byte is a character the
 * pattern refuses) in the canonical form, checked as the schema checks it; undefined when the
 * record is anything else, valid or not.
 */
export function decodeCanonical(text: string): FoldEvent | undefined {
  const match = CANONICAL.exec(text);
  if (match === null) return undefined;
  const [, id, createdVersion, key, box, name, tag, deletedVersion, idempotencyKey, traceparent] = match as unknown as [
    string,
    string,
    ...Array<string | undefined>,
  ];
  if (!inInt64(id)) return undefined;
  if (box !== undefined && box.length < SEALED_BOX_MIN_CHARS) return undefined;
  if (
    traceparent !== undefined &&
    (traceparent.startsWith(ZERO_TRACE_ID, 3) || traceparent.startsWith(ZERO_PARENT_ID, 36))
  )
    return undefined;
  const version = createdVersion ?? deletedVersion;
  const expectedversion = version === undefined ? undefined : Number(version);
  if (expectedversion !== undefined && expectedversion > MAX_EXPECTED_VERSION) return undefined;
  if (name === undefined && box === undefined) {
    const data = idempotencyKey === undefined ? { id } : { id, idempotencyKey };
    return expectedversion === undefined
      ? { type: 'ReportDeleted', data }
      : { type: 'ReportDeleted', expectedversion, data };
  }
  const content =
    box === undefined
      ? tag === undefined
        ? { id, name: name as string }
        : { id, name: name as string, tag }
      : { id, sealed: { key: key as string, box } };
  const data = idempotencyKey === undefined ? content : { ...content, idempotencyKey };
  return expectedversion === undefined
    ? { type: 'ReportCreated', data }
    : { type: 'ReportCreated', expectedversion, data };
}

/** The record at `bytes[start, end)` as the fold takes it, whichever path decodes it. */
export function decodeForFold(bytes: Buffer, start = 0, end = bytes.length): FoldInput {
  const fast = decodeCanonical(bytes.toString('latin1', start, end));
  if (fast !== undefined) return { ok: true, event: fast };
  // A whole CloudEvent is a FoldEvent too (the fold reads only its type and data).
  return decodeEvent(start === 0 && end === bytes.length ? bytes : bytes.subarray(start, end));
}
