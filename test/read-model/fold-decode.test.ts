// The fold's fast decoder against decodeEvent, the reference: on events as the service writes them
// it takes the fast path; on anything (generated variants, random mutations of real records) it
// never accepts what decodeEvent refuses and always takes out the same type and data.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeEvent, encodeEvent } from '../../projections/codec.js';
import type { ReportEvent } from '../../projections/events.js';
import { decodeCanonical, decodeForFold, type FoldInput } from '../../src/read-model/fold-decode.js';
import { reportCreated, reportDeleted } from '../../src/reports/envelope.js';
import { withTraceContext } from '../../src/reports/tracing.js';

const context = {
  source: 'urn:report-store:test',
  newId: () => '6d5f1c2e-8a41-4c1b-9d7e-0f3b2a1c4d5e',
  time: () => '2026-11-23T10:11:12.345Z',
};
const span = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1, isRemote: true };
const named = { authtype: 'api_key', authid: 'billing-sync.v2' };
const unnamed = { authtype: 'api_key' };

/** What the fold takes of a decoding: the type and data of the event, or only that it is invalid. */
function foldView(input: FoldInput): unknown {
  if (!input.ok) return 'invalid';
  const { type, expectedversion, data } = input.event;
  return { type, expectedversion, data: { ...data } };
}

/** The record must decode to the same fold view on both paths, and the fast one must not accept more. */
function assertAgrees(bytes: Buffer, label: string): void {
  const reference = decodeEvent(bytes);
  const fast = decodeCanonical(bytes.toString('latin1'));
  if (fast !== undefined) {
    assert.ok(reference.ok, `fast path accepted what decodeEvent refuses: ${label}: ${bytes.toString('utf8')}`);
    assert.equal(foldView({ ok: true, event: fast }), foldView(reference), label);
  }
  assert.equal(foldView(decodeForFold(bytes)), foldView(reference), label);
}

