import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes, randomInt } from 'node:crypto';
import { writeBase64 } from '../../src/read-model/base64-into.js';

const base64 = suite('base64 written into a chunk');

/** What Buffer#write makes of `text` at `at`, and what writeBase64 makes of it, in chunks that start alike. */
function both(text: string, encoding: 'base64' | 'base64url', at: number) {
  const bytes = Buffer.byteLength(text, encoding);
  const start = randomBytes(at + bytes + 8);
  const expected = Buffer.from(start);
  const actual = Buffer.from(start);
  const expectedCount = expected.write(text, at, bytes, encoding);
  const actualCount = writeBase64(actual, at, text, bytes, encoding);
  return { expected, actual, expectedCount, actualCount };
}

base64('writes what Buffer#write writes, for the encodings of any bytes', () => {
  for (let length = 0; length < 100; length += 1)
    for (const encoding of ['base64', 'base64url'] as const) {
      const text = randomBytes(length).toString(encoding);
      const { expected, actual, expectedCount, actualCount } = both(text, encoding, randomInt(0, 5));
      assert.is(actualCount, expectedCount, `${encoding} of ${length} bytes`);
      assert.ok(actual.equals(expected), `${encoding} of ${length} bytes: ${text}`);
    }
});

base64('writes what Buffer#write writes for text no encoder made (any length, either alphabet, padded or not)', () => {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_';
  for (let round = 0; round < 3000; round += 1) {
    let text = '';
    const length = randomInt(0, 90);
    for (let i = 0; i < length; i += 1) text += alphabet[randomInt(0, alphabet.length)];
    text += '='.repeat(randomInt(0, 3));
    for (const encoding of ['base64', 'base64url'] as const) {
      const { expected, actual, expectedCount, actualCount } = both(text, encoding, randomInt(0, 5));
      assert.is(actualCount, expectedCount, `${encoding}: ${text}`);
      assert.ok(actual.equals(expected), `${encoding}: ${text}`);
    }
  }
});

base64('leaves text with other characters to Buffer#write', () => {
  for (const text of ['AB CD', 'QUJD\nREVG', 'ab*cd', 'éAAA', 'AAAA=AAAA']) {
    const { expected, actual, expectedCount, actualCount } = both(text, 'base64', 2);
    assert.is(actualCount, expectedCount, text);
    assert.ok(actual.equals(expected), text);
  }
});

base64.run();
