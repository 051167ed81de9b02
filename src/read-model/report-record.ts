// One report as the report table stores it, in bytes: u8 flags | u32 name bytes | (u32 tag bytes)
// | name | (tag). A string is latin1 when every character fits in one byte, UTF-16 otherwise, so
// every JS string (lone surrogates included) comes back exactly. A flag says when name and tag are
// printable ASCII without `"` or `\`, whose JSON form is their bytes in quotes (the digest copies
// them as they are).
import type { StoredReport } from '../../projections/reports.js';
import type { BytesOut } from './bytes.js';
import type { IdDigits } from './int64-id.js';

const NAME_TWO_BYTE = 1;
const HAS_TAG = 2;
const TAG_TWO_BYTE = 4;
const JSON_PLAIN = 8;
const WIDE = /[^\u0000-\u00ff]/;

/** Bytes a record of `name` and `tag` takes. */
export function recordLength(name: string, tag: string | undefined): number {
  const nameBytes = WIDE.test(name) ? name.length * 2 : name.length;
  if (tag === undefined) return 5 + nameBytes;
  return 9 + nameBytes + (WIDE.test(tag) ? tag.length * 2 : tag.length);
}

/** Writes the record of `name` and `tag` at `position` (room for recordLength bytes is there). */
export function writeRecord(chunk: Buffer, position: number, name: string, tag: string | undefined): void {
  const nameWide = WIDE.test(name);
  const nameBytes = nameWide ? name.length * 2 : name.length;
  const header = tag === undefined ? 5 : 9;
  chunk.writeUInt32LE(nameBytes, position + 1);
  let plain = nameWide ? (chunk.write(name, position + header, 'ucs2'), false) : writeOneByte(chunk, position + header, name);
  let flags = nameWide ? NAME_TWO_BYTE : 0;
  if (tag !== undefined) {
    const tagWide = WIDE.test(tag);
    flags |= HAS_TAG | (tagWide ? TAG_TWO_BYTE : 0);
    chunk.writeUInt32LE(tagWide ? tag.length * 2 : tag.length, position + 5);
    const tagAt = position + header + nameBytes;
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
  const nameBytes = chunk.readUInt32LE(position + 1);
  if ((flags & HAS_TAG) === 0) return { name: decode(chunk, position + 5, nameBytes, (flags & NAME_TWO_BYTE) !== 0) };
  const tagBytes = chunk.readUInt32LE(position + 5);
  const start = position + 9;
  return { name: decode(chunk, start, nameBytes, (flags & NAME_TWO_BYTE) !== 0), tag: decode(chunk, start + nameBytes, tagBytes, (flags & TAG_TWO_BYTE) !== 0) };
}

/** Bytes the record at `position` takes. */
export function storedLength(chunk: Buffer, position: number): number {
  const flags = chunk[position] as number;
  const nameBytes = chunk.readUInt32LE(position + 1);
  return (flags & HAS_TAG) === 0 ? 5 + nameBytes : 9 + nameBytes + chunk.readUInt32LE(position + 5);
}

/** Writes the report's canonical line (projections/canonical.ts) for the id loaded in `id` to `out`. */
export function writeCanonicalLine(out: BytesOut, chunk: Buffer, position: number, id: IdDigits): void {
  const flags = chunk[position] as number;
  if ((flags & JSON_PLAIN) === 0) {
    writeJsonLine(out, readRecord(chunk, position), id.bytes().toString('latin1'));
    return;
  }
  const nameBytes = chunk.readUInt32LE(position + 1);
  const tagged = (flags & HAS_TAG) !== 0;
  const start = position + (tagged ? 9 : 5);
  const tagBytes = tagged ? chunk.readUInt32LE(position + 5) : 0;
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
