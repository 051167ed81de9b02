// Report ids as two 32-bit words: every canonical decimal int64 parses to the words of its two's
// complement and prints back exactly, at every edge of the range; nothing else parses.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { IdDigits, idText, parseId } from '../../src/read-model/int64-id.js';
import { INT64_EDGES, random, randomInt64, words } from '../helpers/random.js';

function parsed(id: string): [number, number] | undefined {
  const key = new Uint32Array(2);
  return parseId(id, key) ? [key[0] as number, key[1] as number] : undefined;
}

/** Values of every length of decimal digits, both signs, and random ones over the whole range. */
function samples(): bigint[] {
  const next = random(18);
  const values = [...INT64_EDGES];
  for (let digits = 1; digits <= 19; digits += 1) {
    const smallest = 10n ** BigInt(digits - 1);
    values.push(smallest, -smallest, smallest * 9n + 7n, -(smallest * 9n + 7n));
  }
  for (let i = 0; i < 20_000; i += 1) values.push(randomInt64(next));
  return values.filter((value) => value >= -(2n ** 63n) && value < 2n ** 63n);
}

const parse = suite('parseId');

parse('gives the two words of every int64, at each edge of the range and at random', () => {
  for (const value of samples()) assert.equal(parsed(String(value)), words(value), String(value));
});

parse('refuses what is not a canonical decimal int64, and leaves the key as it was', () => {
  const key = new Uint32Array([11, 22]);
  for (const id of [
    '',
    '-',
    '-0',
    '07',
    '-07',
    '+7',
    '7.0',
    ' 7',
    '7 ',
    '0x7',
    '1e5',
    '12a',
    '\u0661',
    '9223372036854775808',
    '-9223372036854775809',
    '18446744073709551616',
    '99999999999999999999',
    '12345678901234567890',
  ]) {
    assert.not.ok(parseId(id, key), JSON.stringify(id));
    assert.equal([...key], [11, 22]);
  }
});

const text = suite('idText');

text('prints every int64 from its words exactly as String(bigint) does', () => {
  for (const value of samples()) {
    const [low, high] = words(value);
    assert.is(idText(low, high), String(value));
    assert.is(idText(low | 0, high | 0), String(value), 'words given as int32');
  }
});

const digits = suite('IdDigits');

digits('writes every int64 from its words as the bytes of String(bigint), its length told before', () => {
  const writer = new IdDigits();
  const buffer = Buffer.alloc(24, 0x2a);
  for (const value of samples()) {
    const [low, high] = words(value);
    writer.load(low, high);
    assert.is(writer.length, String(value).length, String(value));
    writer.write(buffer, 2);
    assert.is(buffer.toString('latin1', 2, 2 + writer.length), String(value));
    assert.equal([buffer[1], buffer[2 + writer.length]], [0x2a, 0x2a], 'nothing written around it');
    buffer.fill(0x2a);
  }
});

parse.run();
text.run();
digits.run();
