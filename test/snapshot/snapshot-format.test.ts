// The snapshot file format: a checksum line and a JSON body; reports and idempotency keys survive
// the round trip exactly, and a file that was changed, cut or written by another format is refused.
import { createHash } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { IdempotencyState } from '../../projections/idempotency.js';
import type { ReportsState } from '../../projections/reports.js';
import { decodeSnapshot, encodeSnapshot, SNAPSHOT_FORMAT, type StoredSnapshot } from '../../src/snapshot/snapshot-format.js';

const reportsState: ReportsState = new Map([
  ['1', { name: 'plain' }],
  ['-9223372036854775808', { name: 'lowest', tag: 'edge' }],
  ['42', { name: 'ünïcödé "quoted"\n', tag: '' }],
]);

const keys: IdempotencyState = new Map([
  ['create-tagged', { fingerprint: '["POST","42","x","t"]', answer: { status: 200, report: { name: 'x', tag: 't' } } }],
  ['create-plain', { fingerprint: '["POST","1","plain",null]', answer: { status: 200, report: { name: 'plain' } } }],
  ['delete-done', { fingerprint: '["DELETE","7"]', answer: { status: 204 } }],
  ['delete-missing', { fingerprint: '["DELETE","8"]', answer: { status: 404 } }],
  ['create-conflict', { fingerprint: '["POST","1","other",null]', answer: { status: 409 } }],
]);

const snapshot: StoredSnapshot = {
  log: 'kafka:cluster-id/reports.events',
  cursor: new Map([[0, 17], [1, 0], [2, 5]]),
  events: 22,
  createdAt: '2024-05-01T12:00:00.000Z',
  reports: reportsState,
  keys,
  anchors: new Map([[0, '0123456789abcdef0123456789abcdef'], [2, null]]),
};

/** A file in the snapshot layout with a correct checksum over `body`. */
function fileWithBody(body: string): Buffer {
  return Buffer.from(`${createHash('sha256').update(body).digest('hex')}\n${body}\n`);
}

const format = suite('snapshot-format');

format('decodes what it encoded: position, counts, reports and every kind of idempotency answer', () => {
  const decoded = decodeSnapshot(encodeSnapshot(snapshot));
  assert.ok(decoded.ok);
  assert.equal(decoded.snapshot, snapshot);
});

format('round-trips an empty read model', () => {
  const empty: StoredSnapshot = { log: 'file:events.log', cursor: new Map(), events: 0, createdAt: '2024-05-01T12:00:00.000Z', reports: new Map(), keys: new Map(), anchors: new Map() };
  const decoded = decodeSnapshot(encodeSnapshot(empty));
  assert.ok(decoded.ok);
  assert.equal(decoded.snapshot, empty);
});

format('writes a checksum line followed by one JSON line naming the format', () => {
  const [checksum, body, end] = encodeSnapshot(snapshot).toString('utf8').split('\n');
  assert.match(checksum ?? '', /^[0-9a-f]{64}$/);
  assert.is((JSON.parse(body ?? '') as { format: number }).format, SNAPSHOT_FORMAT);
  assert.is(end, '');
});

format('refuses a file whose body changed after it was written', () => {
  const file = encodeSnapshot(snapshot);
  const at = file.indexOf('plain');
  file[at] = 'P'.charCodeAt(0);
  assert.equal(decodeSnapshot(file), { ok: false, reason: 'checksum mismatch' });
});

format('refuses a file whose checksum line changed', () => {
  const file = encodeSnapshot(snapshot);
  file[0] = file[0] === 0x30 ? 0x31 : 0x30;
  assert.equal(decodeSnapshot(file), { ok: false, reason: 'checksum mismatch' });
});

format('refuses a file cut short', () => {
  const file = encodeSnapshot(snapshot);
  assert.equal(decodeSnapshot(file.subarray(0, file.length - 10)), { ok: false, reason: 'checksum mismatch' });
});

format('refuses an empty file', () => {
  assert.equal(decodeSnapshot(Buffer.alloc(0)), { ok: false, reason: 'checksum mismatch' });
});

format('refuses an unknown format even with a matching checksum', () => {
  const body = JSON.parse(encodeSnapshot(snapshot).toString('utf8').split('\n')[1] ?? '') as Record<string, unknown>;
  const decoded = decodeSnapshot(fileWithBody(JSON.stringify({ ...body, format: SNAPSHOT_FORMAT + 1 })));
  assert.equal(decoded, { ok: false, reason: `unknown format ${SNAPSHOT_FORMAT + 1}` });
});

format('refuses a body that is not JSON even with a matching checksum', () => {
  assert.equal(decodeSnapshot(fileWithBody('{not json')), { ok: false, reason: 'body is not JSON' });
});

format('refuses a snapshot of format 1, which records no anchor to check it against the log', () => {
  const body = JSON.parse(encodeSnapshot(snapshot).toString('utf8').split('\n')[1] ?? '') as Record<string, unknown>;
  const decoded = decodeSnapshot(fileWithBody(JSON.stringify({ ...body, format: 1, anchors: undefined })));
  assert.is(decoded.ok, false);
  assert.match(decoded.ok ? '' : decoded.reason, 'format 1');
});

for (const [what, body] of [
  ['fields missing', { format: 2 }],
  ['a report row that is not a tuple of strings', { format: 2, anchors: [], log: 'l', cursor: [], events: 0, createdAt: '', reports: [[1, 'x']], keys: [] }],
  ['a key with an unknown status', { format: 2, anchors: [], log: 'l', cursor: [], events: 0, createdAt: '', reports: [], keys: [['k', 'f', 500]] }],
  ['a negative offset', { format: 2, anchors: [], log: 'l', cursor: [[0, -1]], events: 0, createdAt: '', reports: [], keys: [] }],
] as const) {
  format(`refuses a body with ${what} even with a matching checksum`, () => {
    const decoded = decodeSnapshot(fileWithBody(JSON.stringify(body)));
    assert.is(decoded.ok, false);
    assert.match(decoded.ok ? '' : decoded.reason, 'wrong shape');
  });
}

format.run();
