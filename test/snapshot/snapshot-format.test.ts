// The snapshot file format (7): magic, meta, reports, idempotency keys, SHA-256. Reports, versions
// and keys survive the round trip exactly; a file that was changed, cut, written by another format or
// shaped wrongly under a matching checksum is refused.
import { createHash } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { IdempotencyState } from '../../projections/idempotency.js';
import { BytesOut } from '../../src/read-model/bytes.js';
import { ReportTable } from '../../src/read-model/report-table.js';
import { createReadModel } from '../../src/read-model/read-model.js';
import {
  decodeSnapshot,
  encodeModel,
  encodeSnapshot,
  beginSnapshot,
  SNAPSHOT_FORMAT,
  SNAPSHOT_MAGIC,
  MAX_UNERASED,
  type EncodedModel,
  type Snapshot,
} from '../../src/snapshot/snapshot-format.js';
import { plainSnapshot, reportTable, testSnapshot } from '../helpers/snapshots.js';

const reports = new Map([
  ['1', { name: 'plain' }],
  ['-9223372036854775808', { name: 'lowest', tag: 'edge' }],
  ['42', { name: 'ünïcödé "quoted"\n', tag: '' }],
  ['9007199254740993', { name: 'beyond 2^53', tag: 'lone \ud800 surrogate' }],
]);

const keys: IdempotencyState = new Map([
  ['create-tagged', { op: 'create', id: '42', outcome: { kind: 'created', incarnation: 1 } }],
  ['create-plain', { op: 'create', id: '-9223372036854775808', outcome: { kind: 'found', incarnation: 2147483647 } }],
  ['delete-done', { op: 'delete', id: '7', outcome: { kind: 'deleted' } }],
  ['delete-missing', { op: 'delete', id: '8', outcome: { kind: 'not-found' } }],
  [`${'k'.repeat(255)}`, { op: 'create', id: '1', outcome: { kind: 'created', incarnation: 5 } }],
]);

const plain = {
  log: 'kafka:cluster-id/reports.events',
  cursor: new Map([
    [0, 17],
    [1, 0],
    [2, 5],
  ]),
  events: 22,
  createdAt: '2024-05-01T12:00:00.000Z',
  reports,
  keys,
  anchors: new Map([
    [0, '0123456789abcdef0123456789abcdef'],
    [2, null],
  ]),
};
const snapshot: Snapshot = testSnapshot(plain);

/** A file in the format-4 layout, with a correct checksum, around the given meta and sections. */
function fileWith(meta: unknown, sections: (out: BytesOut) => void): Buffer {
  const chunks: Buffer[] = [];
  const out = new BytesOut((bytes) => chunks.push(bytes));
  out.bytes(SNAPSHOT_MAGIC);
  out.text(JSON.stringify(meta));
  sections(out);
  out.flush();
  const body = Buffer.concat(chunks);
  return Buffer.concat([body, createHash('sha256').update(body).digest()]);
}

const goodMeta = {
  log: 'l',
  createdAt: '',
  cursor: [],
  counts: { records: 0, voidEvents: 0, invalid: 0 },
  anchors: [],
};

const format = suite('snapshot-format');

format('decodes what it encoded: position, counts, reports and every kind of idempotency outcome', () => {
  const decoded = decodeSnapshot(encodeSnapshot(snapshot));
  assert.ok(decoded.ok);
  assert.equal(plainSnapshot(decoded.snapshot), plainSnapshot(snapshot));
  assert.equal(new Map(decoded.snapshot.model.reports), reports);
  assert.equal(decoded.snapshot.model.keys, keys);
});

