// One report as the report table stores it, in bytes: u8 flags | name bytes | (tag bytes) | name
// | (tag), the byte counts as unsigned LEB128 varints (one byte each below 128: three bytes of
// header for a usual report rather than nine with u32 counts, which pays for the id's version). A
// string is latin1 when every character fits in one byte, UTF-16 otherwise, so every JS string
// (lone surrogates included) comes back exactly. A flag says when name and tag are printable ASCII
// without `"` or `\`, whose JSON form is their bytes in quotes (the digest copies them as they are).
import type { StoredReport } from '../../projections/reports.js';
import type { BytesOut } from './bytes.js';
import type { IdDigits } from './int64-id.js';

const NAME_TWO_BYTE = 1;
const HAS_TAG = 2;
const TAG_TWO_BYTE = 4;
const JSON_PLAIN = 8;
const WIDE = /[^\u0000-\u00ff]/;

/** Bytes of `value` (below 2^32) as a varint: 7 bits a byte. */
function varintBytes(value: number): number {
  return value < 0x80 ? 1 : value < 0x4000 ? 2 : value < 0x200000 ? 3 : value < 0x10000000 ? 4 : 5;
}

/** Writes `value` (below 2^32) as a varint at `at`; the position after it. */
function writeVarint(chunk: Buffer, at: number, value: number): number {
  let rest = value;
  let w = at;
  while (rest >= 0x80) {
    chunk[w++] = (rest & 0x7f) | 0x80;
    rest >>>= 7;
  }
  chunk[w] = rest;
  return w + 1;
}

function readVarint(chunk: Buffer, at: number): number {
  let value = 0;
  let scale = 1;
  for (let r = at; ; r += 1) {
    const byte = chunk[r] as number;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return value;
    scale *= 128;
  }
}

function byteLength(text: string): number {
  return WIDE.test(text) ? text.length * 2 : text.length;
}

/** Bytes a record of `name` and `tag` takes. */
export function recordLength(name: string, tag: string | undefined): number {
  const nameBytes = byteLength(name);
  if (tag === undefined) return 1 + varintBytes(nameBytes) + nameBytes;
  const tagBytes = byteLength(tag);
  return 1 + varintBytes(nameBytes) + varintBytes(tagBytes) + nameBytes + tagBytes;
}

/** Writes the record of `name` and `tag` at `position` (room for recordLength bytes is there). */
export function writeRecord(chunk: Buffer, position: number, name: string, tag: string | undefined): void {
  const nameWide = WIDE.test(name);
  const nameBytes = nameWide ? name.length * 2 : name.length;
  const tagWide = tag !== undefined && WIDE.test(tag);
  let at = writeVarint(chunk, position + 1, nameBytes);
  if (tag !== undefined) at = writeVarint(chunk, at, tagWide ? tag.length * 2 : tag.length);
  let plain = nameWide ? (chunk.write(name, at, 'ucs2'), false) : writeOneByte(chunk, at, name);
  let flags = nameWide ? NAME_TWO_BYTE : 0;
  if (tag !== undefined) {
    flags |= HAS_TAG | (tagWide ? TAG_TWO_BYTE : 0);
    const tagAt = at + nameBytes;
    plain = (tagWide ? (chunk.write(tag, tagAt, 'ucs2'), false) : writeOneByte(chunk, tagAt, tag)) && plain;
  }
  chunk[position] = plain ? flags | JSON_PLAIN : flags;
}

/**
 * Writes a string whose characters all fit in one byte, a byte each (a loop beats the encoder call
 * for the short strings reports hold), and tells whether it is JSON-plain.
 */
function writeOneByte(chunk: Buffer, at: number, text: string): boolean {
  let plain = true;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    chunk[at + i] = code;
    if (code < 0x20 || code > 0x7e || code === 0x22 || code === 0x5c) plain = false;
  }
  return plain;
}

