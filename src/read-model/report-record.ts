// One report as the report table stores it, in bytes. Content in the clear (events written before
// erasure): u8 flags | name bytes | (tag bytes) | name | (tag), the byte counts as unsigned LEB128
// varints (one byte each below 128: three bytes of header for a usual report rather than nine with
// u32 counts, which pays for the id's version). A string is latin1 when every character fits in
// one byte, UTF-16 otherwise, so every JS string (lone surrogates included) comes back exactly.
// Sealed content (projections/sealing.ts): u8 flags | key id bytes | box bytes | key id | box,
// the box's ciphertext and tag as the event carried them (base64 there, bytes here), so the fold
// copies them and never opens anything; a flag says whether the event carried `expectedversion`
// (it is then the report's version less one, the create having taken effect on it).
import { writeBase64 } from './base64-into.js';
import { contentDigest, digestOfBytesInto, TAG_SEPARATOR } from '../../projections/sealing.js';
import { isSealedReport, type ReportContent, type SealedReport, type StoredReport } from '../../projections/reports.js';
import type { BytesOut } from './bytes.js';
import type { IdDigits } from './int64-id.js';

const NAME_TWO_BYTE = 1;
const HAS_TAG = 2;
const TAG_TWO_BYTE = 4;
const SEALED = 16;
const HAS_BASIS = 32;
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

/** Bytes the record of `report` takes. */
export function recordLength(report: ReportContent): number {
  if (isSealedReport(report)) {
    const keyBytes = Buffer.byteLength(report.sealed.key, 'base64url');
    const boxBytes = Buffer.byteLength(report.sealed.box, 'base64');
    return 1 + varintBytes(keyBytes) + varintBytes(boxBytes) + keyBytes + boxBytes;
  }
  return plainLength(report.name, report.tag);
}

function plainLength(name: string, tag: string | undefined): number {
  const nameBytes = byteLength(name);
  if (tag === undefined) return 1 + varintBytes(nameBytes) + nameBytes;
  const tagBytes = byteLength(tag);
  return 1 + varintBytes(nameBytes) + varintBytes(tagBytes) + nameBytes + tagBytes;
}

/** Writes the record of `report` at `position` (room for recordLength bytes is there). */
export function writeRecord(chunk: Buffer, position: number, report: ReportContent): void {
  if (isSealedReport(report)) writeSealed(chunk, position, report);
  else writePlain(chunk, position, report.name, report.tag);
}

function writeSealed(chunk: Buffer, position: number, { sealed, expectedversion }: SealedReport): void {
  const keyBytes = Buffer.byteLength(sealed.key, 'base64url');
  const boxBytes = Buffer.byteLength(sealed.box, 'base64');
  chunk[position] = SEALED | (expectedversion === undefined ? 0 : HAS_BASIS);
  let at = writeVarint(chunk, position + 1, keyBytes);
  at = writeVarint(chunk, at, boxBytes);
  at += writeBase64(chunk, at, sealed.key, keyBytes, 'base64url');
  writeBase64(chunk, at, sealed.box, boxBytes, 'base64');
}

function writePlain(chunk: Buffer, position: number, name: string, tag: string | undefined): void {
  const nameWide = WIDE.test(name);
  const nameBytes = nameWide ? name.length * 2 : name.length;
  const tagWide = tag !== undefined && WIDE.test(tag);
  let at = writeVarint(chunk, position + 1, nameBytes);
  if (tag !== undefined) at = writeVarint(chunk, at, tagWide ? tag.length * 2 : tag.length);
  if (nameWide) chunk.write(name, at, 'ucs2');
  else writeOneByte(chunk, at, name);
  let flags = nameWide ? NAME_TWO_BYTE : 0;
  if (tag !== undefined) {
    flags |= HAS_TAG | (tagWide ? TAG_TWO_BYTE : 0);
    if (tagWide) chunk.write(tag, at + nameBytes, 'ucs2');
    else writeOneByte(chunk, at + nameBytes, tag);
  }
  chunk[position] = flags;
}

/** Writes a string whose characters all fit in one byte, a byte each (a loop beats the encoder call for the short strings reports hold). */
function writeOneByte(chunk: Buffer, at: number, text: string): void {
  for (let i = 0; i < text.length; i += 1) chunk[at + i] = text.charCodeAt(i);
}

/** Whether the record at `position` holds sealed content. */
export function isSealedRecord(chunk: Buffer, position: number): boolean {
  return ((chunk[position] as number) & SEALED) !== 0;
}