format('keeps the deletions not yet erased, and reads a file without them as having none', () => {
  const unerased = [
    { reportId: '-9223372036854775808', version: 2, key: 'AAAAAAAAAAc' },
    { reportId: '91', version: 2147483648, key: 'AAAAAAAAAQA' },
  ];
  const decoded = decodeSnapshot(encodeSnapshot({ ...snapshot, unerased }));
  assert.ok(decoded.ok);
  assert.equal(decoded.snapshot.unerased, unerased);
  const without = decodeSnapshot(encodeSnapshot(snapshot));
  assert.ok(without.ok);
  assert.is(without.snapshot.unerased, undefined);
  const sections = (out: BytesOut) => {
    emptyTable(out);
    out.u32(0);
  };
  assert.ok(decodeSnapshot(fileWith({ ...goodMeta, unerased: [['91', 2, 'AAAA']] }, sections)).ok);
  for (const bad of [[['91', 0, 'AAAA']], [['9x', 2, 'AAAA']], [['91', 2, 'not a key id!']], [['91', 2]]]) {
    const refused = decodeSnapshot(fileWith({ ...goodMeta, unerased: bad }, sections));
    assert.is(refused.ok, false, JSON.stringify(bad));
    assert.match(refused.ok ? '' : refused.reason, 'wrong shape at /unerased');
  }
  // What no reader would take is never written: a key id no event could carry, past the cap.
  const written = decodeSnapshot(
    encodeSnapshot({
      ...snapshot,
      unerased: [
        { reportId: '5', version: 2, key: 'x'.repeat(33) },
        ...Array.from({ length: MAX_UNERASED + 1 }, (_, i) => ({
          reportId: String(i),
          version: 2,
          key: 'AAAAAAAAAAc',
        })),
      ],
    }),
  );
  assert.ok(written.ok);
  assert.is(written.snapshot.unerased?.length, MAX_UNERASED);
  assert.is(written.snapshot.unerased?.[0]?.reportId, '0');
});

format('round-trips an empty read model', () => {
  const empty = testSnapshot({
    ...plain,
    cursor: new Map(),
    events: 0,
    reports: new Map(),
    keys: new Map(),
    anchors: new Map(),
  });
  const decoded = decodeSnapshot(encodeSnapshot(empty));
  assert.ok(decoded.ok);
  assert.equal(plainSnapshot(decoded.snapshot), plainSnapshot(empty));
});

format('starts with magic bytes that name the format and ends with the SHA-256 of the rest', () => {
  const file = encodeSnapshot(snapshot);
  assert.equal(file.subarray(0, SNAPSHOT_MAGIC.length), SNAPSHOT_MAGIC);
  assert.is(file[SNAPSHOT_MAGIC.length - 1], SNAPSHOT_FORMAT);
  assert.equal(file.subarray(-32), createHash('sha256').update(file.subarray(0, -32)).digest());
});

format('refuses a file whose body changed after it was written', () => {
  const file = encodeSnapshot(snapshot);
  const at = file.indexOf('plain');
  file[at] = 'P'.charCodeAt(0);
  assert.equal(decodeSnapshot(file), { ok: false, reason: 'checksum mismatch' });
});

format('refuses a file whose checksum changed', () => {
  const file = encodeSnapshot(snapshot);
  file.writeUInt8((file.at(-1) ?? 0) ^ 1, file.length - 1);
  assert.equal(decodeSnapshot(file), { ok: false, reason: 'checksum mismatch' });
});

format('refuses a file cut short', () => {
  const file = encodeSnapshot(snapshot);
  assert.equal(decodeSnapshot(file.subarray(0, file.length - 10)), { ok: false, reason: 'checksum mismatch' });
});

format('refuses an empty file and one that is not a snapshot', () => {
  assert.equal(decodeSnapshot(Buffer.alloc(0)), { ok: false, reason: 'not a snapshot (bad magic bytes)' });
  assert.equal(decodeSnapshot(Buffer.alloc(100, 7)), { ok: false, reason: 'not a snapshot (bad magic bytes)' });
});

format('refuses an unknown format version', () => {
  const file = encodeSnapshot(snapshot);
  file[SNAPSHOT_MAGIC.length - 1] = SNAPSHOT_FORMAT + 1;
  assert.equal(decodeSnapshot(file), { ok: false, reason: `unknown format ${SNAPSHOT_FORMAT + 1}` });
});

