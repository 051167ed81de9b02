import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  exactInteger,
  InvalidJsonError,
  JsonTooDeepError,
  MAX_JSON_DEPTH,
  nestedDeeperThan,
  parseExactJson,
} from '../../src/http/json-body.js';

const integer = suite('exactInteger');

const integers: ReadonlyArray<[literal: string, value: bigint]> = [
  ['0', 0n],
  ['1', 1n],
  ['-1', -1n],
  ['-0', 0n],
  ['0.0', 0n],
  ['-0.0', 0n],
  ['0e5', 0n],
  ['1.0', 1n],
  ['1.000', 1n],
  ['1e3', 1000n],
  ['1E3', 1000n],
  ['1e+3', 1000n],
  ['12.50e1', 125n],
  ['1000e-3', 1n],
  ['-2.5e1', -25n],
  ['9007199254740993', 9007199254740993n],
  ['9223372036854775807', 9223372036854775807n],
  ['-9223372036854775808', -9223372036854775808n],
  ['9223372036854775808', 9223372036854775808n],
];
for (const [literal, value] of integers) {
  integer(`reads ${literal} as ${value}`, () => {
    assert.is(exactInteger(literal), value);
  });
}

for (const literal of ['1.5', '0.1', '1e-1', '123e-2', '12.55e1', '-1.5']) {
  integer(`returns undefined for the fraction ${literal}`, () => {
    assert.is(exactInteger(literal), undefined);
  });
}

for (const literal of ['1e400', '1e40', '-1e400']) {
  integer(`returns undefined for ${literal}, far outside int64`, () => {
    assert.is(exactInteger(literal), undefined);
  });
}

for (const literal of ['', 'abc', '+1', '.5', '1.', '1e', '0x10', ' 1', 'Infinity', 'NaN']) {
  integer(`returns undefined for the non-number ${JSON.stringify(literal)}`, () => {
    assert.is(exactInteger(literal), undefined);
  });
}

integer.run();

const parse = suite('parseExactJson');

parse('keeps 9007199254740993 exact', () => {
  assert.equal(parseExactJson('{"id": 9007199254740993}'), { id: 9007199254740993n });
});

parse('keeps both int64 bounds exact', () => {
  assert.equal(parseExactJson('[9223372036854775807, -9223372036854775808]'), [
    9223372036854775807n,
    -9223372036854775808n,
  ]);
});

parse('turns integral literals such as 1.0 and 2e0 into bigints', () => {
  assert.equal(parseExactJson('{"a": 1.0, "b": {"c": [2e0]}}'), { a: 1n, b: { c: [2n] } });
});

parse('keeps fractions as numbers', () => {
  assert.equal(parseExactJson('{"x": 1.5}'), { x: 1.5 });
});

parse('keeps 1e400 a number, not a bigint', () => {
  assert.type(parseExactJson('1e400'), 'number');
});

parse('leaves strings, booleans and null alone', () => {
  assert.equal(parseExactJson('{"id": "1", "t": true, "n": null}'), { id: '1', t: true, n: null });
});

for (const text of ['', '{', '{"id": 1,}', "{'id': 1}", 'NaN', '01']) {
  parse(`throws InvalidJsonError for ${JSON.stringify(text)}`, () => {
    assert.throws(
      () => parseExactJson(text),
      (error: unknown) => error instanceof InvalidJsonError,
    );
  });
}

parse.run();

const depth = suite('nestedDeeperThan');

const depths: ReadonlyArray<[text: string, max: number, deeper: boolean]> = [
  ['{}', 0, true],
  ['{}', 1, false],
  ['[[[]]]', 2, true],
  ['[[[]]]', 3, false],
  ['[[],[],[]]', 2, false],
  ['{"a":[{"b":[1]}]}', 3, true],
  ['{"a":"[[[[[[","b":[]}', 2, false],
  ['{"a":"\\"[[[[","b":[]}', 2, false],
  ['{"a":"\\\\","b":[[]]}', 2, true],
];
for (const [text, max, deeper] of depths) {
  depth(`${text} ${deeper ? 'is' : 'is not'} nested deeper than ${max}`, () => {
    assert.is(nestedDeeperThan(text, max), deeper);
  });
}

depth('parseExactJson refuses nesting beyond MAX_JSON_DEPTH with JsonTooDeepError before parsing', () => {
  assert.throws(
    () => parseExactJson('['.repeat(MAX_JSON_DEPTH + 1)),
    (error: unknown) => error instanceof JsonTooDeepError,
  );
  assert.equal(
    parseExactJson(`${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`),
    JSON.parse(`${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`),
  );
});

depth.run();