/** Where the key id of the sealed record at `position` starts in the chunk (`keyBytes` long, the varint after the flags). */
function sealedKeyStart(chunk: Buffer, position: number, keyBytes: number): number {
  const at = position + 1 + varintBytes(keyBytes);
  return at + varintBytes(readVarint(chunk, at));
}

/** The key id of the sealed record at `position` (a view, as sealedParts's, without the rest). */
export function sealedKeyId(chunk: Buffer, position: number): Buffer {
  const keyBytes = readVarint(chunk, position + 1);
  const at = sealedKeyStart(chunk, position, keyBytes);
  return chunk.subarray(at, at + keyBytes);
}

/** The key id and box of the sealed record at `position` (views into the chunk), and whether its event carried a basis. */
export function sealedParts(chunk: Buffer, position: number): { keyId: Buffer; box: Buffer; hasBasis: boolean } {
  const flags = chunk[position] as number;
  const keyBytes = readVarint(chunk, position + 1);
  let at = position + 1 + varintBytes(keyBytes);
  const boxBytes = readVarint(chunk, at);
  at += varintBytes(boxBytes);
  return {
    keyId: chunk.subarray(at, at + keyBytes),
    box: chunk.subarray(at + keyBytes, at + keyBytes + boxBytes),
    hasBasis: (flags & HAS_BASIS) !== 0,
  };
}

/** The report's content; `version` is the report's (a sealed record's basis is that version less one). */
export function readRecord(chunk: Buffer, position: number, version: number): ReportContent {
  if (isSealedRecord(chunk, position)) {
    const { keyId, box, hasBasis } = sealedParts(chunk, position);
    const sealed = { key: keyId.toString('base64url'), box: box.toString('base64') };
    return hasBasis ? { sealed, expectedversion: version - 1 } : { sealed };
  }
  return readPlain(chunk, position);
}

function readPlain(chunk: Buffer, position: number): StoredReport {
  const flags = chunk[position] as number;
  const nameBytes = readVarint(chunk, position + 1);
  let start = position + 1 + varintBytes(nameBytes);
  if ((flags & HAS_TAG) === 0) return { name: decode(chunk, start, nameBytes, (flags & NAME_TWO_BYTE) !== 0) };
  const tagBytes = readVarint(chunk, start);
  start += varintBytes(tagBytes);
  return {
    name: decode(chunk, start, nameBytes, (flags & NAME_TWO_BYTE) !== 0),
    tag: decode(chunk, start + nameBytes, tagBytes, (flags & TAG_TWO_BYTE) !== 0),
  };
}

/** The end of a varint at `at` that ends before `end` (at most 5 bytes), or -1. */
function varintEnd(chunk: Buffer, at: number, end: number): number {
  for (let r = at; r < end && r < at + 5; r += 1) if ((chunk[r] as number) < 0x80) return r + 1;
  return -1;
}

/**
 * Where the record at `position` ends, or -1 when no whole record lies there within the first
 * `used` bytes of `chunk` (a snapshot's table is checked so, record after record).
 */
export function recordEnd(chunk: Buffer, position: number, used: number): number {
  if (position < 0 || position >= used) return -1;
  const nameEnd = varintEnd(chunk, position + 1, used);
  if (nameEnd < 0) return -1;
  const nameBytes = readVarint(chunk, position + 1);
  // A sealed record's two counts are its key id's and its box's, laid out as a tagged record's.
  if (((chunk[position] as number) & (HAS_TAG | SEALED)) === 0)
    return nameEnd + nameBytes <= used ? nameEnd + nameBytes : -1;
  const tagEnd = varintEnd(chunk, nameEnd, used);
  if (tagEnd < 0) return -1;
  const end = tagEnd + nameBytes + readVarint(chunk, nameEnd);
  return end <= used ? end : -1;
}

/** Bytes the record at `position` takes. */
export function storedLength(chunk: Buffer, position: number): number {
  const flags = chunk[position] as number;
  const nameBytes = readVarint(chunk, position + 1);
  const header = 1 + varintBytes(nameBytes);
  if ((flags & (HAS_TAG | SEALED)) === 0) return header + nameBytes;
  const tagBytes = readVarint(chunk, position + header);
  return header + varintBytes(tagBytes) + nameBytes + tagBytes;
}

/**
 * Copies the content digest of the key whose id is `keyId[start, end)` (a sealed record's) from the
 * key store into `into` (32 bytes, a SHA-256); false when the key is not there. Into a buffer the
 * caller reuses, not as a view: the state digest asks it of every live report, and a view of the
 * key id and one of the digest for each took a fifth of the digest's time at a million reports.
 */