format(
  'keeps the versions of live and deleted reports, and stores a snowflake-sized id in as many bytes as a small one',
  () => {
    const model = testSnapshot({ ...plain, reports: new Map() }).model;
    for (const id of ['5', '7000000000000000005']) {
      model.reports.set(id, { name: 'first' });
      model.reports.delete(id);
      model.reports.set(id, { name: 'again' });
    }
    model.reports.set('6', { name: 'gone' });
    model.reports.delete('6');
    const file = encodeSnapshot({ ...snapshot, model });
    const decoded = decodeSnapshot(file);
    assert.ok(decoded.ok);
    const { reports: read } = decoded.snapshot.model;
    assert.equal(
      [read.version('5'), read.version('7000000000000000005'), read.version('6'), read.version('8')],
      [3, 3, 2, 0],
    );
    assert.equal([read.size, read.deletedIds], [2, 1]);
    const small = testSnapshot({ ...plain, reports: new Map([['1', { name: 'x' }]]) });
    const snowflake = testSnapshot({ ...plain, reports: new Map([['7000000000000000001', { name: 'x' }]]) });
    assert.is(encodeSnapshot(snowflake).length, encodeSnapshot(small).length);
  },
);

format('refuses meta data of the wrong shape under a matching checksum', () => {
  for (const meta of [{}, { ...goodMeta, cursor: [[0, -1]] }, { ...goodMeta, counts: { records: 1 } }]) {
    const decoded = decodeSnapshot(fileWith(meta, (out) => out.u32(0)));
    assert.is(decoded.ok, false);
    assert.match(decoded.ok ? '' : decoded.reason, 'meta data has the wrong shape');
  }
});

/** The reports section of an empty table. */
function emptyTable(out: BytesOut): void {
  new ReportTable().writeTo(out);
}

/** The reports section of a table holding report 5, with `edit` applied to its bytes. */
function editedTable(edit: (bytes: Buffer) => void): (out: BytesOut) => void {
  const chunks: Buffer[] = [];
  const table = new ReportTable();
  table.set('5', { name: 'five' });
  const section = new BytesOut((bytes) => chunks.push(bytes));
  table.writeTo(section);
  section.flush();
  const bytes = Buffer.concat(chunks);
  edit(bytes);
  return (out) => {
    out.bytes(bytes);
    out.text('[]');
  };
}

