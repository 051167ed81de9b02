import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import {
  encodeHeader,
  encodeSlot,
  HEADER_BYTES,
  headerProblem,
  KEYS_MAGIC,
  keyIdOfSlot,
  SLOT_BYTES,
  slotOfKeyId,
  slotPosition,
  slotSound,
  SlotState,
  viewSlot,
} from '../../src/keys/key-slots.js';
import { keyIdText, parseKeyId } from '../../src/keys/key-store.js';

const header = suite('keys.db header');

header('names the format in its magic bytes and passes its own check', () => {
  const bytes = encodeHeader();
  assert.is(bytes.length, HEADER_BYTES);
  assert.is(bytes.subarray(0, 8).toString('latin1'), 'RSKEYS\u0000\u0002');
  assert.ok(bytes.subarray(0, 8).equals(KEYS_MAGIC));
  assert.is(headerProblem(bytes), undefined);
});

header('says what is wrong with a header of another file, another format, a flipped bit or another slot size', () => {
  assert.is(
    headerProblem(Buffer.from('RSLOG\u0000\u0002\n\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000', 'latin1')),
    'it is not a key store (bad magic bytes)',
  );
  const otherFormat = encodeHeader(3);
  assert.is(headerProblem(otherFormat), 'it is a key store of format 3; this version reads formats 1 and 2 only');
  assert.is(headerProblem(encodeHeader(1)), undefined, 'format 1 (no deletion slots) is read');
  const flipped = encodeHeader();
  flipped[9] = (flipped[9] as number) ^ 0x10;
  assert.is(headerProblem(flipped), 'its header fails its CRC');
  const wider = encodeHeader();
  wider.writeUInt32BE(80, 8);
  wider.writeUInt32BE(crc32(wider.subarray(0, 12)), 12);
  assert.is(headerProblem(wider), 'its header names slots of 80 bytes, not 72');
});

header.run();

const slots = suite('keys.db slots');

slots('keeps a live key whole: secret and digest read back from its bytes', () => {
  const secret = randomBytes(32);
  const contentDigest = randomBytes(32);
  const bytes = encodeSlot({ secret, contentDigest });
  assert.is(bytes.length, SLOT_BYTES);
  const view = viewSlot(bytes, 0);
  assert.is(view.kind, 'live');
  if (view.kind !== 'live') return;
  assert.ok(view.secret.equals(secret));
  assert.ok(view.contentDigest.equals(contentDigest));
});

slots('a destroyed slot holds zeros where the secret and the digest were', () => {
  const bytes = encodeSlot(SlotState.destroyed);
  assert.equal(viewSlot(bytes, 0), { kind: 'destroyed' });
  assert.ok(bytes.subarray(8).equals(Buffer.alloc(64)));
  assert.is(bytes[4], SlotState.destroyed);
});

slots('a reserved slot holds no key', () => {
  assert.equal(viewSlot(encodeSlot(SlotState.reserved), 0), { kind: 'reserved' });
});

slots('a slot with any bit flipped, cut short, or of a state no version writes is damaged', () => {
  const good = encodeSlot({ secret: randomBytes(32), contentDigest: randomBytes(32) });
  for (const at of [0, 4, 5, 8, 39, 40, 71]) {
    const bad = Buffer.from(good);
    bad[at] = (bad[at] as number) ^ 0x01;
    assert.equal(viewSlot(bad, 0), { kind: 'damaged' }, `bit flipped at byte ${at}`);
  }
  assert.not.ok(slotSound(good.subarray(0, SLOT_BYTES - 1), 0));
  assert.not.ok(slotSound(Buffer.alloc(SLOT_BYTES), 0), 'zeros (a hole in the file) are no slot');
  const unknown = encodeSlot(SlotState.destroyed);
  unknown[4] = 7;
  unknown.writeUInt32BE(crc32(unknown.subarray(4)), 0);
  assert.equal(viewSlot(unknown, 0), { kind: 'damaged' });
  const padded = encodeSlot(SlotState.destroyed);
  padded[6] = 1;
  padded.writeUInt32BE(crc32(padded.subarray(4)), 0);
  assert.equal(viewSlot(padded, 0), { kind: 'damaged' });
});

slots('puts slot n at the header plus n slots', () => {
  assert.is(slotPosition(0), HEADER_BYTES);
  assert.is(slotPosition(3), HEADER_BYTES + 3 * SLOT_BYTES);
});

slots.run();

const ids = suite('key ids');

ids('are the slot number in 6 bytes, 8 base64url characters in an event', () => {
  for (const slot of [0, 1, 255, 65_536, 2 ** 40 + 7, 2 ** 48 - 1]) {
    const id = keyIdOfSlot(slot);
    assert.is(id.length, 6);
    assert.is(keyIdText(id).length, 8);
    assert.is(slotOfKeyId(parseKeyId(keyIdText(id))), slot);
  }
});

ids('an id of another length names no slot', () => {
  assert.is(slotOfKeyId(Buffer.alloc(16)), undefined);
  assert.is(slotOfKeyId(Buffer.alloc(0)), undefined);
});

ids.run();
