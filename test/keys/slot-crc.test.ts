import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { crc32Of } from '../../src/keys/slot-crc.js';

/** Flips bit `bit` of `bytes` (bit 0 is the lowest of byte 0). */
function flip(bytes: Buffer, bit: number): void {
  bytes.writeUInt8(bytes.readUInt8(bit >> 3) ^ (1 << (bit & 7)), bit >> 3);
}

const crc = suite("keys.db slots' CRC-32");

crc("gives node:zlib's crc32 of the range, at every length and offset", () => {
  const bytes = randomBytes(300);
  for (let start = 0; start < 8; start += 1)
    for (let end = start; end <= bytes.length; end += 1)
      assert.is(crc32Of(bytes, start, end), crc32(bytes.subarray(start, end)), `bytes ${start}..${end}`);
});

crc('gives the standard check value and tells one changed bit', () => {
  // CRC-32's published check: the nine bytes "123456789".
  assert.is(crc32Of(Buffer.from('123456789'), 0, 9), 0xcbf43926);
  const slot = randomBytes(72);
  const before = crc32Of(slot, 4, 72);
  for (let bit = 0; bit < 68 * 8; bit += 1) {
    flip(slot, 4 * 8 + bit);
    assert.is.not(crc32Of(slot, 4, 72), before, `bit ${bit}`);
    flip(slot, 4 * 8 + bit);
  }
});

crc.run();