export type KeyDigest = (keyId: Uint8Array, start: number, end: number, into: Uint8Array) => boolean;

const NULL_DIGEST = Buffer.from('null', 'latin1');
const HEX = Buffer.from('0123456789abcdef', 'latin1');

/** What writeCanonicalLine works in, made once for every line of a pass (canonicalScratch). */
export interface CanonicalScratch {
  /** A line's content digest. */
  readonly digest: Buffer;
  /** A plain record's content bytes, when they fit. */
  readonly content: Buffer;
}

/** Content longer than this (in bytes) is digested through strings, as all content used to be. */
const SCRATCH_CONTENT_BYTES = 4096;
export function canonicalScratch(): CanonicalScratch {
  return { digest: Buffer.alloc(32), content: Buffer.alloc(SCRATCH_CONTENT_BYTES) };
}

/**
 * Writes the report's canonical line (projections/canonical.ts) for the id loaded in `id` to `out`:
 * `["<id>","<hex of the content digest>"]`, the digest from the key store for sealed content.
 */
export function writeCanonicalLine(
  out: BytesOut,
  chunk: Buffer,
  position: number,
  id: IdDigits,
  keyDigest: KeyDigest,
  scratch: CanonicalScratch,
): void {
  let digest: Buffer | undefined = scratch.digest;
  if (isSealedRecord(chunk, position)) {
    const keyBytes = readVarint(chunk, position + 1);
    const keyStart = sealedKeyStart(chunk, position, keyBytes);
    if (!keyDigest(chunk, keyStart, keyStart + keyBytes, digest)) digest = undefined;
  } else if (!asciiDigestInto(chunk, position, scratch)) {
    digest = contentDigest(readPlain(chunk, position));
  }
  const room = out.reserve(id.length + (digest === undefined ? NULL_DIGEST.length : 66) + 6);
  const buffer = room.buffer;
  let w = room.at;
  buffer[w++] = 0x5b; // [
  buffer[w++] = 0x22; // "
  id.write(buffer, w);
  w += id.length;
  buffer[w++] = 0x22; // "
  buffer[w++] = 0x2c; // ,
  if (digest === undefined) {
    w += NULL_DIGEST.copy(buffer, w);
  } else {
    buffer[w++] = 0x22;
    // Hex a byte at a time into the line: no string per report.
    for (let i = 0; i < digest.length; i += 1) {
      const byte = digest[i] as number;
      buffer[w++] = HEX[byte >> 4] as number;
      buffer[w++] = HEX[byte & 15] as number;
    }
    buffer[w++] = 0x22;
  }
  buffer[w++] = 0x5d; // ]
  buffer[w] = 0x0a; // newline
}

/**
 * The content digest of the plain record at `position` into `scratch.digest`, when its name and tag
 * are stored a byte a character, all ASCII (nearly every report): those bytes are the content's
 * UTF-8 as they lie, laid out in `scratch.content` and hashed there (strings, their UTF-8 and a
 * digest buffer per report took 2.5 s of the digest of a million). False for every other record.
 */
function asciiDigestInto(chunk: Buffer, position: number, { content, digest }: CanonicalScratch): boolean {
  const flags = chunk[position] as number;
  if ((flags & (NAME_TWO_BYTE | TAG_TWO_BYTE)) !== 0) return false;
  const nameBytes = readVarint(chunk, position + 1);
  let start = position + 1 + varintBytes(nameBytes);
  const tagBytes = (flags & HAS_TAG) === 0 ? -1 : readVarint(chunk, start);
  if (tagBytes >= 0) start += varintBytes(tagBytes);
  const length = nameBytes + (tagBytes >= 0 ? 1 + tagBytes : 0);
  if (length > content.length) return false;
  let ascii = 0;
  for (let i = 0; i < nameBytes; i += 1) ascii |= content[i] = chunk[start + i] as number;
  if (tagBytes >= 0) {
    content[nameBytes] = TAG_SEPARATOR;
    for (let i = 0; i < tagBytes; i += 1) ascii |= content[nameBytes + 1 + i] = chunk[start + nameBytes + i] as number;
  }
  if (ascii >= 0x80) return false;
  digestOfBytesInto(content.subarray(0, length), digest);
  return true;
}

function decode(chunk: Buffer, start: number, bytes: number, wide: boolean): string {
  return wide ? chunk.toString('ucs2', start, start + bytes) : chunk.toString('latin1', start, start + bytes);
}
