// keys.db, the embedded key store's file (format 2): a header, then one fixed-size slot per key id
// ever minted, in id order, so a key's place in the file is its id times the slot size and no index
// is needed (a lookup over a million keys is one buffer).
//   header = "RSKEYS\0" | u8 format (2) | u32 BE slot bytes (72) | u32 BE CRC-32 of the 12 bytes before it
//   slot   = u32 BE CRC-32 of the 68 bytes after it | u8 state | 3 zero bytes | 32-byte secret | 32-byte content digest
// A destroyed slot is the same slot rewritten in place with state destroyed and zeros for the
// secret and the digest: the bytes that could open a report's content are overwritten, not
// marked. A reserved slot is one a later key's put went past before this key's own put came
// (puts arrive in any order; the file has no holes): zeros, until its put writes it in place.
// A deletion slot (format 2) is a destroyed slot that also records the deletion that destroyed it,
// in place of the secret: `i64 BE report id | u32 BE version the delete took it to`, zeros after
// (ids and versions only, never content). A delete of a report whose content was written in the
// clear has no key: it takes a new slot for its record. The record is what `reports restore`
// re-applies (docs/erasure.md). Format 1 is format 2 without deletion slots: read as it is, and
// its header rewritten as format 2 when the store opens it for writing, so that a version that
// knows only format 1 refuses the file rather than reading the records as damaged slots.
// Pure: the file's I/O is in key-file.ts and file-key-store.ts.
import { crc32 } from 'node:zlib';
import type { KeyId } from './key-store.js';
import { crc32Of } from './slot-crc.js';

export const KEYS_FORMAT = 2;
/** The format before deletion slots: read, and upgraded when opened for writing. */
export const KEYS_FORMAT_WITHOUT_RECORDS = 1;
/** Names the file and its format: a key store is never read as anything else, nor the reverse. */
export const KEYS_MAGIC = Buffer.from([...Buffer.from('RSKEYS\u0000', 'latin1'), KEYS_FORMAT]);
export const HEADER_BYTES = 16;
export const SLOT_BYTES = 72;
const CRC_BYTES = 4;
const STATE = 4;
const SECRET = 8;
const DIGEST = 40;
const RECORD_ID = SECRET;
const RECORD_VERSION = SECRET + 8;
export const SECRET_BYTES = 32;
export const DIGEST_BYTES = 32;
/** A key id is its slot number in this many bytes, big-endian: 8 base64url characters in events. */
export const KEY_ID_BYTES = 6;

export const SlotState = { reserved: 0, live: 1, destroyed: 2, deletion: 3 } as const;
export type SlotState = (typeof SlotState)[keyof typeof SlotState];

/** A deletion as a slot records it: the report (canonical decimal int64) and the version its delete took it to. */
export interface RecordedDeletion {
  readonly reportId: string;
  readonly version: number;
}

/** What a slot's bytes say: its key, that it holds none (a deletion slot: and which deletion), or that it fails its check. */
export type SlotView =
  | { readonly kind: 'live'; readonly secret: Buffer; readonly contentDigest: Buffer }
  | ({ readonly kind: 'deletion' } & RecordedDeletion)
  | { readonly kind: 'destroyed' | 'reserved' | 'damaged' };

/** A slot's new content: a live key's secret and digest, a deletion's record, or nothing (reserved, destroyed). */
export type SlotContent =
  | { readonly secret: Buffer; readonly contentDigest: Buffer }
  | { readonly deletion: RecordedDeletion }
  | typeof SlotState.reserved
  | typeof SlotState.destroyed;

export function encodeHeader(format: number = KEYS_FORMAT): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  KEYS_MAGIC.copy(header, 0);
  header[7] = format;
  header.writeUInt32BE(SLOT_BYTES, 8);
  header.writeUInt32BE(crc32(header.subarray(0, 12)), 12);
  return header;
}

/** The format a header names (`head` passed headerProblem). */
export function headerFormat(head: Buffer): number {
  return head[7] as number;
}

/** What is wrong with a header (`head` holds its 16 bytes), or undefined when this version reads it (format 1 or 2). */
export function headerProblem(head: Buffer): string | undefined {
  if (!head.subarray(0, 7).equals(KEYS_MAGIC.subarray(0, 7))) return 'it is not a key store (bad magic bytes)';
  if (head[7] !== KEYS_FORMAT && head[7] !== KEYS_FORMAT_WITHOUT_RECORDS)
    return `it is a key store of format ${head[7]}; this version reads formats ${KEYS_FORMAT_WITHOUT_RECORDS} and ${KEYS_FORMAT} only`;
  if (crc32(head.subarray(0, 12)) !== head.readUInt32BE(12)) return 'its header fails its CRC';
  const slotBytes = head.readUInt32BE(8);
  if (slotBytes !== SLOT_BYTES) return `its header names slots of ${slotBytes} bytes, not ${SLOT_BYTES}`;
  return undefined;
}