format(
  'refuses a reports section cut short, a malformed id table and a report outside the table under a matching checksum',
  () => {
    const cut = decodeSnapshot(fileWith(goodMeta, (out) => out.u32(3)));
    assert.match(cut.ok ? '' : cut.reason, /^malformed: /);
    // Layout: u32 chunks, then per chunk u32 length, u32 bytes used and those bytes; 3 f64; then the
    // id table: u32 directory depth, u32 segments, u32 ids, u32 live ids; per segment u32 slots,
    // u32 depth, u32 prefix, the slots of 4 words (low, high, record, version).
    const indexAt = (bytes: Buffer) => 12 + bytes.readUInt32LE(8) + 24;
    const slots = decodeSnapshot(
      fileWith(
        goodMeta,
        editedTable((bytes) => bytes.writeUInt32LE(1000, indexAt(bytes) + 16)),
      ),
    );
    assert.match(slots.ok ? '' : slots.reason, /an id segment of 1000 slots/);
    const counts = decodeSnapshot(
      fileWith(
        goodMeta,
        editedTable((bytes) => bytes.writeUInt32LE(2, indexAt(bytes) + 8)),
      ),
    );
    assert.match(counts.ok ? '' : counts.reason, /holds 1 ids \(1 live\), not 2 \(1\)/);
    const chunk = decodeSnapshot(
      fileWith(
        goodMeta,
        editedTable((bytes) => bytes.writeUInt32LE(5, 4)),
      ),
    );
    assert.match(chunk.ok ? '' : chunk.reason, /a chunk of 5 bytes with 6 used/);
    const outside = decodeSnapshot(
      fileWith(
        goodMeta,
        editedTable((bytes) => {
          const slotsAt = indexAt(bytes) + 28;
          for (let slot = 0; slot < 1024; slot += 1)
            if (bytes.readUInt32LE(slotsAt + slot * 16 + 12) !== 0)
              bytes.writeUInt32LE(64 * 1024 * 1024, slotsAt + slot * 16 + 8);
        }),
      ),
    );
    assert.match(outside.ok ? '' : outside.reason, /a report at 67108864 points outside the table's bytes/);
  },
);

format('refuses idempotency keys of the wrong shape and trailing bytes under a matching checksum', () => {
  const keyOfKind = (kind: number, incarnation: number) => (out: BytesOut) => {
    emptyTable(out);
    out.u32(1);
    out.u8(1);
    out.bytes(Buffer.from('k'));
    out.u8(kind);
    out.u8(1);
    out.bytes(Buffer.from('1'));
    out.f64(incarnation);
  };
  const badKind = decodeSnapshot(fileWith(goodMeta, keyOfKind(9, 1)));
  assert.match(badKind.ok ? '' : badKind.reason, 'an idempotency key of kind 9');
  const badIncarnation = decodeSnapshot(fileWith(goodMeta, keyOfKind(0, 0.5)));
  assert.match(badIncarnation.ok ? '' : badIncarnation.reason, 'an idempotency key of incarnation 0.5');
  const cut = decodeSnapshot(
    fileWith(goodMeta, (out) => {
      emptyTable(out);
      out.u32(2);
    }),
  );
  assert.match(cut.ok ? '' : cut.reason, /the data ends at byte/);
  const trailing = decodeSnapshot(
    fileWith(goodMeta, (out) => {
      emptyTable(out);
      out.u32(0);
      out.u8(1);
    }),
  );
  assert.match(trailing.ok ? '' : trailing.reason, 'bytes follow the last section');
});

format(
  'a snapshot encodes the model as it was when it began, though reports, keys and cursor change while its keys are written and until it is released',
  () => {
    const model = createReadModel({
      reports: reportTable(
        Array.from(
          { length: 50_000 },
          (_, i) => [String(i * 7), { name: `report ${i}`, tag: 'x' }] as [string, { name: string; tag: string }],
        ),
      ),
      keys: new Map(keys),
      cursor: new Map([[0, 50_000]]),
      counts: { records: 50_000 },
    });
    const bytes = ({ cursor, counts, sections }: EncodedModel) => ({
      cursor: [...cursor],
      counts,
      body: Buffer.concat(sections),
    });
    const atStart = bytes(encodeModel(model));
    const snapshot = beginSnapshot(model);
    let next = 50_000;
    const change = (turn: number) => {
      for (let k = 0; k < 20; k += 1) model.reports.delete(String((turn * 20 + k) * 7));
      for (let k = 0; k < 200; k += 1) model.reports.set(String((next += 1) * 7), { name: 'new' });
      model.keys.set(`k${turn}`, { op: 'delete', id: '1', outcome: { kind: 'deleted' } });
      model.cursor.set(0, next);
      model.counts.records = next;
    };
    // The keys are written a few a step, while more are added.
    let turns = 0;
    while (!snapshot.step(2)) change((turns += 1));
    assert.is(turns, Math.ceil(keys.size / 2) - 1, 'one turn between two slices of keys');
    const encoded = snapshot.finish();
    // Written later (the file is written in the background): the model goes on changing until then.
    for (let more = 0; more < 20; more += 1) change((turns += 1));
    assert.equal(bytes(encoded), atStart);
    snapshot.release();
    assert.ok(model.reports.size > 50_000, 'the model did change');
    assert.equal(model.reports.get(String(next * 7)), { name: 'new' });
  },
);

format("holds no idempotency key's request content: a key costs the same whatever its report holds", () => {
  const small = createReadModel({
    keys: new Map([['k', { op: 'create', id: '1', outcome: { kind: 'created', incarnation: 1 } }]]),
  });
  const model = createReadModel({
    reports: reportTable([['1', { name: 'n'.repeat(4096), tag: 't'.repeat(4096) }]]),
    keys: new Map([['k', { op: 'create', id: '1', outcome: { kind: 'created', incarnation: 1 } }]]),
  });
  const keysBytes = (m: typeof model) =>
    Buffer.concat(encodeModel(m).sections).length -
    Buffer.concat(
      (() => {
        const parts: Buffer[] = [];
        const out = new BytesOut((b) => parts.push(Buffer.from(b)));
        m.reports.writeTo(out);
        out.flush();
        return parts;
      })(),
    ).length;
  assert.is(keysBytes(model), keysBytes(small));
});

format.run();
