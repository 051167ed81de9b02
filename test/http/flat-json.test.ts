// The fast path of the body parser must never change an answer: on every body, parseJsonBody (fast
// path first) and parseExactJson (lossless-json only) give the same value or the same error.
// Bodies are generated from a seeded random source, so a failure names a body that can be replayed.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseFlatJson } from '../../src/http/flat-json.js';
import { InvalidJsonError, parseExactJson, parseJsonBody } from '../../src/http/json-body.js';

type Outcome = { readonly value: unknown } | { readonly error: string };

function outcome(parse: (text: string) => unknown, text: string): Outcome {
  try {
    return { value: parse(text) };
  } catch (error) {
    return { error: error instanceof InvalidJsonError ? `invalid JSON: ${error.message}` : String(error) };
  }
}

/** mulberry32: a small seeded generator, so every run sees the same bodies. */
function randomSource(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const below = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[below(items.length)] as T;
  return { next, below, pick };
}

const KEYS = [
  '"id"',
  '"id"',
  '"id"',
  '"name"',
  '"name"',
  '"tag"',
  '"x"',
  '"__proto__"',
  '"\\u0069d"',
  '"na\\u006de"',
  '""',
  '"i\\"d"',
  '"ID"',
];
const ODD_NUMBERS = [
  '-0',
  '0',
  '1.0',
  '1e3',
  '1E+2',
  '0.1e1',
  '1.5',
  '1e-400',
  '1e400',
  '-1e400',
  '9007199254740993',
  '9223372036854775807',
  '-9223372036854775808',
  '9223372036854775808',
  '1000000000000000',
  '999999999999999',
  '-999999999999999',
  '9007199254740991.4',
  '1.00000000000000001',
  '00',
  '+1',
  '.5',
  '1.',
  '-',
  '0x10',
];
const STRING_PIECES = [
  'a',
  'report',
  ' ',
  '\\n',
  '\\"',
  '\\\\',
  '\\/',
  '\\b',
  '\\u00e9',
  '\\ud83d\\ude00',
  '\\ud800',
  'é',
  '😀',
  '\u2028',
  '{',
  '}',
  '"id":1',
  ',',
  ':',
  '\\u0000',
];
/** Not allowed in a JSON string: a raw control character, an unknown escape, a short \u escape. */
const BAD_STRING_PIECES = ['\u0001', '\\x', '\\u12', '\t'];
const SPACES = ['', '', '', ' ', '\n', '\t', '\r\n', '  ', '\u00a0'];

function bodies(seed: number, count: number): string[] {
  const { next, below, pick } = randomSource(seed);
  const space = () => (next() < 0.7 ? '' : pick(SPACES));
  const digits = (n: number) =>
    Array.from({ length: n }, (_, i) => String(i === 0 ? 1 + below(9) : below(10))).join('');
  const number = (): string => {
    const roll = next();
    if (roll < 0.55) return `${next() < 0.2 ? '-' : ''}${digits(1 + below(15))}`;
    if (roll < 0.75) return `${next() < 0.2 ? '-' : ''}${digits(16 + below(10))}`;
    return pick(ODD_NUMBERS);
  };
  const string = () =>
    `"${Array.from({ length: below(5) }, () => pick(next() < 0.03 ? BAD_STRING_PIECES : STRING_PIECES)).join('')}"`;
  const value = (depth: number): string => {
    const roll = next();
    if (roll < 0.35) return number();
    if (roll < 0.75) return string();
    if (roll < 0.85) return pick(['true', 'false', 'null']);
    if (depth >= 2) return 'null';
    if (roll < 0.93) return object(depth + 1);
    return `[${Array.from({ length: below(3) }, () => `${space()}${value(depth + 1)}${space()}`).join(',')}]`;
  };
  const member = (depth: number, key = pick(KEYS)) => `${space()}${key}${space()}:${space()}${value(depth)}${space()}`;
  const object = (depth: number): string => `{${Array.from({ length: below(5) }, () => member(depth)).join(',')}}`;
  /** Mostly the shape clients send, so the fast path is taken often. */
  const report = () => {
    const members = [`"id":${space()}${number()}`, `"name":${space()}${string()}`];
    if (next() < 0.6) members.push(`"tag":${space()}${next() < 0.2 ? 'null' : string()}`);
    if (next() < 0.3) members.push(member(1));
    if (next() < 0.1) members.push(`"id":${space()}${next() < 0.5 ? number() : string()}`);
    for (let i = members.length - 1; i > 0; i--) {
      const j = below(i + 1);
      [members[i], members[j]] = [members[j] as string, members[i] as string];
    }
    return `${space()}{${members.join(',')}}${space()}`;
  };
  const damage = (text: string) => {
    const roll = next();
    if (roll < 0.3) return text.slice(0, below(text.length + 1));
    if (roll < 0.5) return text.replace('}', ',}');
    if (roll < 0.7) return `[${text}]`;
    if (roll < 0.85) return text.replace(':', '');
    return `${text}x`;
  };
  return Array.from({ length: count }, () => {
    const roll = next();
    const text =
      roll < 0.7 ? report() : roll < 0.9 ? object(0) : pick(['1', '"x"', 'null', '[]', '', ' ', '{', '{"id":1}{}']);
    return next() < 0.1 ? damage(text) : text;
  });
}