/** Where slot `slot` starts in the file. */
export function slotPosition(slot: number): number {
  return HEADER_BYTES + slot * SLOT_BYTES;
}

/** Writes slot content into `target` at `at` (SLOT_BYTES of room), CRC last. */
export function writeSlot(target: Buffer, at: number, content: SlotContent): void {
  target.fill(0, at, at + SLOT_BYTES);
  if (typeof content === 'number') {
    target[at + STATE] = content;
  } else if ('deletion' in content) {
    target[at + STATE] = SlotState.deletion;
    target.writeBigInt64BE(BigInt(content.deletion.reportId), at + RECORD_ID);
    target.writeUInt32BE(content.deletion.version, at + RECORD_VERSION);
  } else {
    target[at + STATE] = SlotState.live;
    content.secret.copy(target, at + SECRET, 0, SECRET_BYTES);
    content.contentDigest.copy(target, at + DIGEST, 0, DIGEST_BYTES);
  }
  target.writeUInt32BE(crc32Of(target, at + CRC_BYTES, at + SLOT_BYTES), at);
}

export function encodeSlot(content: SlotContent): Buffer {
  const slot = Buffer.allocUnsafe(SLOT_BYTES);
  writeSlot(slot, 0, content);
  return slot;
}

/** Whether the slot at `at` is whole and passes its CRC. */
export function slotIntact(bytes: Buffer, at: number): boolean {
  return at + SLOT_BYTES <= bytes.length && crc32Of(bytes, at + CRC_BYTES, at + SLOT_BYTES) === bytes.readUInt32BE(at);
}

/** Whether the slot at `at` passes its CRC and says what a version wrote (a known state, zero padding). */
export function slotSound(bytes: Buffer, at: number): boolean {
  return (
    slotIntact(bytes, at) &&
    (bytes[at + STATE] as number) <= SlotState.deletion &&
    bytes[at + 5] === 0 &&
    bytes[at + 6] === 0 &&
    bytes[at + 7] === 0
  );
}

/**
 * The slot at `at` (`sound`: the caller checked it already). The secret and digest are views into
 * `bytes`, not copies.
 */
export function viewSlot(bytes: Buffer, at: number, sound = slotSound(bytes, at)): SlotView {
  if (!sound) return { kind: 'damaged' };
  switch (bytes[at + STATE]) {
    case SlotState.live:
      return {
        kind: 'live',
        secret: bytes.subarray(at + SECRET, at + SECRET + SECRET_BYTES),
        contentDigest: bytes.subarray(at + DIGEST, at + DIGEST + DIGEST_BYTES),
      };
    case SlotState.destroyed:
      return { kind: 'destroyed' };
    case SlotState.deletion:
      return {
        kind: 'deletion',
        reportId: bytes.readBigInt64BE(at + RECORD_ID).toString(),
        version: bytes.readUInt32BE(at + RECORD_VERSION),
      };
    default:
      return { kind: 'reserved' };
  }
}

/** Copies a live slot's content digest into `into`, without the rest of its view; false for any other slot. */
export function copyLiveDigest(bytes: Buffer, at: number, sound: boolean, into: Uint8Array): boolean {
  if (!sound || bytes[at + STATE] !== SlotState.live) return false;
  // 32 bytes a byte at a time: less than the call into Buffer#copy.
  for (let i = 0; i < DIGEST_BYTES; i += 1) into[i] = bytes[at + DIGEST + i] as number;
  return true;
}

/** The slot a key id given as `bytes[start, end)` names; undefined for an id this store never gives (another length). */
export function slotOfKeyIdBytes(bytes: Uint8Array, start: number, end: number): number | undefined {
  if (end - start !== KEY_ID_BYTES) return undefined;
  let slot = 0;
  for (let i = start; i < end; i += 1) slot = slot * 256 + (bytes[i] as number);
  return slot;
}

export function keyIdOfSlot(slot: number): KeyId {
  const id = Buffer.allocUnsafe(KEY_ID_BYTES);
  id.writeUIntBE(slot, 0, KEY_ID_BYTES);
  return id;
}

/** The slot a key id names; undefined for an id this store never gives (another length). */
export function slotOfKeyId(id: KeyId): number | undefined {
  return slotOfKeyIdBytes(id, 0, id.length);
}
