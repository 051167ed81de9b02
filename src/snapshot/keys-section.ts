// The idempotency keys' section of a snapshot: u32 count, then per key u8 key length | key (ASCII)
// | u8 what (op and outcome) | u8 id length | id (decimal) | f64 incarnation (creates; 0 for
// deletes). Binary, a few dozen bytes a key whatever the report held (a key never remembers content),
// and written a slice at a time: keys are only ever added to the model's Map, never changed or
// removed, and a Map iterates in insertion order, so the keys at a freeze are its first `count`
// entries however many are added while the slices are written.
import type { IdempotencyState, KeyedOutcome, KeyedRequest } from '../../projections/idempotency.js';
import type { BytesOut, BytesReader } from '../read-model/bytes.js';

const KINDS = ['create:created', 'create:found', 'delete:deleted', 'delete:not-found'] as const;
type Kind = (typeof KINDS)[number];

function kindOf({ op, outcome }: KeyedRequest): number {
  return KINDS.indexOf(`${op}:${outcome.kind}` as Kind);
}

function requestOf(kind: number, id: string, incarnation: number): KeyedRequest {
  const name = KINDS[kind];
  if (name === undefined) throw new RangeError(`an idempotency key of kind ${kind}`);
  const [op, outcomeKind] = name.split(':') as ['create' | 'delete', KeyedOutcome['kind']];
  if (op === 'delete') return { op, id, outcome: { kind: outcomeKind as 'deleted' | 'not-found' } };
  if (!Number.isSafeInteger(incarnation) || incarnation < 1)
    throw new RangeError(`an idempotency key of incarnation ${incarnation}`);
  return { op, id, outcome: { kind: outcomeKind as 'created' | 'found', incarnation } };
}

/**
 * Writes the first `count` keys of `keys`, a slice at a time: the function returned writes up to
 * `perSlice` more and tells whether all are written.
 */
export function keysWriter(out: BytesOut, keys: IdempotencyState, count: number): (perSlice: number) => boolean {
  out.u32(count);
  const entries = keys[Symbol.iterator]();
  let written = 0;
  return (perSlice) => {
    for (let n = 0; n < perSlice && written < count; n += 1) {
      const next = entries.next();
      if (next.done === true) throw new Error(`the idempotency keys number ${written}, not ${count}`);
      const [key, request] = next.value;
      out.u8(key.length);
      out.bytes(Buffer.from(key, 'latin1'));
      out.u8(kindOf(request));
      out.u8(request.id.length);
      out.bytes(Buffer.from(request.id, 'latin1'));
      out.f64('incarnation' in request.outcome ? request.outcome.incarnation : 0);
      written += 1;
    }
    return written === count;
  };
}

/** Reads what keysWriter wrote; RangeError on anything else. */
export function readKeys(input: BytesReader): IdempotencyState {
  const keys: IdempotencyState = new Map();
  for (let count = input.u32(); count > 0; count -= 1) {
    const key = input.bytes(input.u8()).toString('latin1');
    const kind = input.u8();
    const id = input.bytes(input.u8()).toString('latin1');
    keys.set(key, requestOf(kind, id, input.f64()));
  }
  return keys;
}
