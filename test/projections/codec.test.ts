import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeEvent, encodeEvent } from '../../projections/codec.js';
import type { ReportEvent } from '../../projections/events.js';
import { created, deleted } from '../helpers/events.js';

const bytes = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8');

function reasonFor(value: Uint8Array): string {
  const decoded = decodeEvent(value);
  if (decoded.ok) throw new Error(`expected a rejection, got ${JSON.stringify(decoded.event)}`);
  return decoded.reason;
}

const encode = suite('encodeEvent');
encode('writes the envelope as UTF-8 JSON', () => {
  const event = created('42', 'ünïcode ☃', 't');
  assert.equal(JSON.parse(encodeEvent(event).toString('utf8')), event);
});
encode.run();

const roundTrips: readonly [string, ReportEvent][] = [
  ['a ReportCreated with a tag', created('1', 'name', 'tag')],
  ['a ReportCreated without a tag', created('-9223372036854775808', 'min')],
  ['a ReportCreated with an empty name', created('0', '')],
  ['a ReportDeleted', deleted('9223372036854775807')],
];

const decode = suite('decodeEvent');
for (const [what, event] of roundTrips) {
  decode(`decodes what encodeEvent wrote for ${what}`, () => {
    assert.equal(decodeEvent(encodeEvent(event)), { ok: true, event });
  });
}
decode('decodes a value that is a view into a larger buffer', () => {
  const event = created('7', 'n');
  const encoded = encodeEvent(event);
  const larger = Buffer.concat([Buffer.from('garbage'), encoded, Buffer.from('more garbage')]);
  assert.equal(decodeEvent(larger.subarray(7, 7 + encoded.length)), { ok: true, event });
});
decode('rejects a value that is not JSON', () => {
  assert.match(reasonFor(Buffer.from('{"specversion":')), 'not JSON');
});
decode('rejects JSON that is not an object', () => {
  assert.match(reasonFor(bytes([created('1', 'a')])), 'not a JSON object');
});
decode('rejects a wrong specversion and names /specversion', () => {
  assert.match(reasonFor(bytes({ ...created('1', 'a'), specversion: '0.3' })), '/specversion');
});
for (const subject of ['007', '+5', '-0', '1.0', '']) {
  decode(`rejects the non-canonical subject ${JSON.stringify(subject)} and names /subject`, () => {
    assert.match(reasonFor(bytes({ ...created('1', 'a'), subject })), '/subject');
  });
}
decode('rejects a non-canonical data id and names /data/id', () => {
  const event = created('7', 'a');
  assert.match(reasonFor(bytes({ ...event, data: { ...event.data, id: '007' } })), '/data/id');
});
decode('rejects a subject that names another report than /data/id', () => {
  const event = created('7', 'a');
  assert.match(reasonFor(bytes({ ...event, subject: '8' })), '/subject: must equal /data/id');
});
for (const id of ['9223372036854775808', '-9223372036854775809', '9999999999999999999']) {
  decode(`rejects the id ${id}, outside the int64 range`, () => {
    assert.match(reasonFor(bytes(created(id, 'a'))), '/data/id: outside the int64 range');
  });
}
decode('accepts both ends of the int64 range', () => {
  assert.ok(decodeEvent(bytes(created('9223372036854775807', 'max'))).ok);
  assert.ok(decodeEvent(bytes(created('-9223372036854775808', 'min'))).ok);
});
decode('rejects a ReportCreated without a name and names /data/name', () => {
  assert.match(reasonFor(bytes({ ...created('1', 'a'), data: { id: '1' } })), '/data/name');
});
decode('rejects a ReportDeleted without an id and names /data/id', () => {
  assert.match(reasonFor(bytes({ ...deleted('1'), data: {} })), '/data/id');
});
decode('rejects a ReportDeleted that carries a name and names /data/name', () => {
  assert.match(reasonFor(bytes({ ...deleted('1'), data: { id: '1', name: 'x' } })), '/data/name');
});
decode('rejects a tag that is not a string and names /data/tag', () => {
  assert.match(reasonFor(bytes({ ...created('1', 'a'), data: { id: '1', name: 'a', tag: null } })), '/data/tag');
});
decode('rejects an unknown event type and names /type', () => {
  assert.match(reasonFor(bytes({ ...created('1', 'a'), type: 'ReportRenamed' })), '/type');
});
decode('rejects a time that is not RFC 3339 and names /time', () => {
  assert.match(reasonFor(bytes({ ...created('1', 'a'), time: 'yesterday' })), '/time');
});
decode('rejects a missing envelope field and names it', () => {
  const { source: _source, ...withoutSource } = created('1', 'a');
  assert.match(reasonFor(bytes(withoutSource)), '/source');
});
decode.run();

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

const tracing = suite('decodeEvent: the distributed-tracing extension');
tracing('decodes events with a traceparent and a tracestate', () => {
  for (const event of [
    { ...created('1', 'a'), traceparent: TRACEPARENT, tracestate: 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE' },
    { ...deleted('2'), traceparent: TRACEPARENT },
  ]) {
    assert.equal(decodeEvent(encodeEvent(event)), { ok: true, event });
  }
});
tracing('still decodes events written without them', () => {
  const event = created('1', 'a');
  assert.not.ok('traceparent' in event);
  assert.ok(decodeEvent(encodeEvent(event)).ok);
});
const badTraceparents = [
  'garbage',
  '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
  '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01',
  '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
  '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
  `${TRACEPARENT}-extra`,
];
for (const traceparent of badTraceparents) {
  tracing(`rejects the traceparent ${JSON.stringify(traceparent)} and names /traceparent`, () => {
    assert.match(reasonFor(bytes({ ...created('1', 'a'), traceparent })), '/traceparent');
  });
}
for (const tracestate of ['', 'no list', 'Upper=1', 'a=1,,b=2', 'k=v '.repeat(2), `k=${'v'.repeat(600)}`]) {
  tracing(`rejects the tracestate ${JSON.stringify(tracestate.slice(0, 20))} and names /tracestate`, () => {
    assert.match(reasonFor(bytes({ ...created('1', 'a'), traceparent: TRACEPARENT, tracestate })), '/tracestate');
  });
}
tracing('accepts a tracestate of 32 members with multi-tenant keys', () => {
  const tracestate = Array.from({ length: 32 }, (_, i) => `t${i}@vendor=${i}`).join(',');
  assert.ok(decodeEvent(bytes({ ...created('1', 'a'), traceparent: TRACEPARENT, tracestate })).ok);
});
tracing('rejects a tracestate of 33 members', () => {
  const tracestate = Array.from({ length: 33 }, (_, i) => `k${i}=${i}`).join(',');
  assert.match(reasonFor(bytes({ ...created('1', 'a'), traceparent: TRACEPARENT, tracestate })), '/tracestate');
});
tracing.run();
