// The radix sort of int64 keys puts them in numeric order with their payloads, whatever bytes they
// differ in: one range of small ids, snowflake-sized ones, negative ones, the whole range.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { sortInt64 } from '../../src/read-model/int64-sort.js';
import { INT64_EDGES, random, randomInt64, words } from '../helpers/random.js';

/** Sorts `values` with their positions as payloads; the values and payloads in the order given. */
function sorted(values: readonly bigint[], room = values.length): { values: bigint[]; payload: number[] } {
  const keys = { low: new Uint32Array(room), high: new Uint32Array(room), payload: new Uint32Array(room) };
  values.forEach((value, i) => {
    [keys.low[i], keys.high[i]] = words(value);
    keys.payload[i] = i;
  });
  const out = sortInt64(keys, values.length);
  const result = { values: [] as bigint[], payload: [] as number[] };
  for (let i = 0; i < values.length; i += 1) {
    result.values.push(BigInt.asIntN(64, (BigInt(out.high[i] as number) << 32n) | BigInt(out.low[i] as number)));
    result.payload.push(out.payload[i] as number);
  }
  return result;
}

function expected(values: readonly bigint[]): { values: bigint[]; payload: number[] } {
  const order = values
    .map((value, i) => [value, i] as const)
    .sort(([a, i], [b, j]) => (a < b ? -1 : a > b ? 1 : i - j));
  return { values: order.map(([value]) => value), payload: order.map(([, i]) => i) };
}

const sort = suite('sortInt64');

sort('orders keys of every shape numerically, each with its payload, equal keys in the order given', () => {
  const next = random(64);
  const shapes: Record<string, bigint[]> = {
    'small ids': Array.from({ length: 5000 }, () => BigInt(Math.floor(next() * 100_000))),
    'snowflake ids': Array.from({ length: 5000 }, () => 7n * 10n ** 18n + BigInt(Math.floor(next() * 2 ** 40)) * 4096n),
    'negative and positive': Array.from({ length: 5000 }, () => BigInt(Math.floor((next() - 0.5) * 2 ** 40))),
    'the whole range': Array.from({ length: 5000 }, () => randomInt64(next)),
    'the edges, twice': [...INT64_EDGES, ...INT64_EDGES].reverse(),
  };
  for (const [shape, values] of Object.entries(shapes)) assert.equal(sorted(values), expected(values), shape);
});

sort('sorts only the first keys of longer arrays, and nothing at all', () => {
  const values = [5n, -3n, 2n ** 62n, 0n];
  assert.equal(sorted(values, 10), expected(values));
  assert.equal(sorted([]), { values: [], payload: [] });
  assert.equal(sorted([42n]), { values: [42n], payload: [0] });
});

sort.run();
