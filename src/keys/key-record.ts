// The key topic's records, the one place that knows their bytes. Kafka key: the key id as events
// carry it (`keyIdText`, base64url), so the follower, the partitioner and an operator reading the
// topic all see the same text as `data.sealed.key`. Value: a format byte, the 32-byte secret, the
// 32-byte content digest. A destroyed key is a tombstone (no value) under its id, which compaction
// removes together with every earlier record of that id.
import { CONTENT_KEY_BYTES } from '../../projections/sealing.js';
import { keyIdText, parseKeyId, type ContentKey, type KeyId } from './key-store.js';

/** The value's first byte: a later format gets another number, and readers skip what they do not know. */
export const KEY_RECORD_FORMAT = 1;
/** Bytes of a content digest (SHA-256). */
export const CONTENT_DIGEST_BYTES = 32;
/** Bytes of what memory keeps per key: the secret, then the digest. */
export const KEY_MATERIAL_BYTES = CONTENT_KEY_BYTES + CONTENT_DIGEST_BYTES;
const SECRET_AT = 1;
const DIGEST_AT = SECRET_AT + CONTENT_KEY_BYTES;
export const KEY_RECORD_BYTES = DIGEST_AT + CONTENT_DIGEST_BYTES;
/** Longest key id (the port's contract). */
export const MAX_KEY_ID_BYTES = 16;

/**
 * The Kafka key of the records that roll a partition's segment (erasure-roll.ts): `~` is not in
 * base64url, so it is never a key id. They are tombstones, so compaction removes them too.
 */
export const ROLL_KEY = '~roll';

/** Throws on a key the store must never write (a programming error, not a client's). */
export function checkContentKey({ id, secret, contentDigest }: ContentKey): void {
  checkKeyId(id);
  if (secret.length !== CONTENT_KEY_BYTES)
    throw new RangeError(`a content key's secret is ${CONTENT_KEY_BYTES} bytes, got ${secret.length}`);
  if (contentDigest.length !== CONTENT_DIGEST_BYTES)
    throw new RangeError(`a content digest is ${CONTENT_DIGEST_BYTES} bytes, got ${contentDigest.length}`);
}

export function checkKeyId(id: KeyId): void {
  if (!isHoldableKeyId(id)) throw new RangeError(`a key id is 1 to ${MAX_KEY_ID_BYTES} bytes, got ${id.length}`);
}

/**
 * Whether a key store can hold a key of this id. The topic contract lets an event name longer ids
 * (up to 32 base64url characters): no key was ever put under such an id.
 */
export function isHoldableKeyId(id: KeyId): boolean {
  return id.length > 0 && id.length <= MAX_KEY_ID_BYTES;
}

export function encodeKeyValue({ secret, contentDigest }: ContentKey): Buffer {
  const value = Buffer.allocUnsafe(KEY_RECORD_BYTES);
  value[0] = KEY_RECORD_FORMAT;
  secret.copy(value, SECRET_AT);
  contentDigest.copy(value, DIGEST_AT);
  return value;
}

/** The secret then the digest, from a value `encodeKeyValue` made (a view of it, to be copied). */
export function keyMaterial(value: Buffer): Buffer {
  return value.subarray(SECRET_AT);
}

/** What a record of the key topic says. */
export type KeyRecord =
  | { readonly kind: 'key'; readonly idText: string; readonly material: Buffer }
  | { readonly kind: 'destroyed'; readonly idText: string }
  | { readonly kind: 'roll' }
  | { readonly kind: 'unreadable' };

/**
 * One record of the key topic, from its Kafka key and value (the follower gives a tombstone as an
 * empty value). `material` is a view of `value`: the secret then the digest, to be copied.
 */
export function decodeKeyRecord(key: string, value: Buffer): KeyRecord {
  if (key === ROLL_KEY) return { kind: 'roll' };
  if (!isKeyIdText(key)) return { kind: 'unreadable' };
  if (value.length === 0) return { kind: 'destroyed', idText: key };
  if (value.length !== KEY_RECORD_BYTES || value[0] !== KEY_RECORD_FORMAT) return { kind: 'unreadable' };
  return { kind: 'key', idText: key, material: keyMaterial(value) };
}

/** Whether `text` is the canonical base64url of a key id (so `keyIdText(parseKeyId(text))` gives it back). */
function isKeyIdText(text: string): boolean {
  if (!/^[A-Za-z0-9_-]{2,22}$/.test(text)) return false;
  const id = parseKeyId(text);
  return isHoldableKeyId(id) && keyIdText(id) === text;
}
