import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BadRequestError } from '../../src/errors.js';
import { codePointCount, createNewReportParser, parseReportId } from '../../src/http/new-report.js';

/** The 400 that `run` throws; fails the test when it throws nothing or something else. */
function badRequest(run: () => unknown): BadRequestError {
  try {
    run();
  } catch (error) {
    if (error instanceof BadRequestError) return error;
    throw error;
  }
  throw new assert.Assertion({
    message: 'expected a BadRequestError',
    operator: 'throws',
    expects: 'BadRequestError',
    actual: undefined,
  });
}

const parser = suite('createNewReportParser');
const parse = createNewReportParser({ nameMaxChars: 5, tagMaxChars: 3 });

parser('returns the id as a canonical decimal string, exactly', () => {
  assert.equal(parse({ id: 9007199254740993n, name: 'n' }), { id: '9007199254740993', name: 'n' });
});

parser('keeps a string tag', () => {
  assert.equal(parse({ id: 1n, name: 'n', tag: 't' }), { id: '1', name: 'n', tag: 't' });
});

parser('drops a null tag', () => {
  assert.equal(parse({ id: 1n, name: 'n', tag: null }), { id: '1', name: 'n' });
});

parser('drops unknown properties', () => {
  assert.equal(parse({ id: 1n, name: 'n', colour: 'red' }), { id: '1', name: 'n' });
});

parser('counts characters as code points, as JSON Schema does: an emoji is one', () => {
  assert.equal(parse({ id: 3n, name: '😀😀😀😀😀', tag: '𝄞é😀' }), { id: '3', name: '😀😀😀😀😀', tag: '𝄞é😀' });
  assert.is(badRequest(() => parse({ id: 3n, name: '😀'.repeat(6) })).message, 'name must be at most 5 characters');
  assert.is(
    badRequest(() => parse({ id: 3n, name: 'n', tag: '😀😀😀😀' })).message,
    'tag must be at most 3 characters',
  );
});

parser('accepts an empty name and names of exactly the limit', () => {
  assert.equal(parse({ id: 2n, name: '' }), { id: '2', name: '' });
  assert.equal(parse({ id: 2n, name: 'abcde', tag: 'xyz' }), { id: '2', name: 'abcde', tag: 'xyz' });
});

parser('accepts both int64 bounds', () => {
  assert.is(parse({ id: 2n ** 63n - 1n, name: 'n' }).id, '9223372036854775807');
  assert.is(parse({ id: -(2n ** 63n), name: 'n' }).id, '-9223372036854775808');
});

const messages: ReadonlyArray<[label: string, body: unknown, message: string | RegExp]> = [
  ['an array', [], 'request body must be a JSON object'],
  ['null', null, 'request body must be a JSON object'],
  ['a string', 'x', 'request body must be a JSON object'],
  ['no id', { name: 'n' }, 'id is required'],
  ['neither id nor name', {}, 'id is required'],
  ['no name', { id: 1n }, 'name is required'],
  ['no name and a bad tag', { id: 1n, tag: 5 }, 'name is required'],
  [
    'a fractional id',
    { id: 1.5, name: 'n' },
    /^id must be an integer between -9223372036854775808 and 9223372036854775807$/,
  ],
  ['a string id', { id: '1', name: 'n' }, /^id must be an integer/],
  ['id 2^63', { id: 2n ** 63n, name: 'n' }, /^id must be an integer/],
  ['id -2^63-1', { id: -(2n ** 63n) - 1n, name: 'n' }, /^id must be an integer/],
  ['a numeric name', { id: 1n, name: 5 }, 'name must be a string'],
  ['a name over the limit', { id: 1n, name: 'abcdef' }, 'name must be at most 5 characters'],
  ['a numeric tag', { id: 1n, name: 'n', tag: 5 }, 'tag must be a string or null'],
  ['a tag over the limit', { id: 1n, name: 'n', tag: 'wxyz' }, 'tag must be at most 3 characters'],
  // UTF-8 cannot hold them: stored, they came back as U+FFFD and an identical retry answered 409.
  ['a lone high surrogate in the name', { id: 1n, name: 'a\ud800' }, /^name must be well-formed Unicode/],
  ['a lone low surrogate in the name', { id: 1n, name: '\udc00b' }, /^name must be well-formed Unicode/],
  ['surrogates in the wrong order', { id: 1n, name: '\udc00\ud800' }, /^name must be well-formed Unicode/],
  ['a lone surrogate in the tag', { id: 1n, name: 'n', tag: '\ud83d' }, /^tag must be well-formed Unicode/],
];
for (const [label, body, message] of messages) {
  parser(`throws a 400 for ${label}: ${String(message)}`, () => {
    const error = badRequest(() => parse(body));
    assert.is(error.status, 400);
    if (typeof message === 'string') assert.is(error.message, message);
    else assert.match(error.message, message);
  });
}

parser.run();

const reportId = suite('parseReportId');

const canonical: ReadonlyArray<[raw: string, id: string]> = [
  ['7', '7'],
  ['007', '7'],
  ['-0', '0'],
  ['-007', '-7'],
  ['0', '0'],
  ['9223372036854775807', '9223372036854775807'],
  ['-9223372036854775808', '-9223372036854775808'],
];
for (const [raw, id] of canonical) {
  reportId(`reads ${raw} as ${id}`, () => {
    assert.is(parseReportId(raw), id);
  });
}

for (const raw of [
  '+5',
  ' 1',
  '1 ',
  '1e3',
  '1.5',
  '1.0',
  'abc',
  '',
  '-',
  '0x10',
  '9223372036854775808',
  '-9223372036854775809',
  '99999999999999999999',
  '١',
]) {
  reportId(`throws a 400 naming the report id for ${JSON.stringify(raw)}`, () => {
    const error = badRequest(() => parseReportId(raw));
    assert.is(error.status, 400);
    assert.match(
      error.message,
      /^report id must be a decimal integer between -9223372036854775808 and 9223372036854775807/,
    );
  });
}

reportId.run();

const codePoints = suite('codePointCount');

for (const [text, count] of [
  ['', 0],
  ['abc', 3],
  ['é€', 2],
  ['😀', 1],
  ['a😀b😀', 4],
  ['\ud800', 1],
  ['\udc00\ud800', 2],
  ['\ud800\ud800\udc00', 2],
] as const) {
  codePoints(`counts ${JSON.stringify(text)} as ${count}`, () => {
    assert.is(codePointCount(text), count);
  });
}

codePoints.run();
