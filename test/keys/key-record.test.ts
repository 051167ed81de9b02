// The key topic's records: a format byte, the secret and the digest under the key id's text; a
// tombstone for a destroyed key; roll records; anything else unreadable.
import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  checkContentKey,
  checkKeyId,
  decodeKeyRecord,
  encodeKeyValue,
  KEY_RECORD_BYTES,
  KEY_RECORD_FORMAT,
  ROLL_KEY,
} from '../../src/keys/key-record.js';
import { keyIdText, type ContentKey } from '../../src/keys/key-store.js';

const key = (): ContentKey => ({ id: randomBytes(16), secret: randomBytes(32), contentDigest: randomBytes(32) });

const record = suite('key records');

record('a key value is the format byte, the secret and the digest, and reads back as both', () => {
  const k = key();
  const value = encodeKeyValue(k);
  assert.is(value.length, KEY_RECORD_BYTES);
  assert.is(KEY_RECORD_BYTES, 65);
  assert.is(value[0], KEY_RECORD_FORMAT);
  const decoded = decodeKeyRecord(keyIdText(k.id), value);
  assert.equal(decoded, { kind: 'key', idText: keyIdText(k.id), material: Buffer.concat([k.secret, k.contentDigest]) });
});

record('an empty value is the tombstone of a destroyed key', () => {
  const id = keyIdText(randomBytes(16));
  assert.equal(decodeKeyRecord(id, Buffer.alloc(0)), { kind: 'destroyed', idText: id });
});

record('the roll key is a roll record whatever its value, and never a key id', () => {
  assert.equal(decodeKeyRecord(ROLL_KEY, Buffer.alloc(0)), { kind: 'roll' });
  assert.is(/^[A-Za-z0-9_-]*$/.test(ROLL_KEY), false);
});

record('another format, another length or a key that is not a canonical key id is unreadable', () => {
  const k = key();
  const value = encodeKeyValue(k);
  const id = keyIdText(k.id);
  assert.equal(decodeKeyRecord(id, Buffer.concat([Buffer.from([2]), value.subarray(1)])), { kind: 'unreadable' });
  assert.equal(decodeKeyRecord(id, value.subarray(0, 64)), { kind: 'unreadable' });
  for (const bad of ['', 'a', 'not base64!', 'A'.repeat(23), 'AB', `${id.slice(0, 21)}B`])
    assert.equal(decodeKeyRecord(bad, value), { kind: 'unreadable' }, bad);
});

record('ids of 1 to 16 bytes, 32-byte secrets and digests are written; anything else is a programming error', () => {
  checkKeyId(Buffer.alloc(1));
  checkContentKey(key());
  assert.throws(
    () => checkKeyId(Buffer.alloc(0)),
    (error: unknown) => error instanceof RangeError,
  );
  assert.throws(
    () => checkKeyId(Buffer.alloc(17)),
    (error: unknown) => error instanceof RangeError,
  );
  assert.throws(() => checkContentKey({ ...key(), secret: randomBytes(16) }), /secret is 32 bytes/);
  assert.throws(() => checkContentKey({ ...key(), contentDigest: randomBytes(20) }), /digest is 32 bytes/);
});

record.run();