const property = suite('parseJsonBody (fast path first) against parseExactJson');

property('gives the same value or the same error on 20,000 generated bodies, and takes the fast path on many', () => {
  let fast = 0;
  for (const text of bodies(20_26, 20_000)) {
    const exact = outcome(parseExactJson, text);
    assert.equal(outcome(parseJsonBody, text), exact, `body ${JSON.stringify(text)}`);
    const flat = parseFlatJson(text);
    if (flat !== undefined) {
      fast += 1;
      assert.equal({ value: flat }, exact, `fast path on body ${JSON.stringify(text)}`);
    }
  }
  assert.ok(fast > 4000, `the fast path was taken for only ${fast} bodies`);
});

const flat = suite('parseFlatJson');

flat('takes a flat body whose only number is an id of at most 15 digits, with the id exact', () => {
  assert.equal(parseFlatJson('{"id": 42, "name": "Q3", "tag": null, "ok": true}'), {
    id: 42n,
    name: 'Q3',
    tag: null,
    ok: true,
  });
  assert.equal(parseFlatJson('{"name":"x","id":-999999999999999}'), { name: 'x', id: -999999999999999n });
  assert.equal(parseFlatJson('{"name": "no id"}'), { name: 'no id' });
  assert.equal(parseFlatJson(' { } '), {});
});

const leftToTheExactParser: ReadonlyArray<[why: string, body: string]> = [
  ['16 digits', '{"id": 9007199254740993, "name": "x"}'],
  ['a fraction that is an integer', '{"id": 1.0, "name": "x"}'],
  ['an exponent', '{"id": 1e3, "name": "x"}'],
  ['minus zero', '{"id": -0, "name": "x"}'],
  ['a fraction that rounds to a safe integer', '{"id": 9007199254740991.4, "name": "x"}'],
  ['a duplicate id', '{"id": 1, "id": 2, "name": "x"}'],
  ['a duplicate name', '{"id": 1, "name": "a", "name": "b"}'],
  ['an escaped key', '{"\\u0069d": 1, "name": "x"}'],
  ['a second number', '{"id": 1, "name": "x", "n": 2}'],
  ['a nested object', '{"id": 1, "name": "x", "more": {"id": 2}}'],
  ['an array', '{"id": 1, "name": "x", "list": []}'],
  ['invalid JSON', '{"id": 1, "name": "x",}'],
  ['not an object', '[{"id": 1}]'],
];
for (const [why, body] of leftToTheExactParser) {
  flat(`leaves ${why} to the exact parser`, () => {
    assert.is(parseFlatJson(body), undefined);
  });
}

flat('the exact parser still decides the cases the fast path leaves', () => {
  assert.equal(parseJsonBody('{"id": 9007199254740993}'), { id: 9007199254740993n });
  assert.equal(parseJsonBody('{"id": 1.0, "n": 1e3}'), { id: 1n, n: 1000n });
  assert.equal(parseJsonBody('{"id": 1, "id": 1}'), { id: 1n });
  assert.throws(
    () => parseJsonBody('{"id": 1, "id": 2}'),
    (error: unknown) => error instanceof InvalidJsonError && /Duplicate key/.test(error.message),
  );
});

property.run();
flat.run();