export function readRecord(chunk: Buffer, position: number): StoredReport {
  const flags = chunk[position] as number;
  const nameBytes = readVarint(chunk, position + 1);
  let start = position + 1 + varintBytes(nameBytes);
  if ((flags & HAS_TAG) === 0) return { name: decode(chunk, start, nameBytes, (flags & NAME_TWO_BYTE) !== 0) };
  const tagBytes = readVarint(chunk, start);
  start += varintBytes(tagBytes);
  return { name: decode(chunk, start, nameBytes, (flags & NAME_TWO_BYTE) !== 0), tag: decode(chunk, start + nameBytes, tagBytes, (flags & TAG_TWO_BYTE) !== 0) };
}

/** Bytes the record at `position` takes. */
/** A varint at `at` that ends before `end` (at most 5 bytes): its value and where the next field starts. */
function varintBefore(chunk: Buffer, at: number, end: number): { value: number; next: number } | undefined {
  let value = 0;
  let scale = 1;
  for (let r = at; r < end && r < at + 5; r += 1) {
    const byte = chunk[r] as number;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return { value, next: r + 1 };
    scale *= 128;
  }
  return undefined;
}

/** Whether a whole record lies at `position` within the first `used` bytes of `chunk` (a snapshot's table is checked so). */
export function recordWithin(chunk: Buffer, position: number, used: number): boolean {
  if (position < 0 || position >= used) return false;
  const name = varintBefore(chunk, position + 1, used);
  if (name === undefined) return false;
  if (((chunk[position] as number) & HAS_TAG) === 0) return name.next + name.value <= used;
  const tag = varintBefore(chunk, name.next, used);
  return tag !== undefined && tag.next + name.value + tag.value <= used;
}

export function storedLength(chunk: Buffer, position: number): number {
  const flags = chunk[position] as number;
  const nameBytes = readVarint(chunk, position + 1);
  const header = 1 + varintBytes(nameBytes);
  if ((flags & HAS_TAG) === 0) return header + nameBytes;
  const tagBytes = readVarint(chunk, position + header);
  return header + varintBytes(tagBytes) + nameBytes + tagBytes;
}

/** Writes the report's canonical line (projections/canonical.ts) for the id loaded in `id` to `out`. */
export function writeCanonicalLine(out: BytesOut, chunk: Buffer, position: number, id: IdDigits): void {
  const flags = chunk[position] as number;
  if ((flags & JSON_PLAIN) === 0) {
    writeJsonLine(out, readRecord(chunk, position), id.bytes().toString('latin1'));
    return;
  }
  const nameBytes = readVarint(chunk, position + 1);
  const tagged = (flags & HAS_TAG) !== 0;
  let start = position + 1 + varintBytes(nameBytes);
  const tagBytes = tagged ? readVarint(chunk, start) : 0;
  if (tagged) start += varintBytes(tagBytes);
  const room = out.reserve(id.length + nameBytes + tagBytes + (tagged ? 11 : 8));
  const buffer = room.buffer;
  let w = room.at;
  buffer[w++] = 0x5b; // [
  buffer[w++] = 0x22; // "
  id.write(buffer, w);
  w = separator(buffer, w + id.length);
  for (let i = start, end = start + nameBytes; i < end; i += 1) buffer[w++] = chunk[i] as number;
  if (tagged) {
    w = separator(buffer, w);
    for (let i = start + nameBytes, end = start + nameBytes + tagBytes; i < end; i += 1) buffer[w++] = chunk[i] as number;
  }
  buffer[w++] = 0x22; // "
  buffer[w++] = 0x5d; // ]
  buffer[w] = 0x0a; // newline
}

/** A canonical line made with JSON.stringify: for text that needs escapes or is not one byte a character. */
function writeJsonLine(out: BytesOut, report: StoredReport, id: string): void {
  const line = `${JSON.stringify(report.tag === undefined ? [id, report.name] : [id, report.name, report.tag])}\n`;
  const room = out.reserve(Buffer.byteLength(line));
  room.buffer.write(line, room.at, 'utf8');
}

/** Writes `","` at `w`; returns the position after it. */
function separator(buffer: Buffer, w: number): number {
  buffer[w] = 0x22;
  buffer[w + 1] = 0x2c;
  buffer[w + 2] = 0x22;
  return w + 3;
}

function decode(chunk: Buffer, start: number, bytes: number, wide: boolean): string {
  return wide ? chunk.toString('ucs2', start, start + bytes) : chunk.toString('latin1', start, start + bytes);
}