/** A deterministic generator (mulberry32), so a failure can be reproduced. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const decode = suite('decodeForFold');

decode('takes the fast path for every kind of event the service writes, with the same result as decodeEvent', () => {
  const events: ReportEvent[] = [
    reportCreated(context, { id: '42', name: 'Quarterly report' }, 0),
    reportCreated(context, { id: '0', name: '', tag: '' }, 0),
    reportCreated(context, { id: '-9223372036854775808', name: 'lowest', tag: 'finance', idempotencyKey: 'key-1' }, 0),
    reportCreated(context, { id: '9223372036854775807', name: 'highest', idempotencyKey: '' }, 0),
    reportDeleted(context, { id: '42' }, 1),
    reportDeleted(context, { id: '-1', idempotencyKey: 'delete-key' }, 1),
    withTraceContext(reportCreated(context, { id: '7', name: 'traced', tag: 't' }, 0), span),
    withTraceContext(reportDeleted(context, { id: '7' }, 1), span),
    reportCreated(context, { id: '8', name: 'recreated' }, 2),
    reportDeleted(context, { id: '8', idempotencyKey: 'k' }, 2_147_483_647),
    reportCreated(context, { id: '9', name: 'by a named token' }, 0, named),
    reportCreated(context, { id: '10', name: 'by an unnamed token', idempotencyKey: 'k2' }, 0, unnamed),
    reportDeleted(context, { id: '9' }, 1, named),
    reportDeleted(context, { id: '10' }, 1, unnamed),
    withTraceContext(reportDeleted(context, { id: '11' }, 1, named), span),
  ];
  for (const event of events) {
    const bytes = encodeEvent(event);
    assert.ok(decodeCanonical(bytes.toString('latin1')) !== undefined, `fast path for ${bytes.toString()}`);
    assertAgrees(bytes, event.type);
  }
});

decode('leaves to decodeEvent what only it can judge, and agrees with it on every variant', () => {
  const base = reportCreated(context, { id: '12', name: 'name', tag: 'tag' }, 0);
  const text = JSON.stringify(base);
  const variants: Record<string, string> = {
    'non-ASCII name': JSON.stringify({ ...base, data: { ...base.data, name: 'ünïcödé 📄' } }),
    'escaped quote in name': JSON.stringify({ ...base, data: { ...base.data, name: 'say "hi"' } }),
    'control character in name': JSON.stringify({ ...base, data: { ...base.data, name: 'a\u0001b' } }),
    'id beyond int64': text.replaceAll('"12"', '"9223372036854775808"'),
    'negative id beyond int64': text.replaceAll('"12"', '"-9223372036854775809"'),
    'id with a leading zero': text.replaceAll('"12"', '"012"'),
    'minus zero': text.replaceAll('"12"', '"-0"'),
    'subject other than data.id': text.replace('"subject":"12"', '"subject":"13"'),
    whitespace: JSON.stringify(base, null, 1),
    'other attribute order': JSON.stringify(Object.fromEntries(Object.entries(base).reverse())),
    'an extension attribute': JSON.stringify({ ...base, extension: 'value' }),
    'an unknown data member': JSON.stringify({ ...base, data: { ...base.data, extra: 'x' } }),
    'a numeric id': text.replace('"data":{"id":"12"', '"data":{"id":12'),
    'time without fraction': text.replace('10:11:12.345Z', '10:11:12Z'),
    'time with an offset': text.replace('10:11:12.345Z', '10:11:12.345+02:00'),
    'time without a zone': text.replace('10:11:12.345Z', '10:11:12.345'),
    'time with a bad separator': text.replace('2026-11-23T', '2026-11-23 '),
    'empty event id': text.replace(/"id":"6d5f[^"]*"/, '"id":""'),
    'empty source': text.replace('"source":"urn:report-store:test"', '"source":""'),
    'specversion 2.0': text.replace('"specversion":"1.0"', '"specversion":"2.0"'),
    'another content type': text.replace('application/json', 'text/plain'),
    'a delete with a name': JSON.stringify({
      ...reportDeleted(context, { id: '12' }, 1),
      data: { id: '12', name: 'x' },
    }),
    'a create without a name': JSON.stringify({ ...base, data: { id: '12' } }),
    'a traceparent of zeros': JSON.stringify({ ...base, traceparent: `00-${'0'.repeat(32)}-00f067aa0ba902b7-01` }),
    'a parent id of zeros': JSON.stringify({
      ...base,
      traceparent: `00-4bf92f3577b34da6a3ce929d0e0e4736-${'0'.repeat(16)}-01`,
    }),
    'an upper-case traceparent': JSON.stringify({
      ...base,
      traceparent: '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01',
    }),
    'a tracestate': JSON.stringify({
      ...base,
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      tracestate: 'vendor=value',
    }),
    'a duplicate tag': text.replace('"tag":"tag"', '"tag":"tag","tag":"again"'),
    'an expectedversion beyond 32 bits': text.replace('"expectedversion":0', '"expectedversion":2147483648'),
    'a negative expectedversion': text.replace('"expectedversion":0', '"expectedversion":-1'),
    'an expectedversion with a fraction': text.replace('"expectedversion":0', '"expectedversion":1.5'),
    'an expectedversion written 1.0': text.replace('"expectedversion":0', '"expectedversion":1.0'),
    'an expectedversion with an exponent': text.replace('"expectedversion":0', '"expectedversion":1e3'),
    'an expectedversion as a string': text.replace('"expectedversion":0', '"expectedversion":"0"'),
    'an expectedversion with a leading zero': text.replace('"expectedversion":0', '"expectedversion":07'),
    'no expectedversion': text.replace('"expectedversion":0,', ''),
    'an authtype': text.replace('"expectedversion":0,', '"expectedversion":0,"authtype":"api_key",'),
    'an authtype and authid': text.replace(
      '"expectedversion":0,',
      '"expectedversion":0,"authtype":"api_key","authid":"reader",',
    ),
    'an authid alone': text.replace('"expectedversion":0,', '"expectedversion":0,"authid":"reader",'),
    'authid before authtype': text.replace(
      '"expectedversion":0,',
      '"expectedversion":0,"authid":"reader","authtype":"api_key",',
    ),
    'an empty authtype': text.replace('"expectedversion":0,', '"expectedversion":0,"authtype":"",'),
    'an empty authid': text.replace('"expectedversion":0,', '"expectedversion":0,"authtype":"api_key","authid":"",'),
    'a numeric authid': text.replace('"expectedversion":0,', '"expectedversion":0,"authtype":"api_key","authid":7,'),
    'an authtype without expectedversion': text.replace('"expectedversion":0,', '"authtype":"system",'),
    'trailing text': `${text} `,
    'two objects': `${text}${text}`,
    'not JSON': 'not json',
  };
  for (const [label, variant] of Object.entries(variants)) assertAgrees(Buffer.from(variant, 'utf8'), label);
  assert.is(decodeCanonical(variants['non-ASCII name'] as string), undefined, 'non-ASCII goes to decodeEvent');
  assert.ok(
    decodeCanonical(variants['time with an offset'] as string) !== undefined,
    'an offset time is still canonical',
  );
  assert.ok(
    decodeCanonical(variants['no expectedversion'] as string) !== undefined,
    'an event of an earlier writer, without a basis, is still canonical',
  );
  assert.ok(
    decodeForFold(Buffer.from(variants['an expectedversion beyond 32 bits'] as string)).ok === false,
    'a basis beyond 32 bits is invalid',
  );
  assert.ok(
    decodeCanonical(variants['an authtype and authid'] as string) !== undefined,
    'the authcontext attributes as the envelope writes them are canonical',
  );
  assert.ok(
    decodeForFold(Buffer.from(variants['an empty authid'] as string)).ok === false,
    'an empty authid is invalid',
  );
  assert.ok(
    decodeForFold(Buffer.from(variants['an authid alone'] as string)).ok,
    'an authid without authtype is valid, decoded by decodeEvent',
  );
});

decode('never disagrees with decodeEvent on randomly mutated records', () => {
  const next = random(20261123);
  const records = [
    encodeEvent(
      reportCreated(
        context,
        { id: '1234567', name: 'Quarterly report 0000001', tag: 'finance', idempotencyKey: 'k' },
        0,
      ),
    ),
    encodeEvent(reportDeleted(context, { id: '-98765' }, 1)),
    encodeEvent(withTraceContext(reportCreated(context, { id: '5', name: 'n' }, 0), span)),
    encodeEvent(reportDeleted(context, { id: '77' }, 3, named)),
  ];
  // Characters a mutation puts in: the JSON syntax and the characters the patterns care about.
  const alphabet = Buffer.from('{}[]":,\\ 0123456789-+.:TZzabcdef\u0001\u007fé', 'utf8');
  for (let round = 0; round < 30_000; round += 1) {
    const record = Buffer.from(records[round % records.length] as Buffer);
    let bytes: Buffer = record;
    for (let edits = 1 + Math.floor(next() * 3); edits > 0; edits -= 1) {
      const at = Math.floor(next() * bytes.length);
      const byte = alphabet[Math.floor(next() * alphabet.length)] as number;
      const kind = Math.floor(next() * 3);
      if (kind === 0) bytes[at] = byte;
      else if (kind === 1) bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from([byte]), bytes.subarray(at)]);
      else bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + 1)]);
    }
    assertAgrees(bytes, `round ${round}`);
  }
});

decode('decodes a record inside a larger buffer by its bounds', () => {
  const record = encodeEvent(reportCreated(context, { id: '9', name: 'inside' }, 0));
  const frame = Buffer.concat([Buffer.from('prefix'), record, Buffer.from('suffix')]);
  assert.equal(foldView(decodeForFold(frame, 6, 6 + record.length)), foldView(decodeEvent(record)));
  assert.equal(foldView(decodeForFold(Buffer.from('xnot jsonx'), 1, 9)), 'invalid');
});

decode.run();
