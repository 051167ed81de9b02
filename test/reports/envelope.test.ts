import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeEvent, encodeEvent } from '../../projections/codec.js';
import { isoClock, reportCreated, reportDeleted, type EnvelopeContext } from '../../src/reports/envelope.js';

const context: EnvelopeContext = {
  source: 'urn:report-store:test',
  newId: () => '3f1c2a4e-8b7d-4c6e-9f0a-1b2c3d4e5f60',
  time: () => new Date(Date.UTC(2024, 4, 1, 12, 30, 15, 250)).toISOString(),
};

const envelopeFields = {
  specversion: '1.0',
  id: '3f1c2a4e-8b7d-4c6e-9f0a-1b2c3d4e5f60',
  source: 'urn:report-store:test',
  time: '2024-05-01T12:30:15.250Z',
  datacontenttype: 'application/json',
};

/** The event as the log holds it: JSON leaves out the attributes that are undefined. */
const asWritten = (event: object): unknown => JSON.parse(JSON.stringify(event));

const created = suite('reportCreated');
created('fills every CloudEvents field of the topic contract, and the version it was decided on', () => {
  assert.equal(asWritten(reportCreated(context, { id: '-42', name: 'n', tag: 't' }, 2)), {
    ...envelopeFields,
    type: 'ReportCreated',
    expectedversion: 2,
    subject: '-42',
    data: { id: '-42', name: 'n', tag: 't' },
  });
});
created('passes the ReportEvent schema through the codec', () => {
  const event = reportCreated(context, { id: '9223372036854775807', name: '' }, 0);
  assert.equal(decodeEvent(encodeEvent(event)), { ok: true, event: asWritten(event) });
});
created("writes expectedversion right before data, the order the fold's fast decoder knows", () => {
  assert.match(
    encodeEvent(reportCreated(context, { id: '1', name: 'a' }, 0)).toString(),
    /"type":"ReportCreated","expectedversion":0,"data":/,
  );
});
created(
  'writes no expectedversion once the version is beyond a 32-bit integer (the event folds by existence alone)',
  () => {
    const last = reportCreated(context, { id: '1', name: 'a' }, 2 ** 31 - 1);
    assert.is(last.expectedversion, 2 ** 31 - 1);
    const beyond = encodeEvent(reportCreated(context, { id: '1', name: 'a' }, 2 ** 31));
    assert.not.match(beyond.toString(), /expectedversion/);
    assert.ok(decodeEvent(beyond).ok);
  },
);
created('carries who wrote it as the CloudEvents authcontext extension, right after expectedversion', () => {
  const named = reportCreated(context, { id: '5', name: 'n' }, 0, { authtype: 'api_key', authid: 'billing' });
  assert.match(encodeEvent(named).toString(), /"expectedversion":0,"authtype":"api_key","authid":"billing","data":/);
  assert.equal(decodeEvent(encodeEvent(named)), { ok: true, event: asWritten(named) });
  const unnamed = encodeEvent(reportCreated(context, { id: '5', name: 'n' }, 0, { authtype: 'api_key' })).toString();
  assert.match(unnamed, /"expectedversion":0,"authtype":"api_key","data":/);
  assert.not.match(unnamed, /authid/);
  assert.not.match(
    encodeEvent(reportCreated(context, { id: '5', name: 'n' }, 0)).toString(),
    /auth/,
    'none without a writer (tools, tests)',
  );
});
created('takes a new event id for every event', () => {
  let n = 0;
  const counting = { ...context, newId: () => `id-${(n += 1)}` };
  assert.is.not(
    reportCreated(counting, { id: '1', name: 'a' }, 0).id,
    reportCreated(counting, { id: '1', name: 'a' }, 0).id,
  );
});
created.run();

const deleted = suite('reportDeleted');
deleted('fills every CloudEvents field of the topic contract', () => {
  assert.equal(asWritten(reportDeleted(context, { id: '0' }, 1)), {
    ...envelopeFields,
    type: 'ReportDeleted',
    expectedversion: 1,
    subject: '0',
    data: { id: '0' },
  });
});
deleted('carries who deleted it as the CloudEvents authcontext extension', () => {
  const event = reportDeleted(context, { id: '42' }, 1, { authtype: 'api_key', authid: 'cleanup-job' });
  assert.equal(asWritten(event), {
    ...envelopeFields,
    type: 'ReportDeleted',
    expectedversion: 1,
    authtype: 'api_key',
    authid: 'cleanup-job',
    subject: '42',
    data: { id: '42' },
  });
  assert.equal(decodeEvent(encodeEvent(event)), { ok: true, event: asWritten(event) });
});
deleted('passes the ReportEvent schema through the codec', () => {
  const event = reportDeleted(context, { id: '-9223372036854775808' }, 3);
  assert.equal(decodeEvent(encodeEvent(event)), { ok: true, event: asWritten(event) });
});
deleted.run();

const clock = suite('isoClock');
clock('formats the clock as Date#toISOString does, again whenever the millisecond changes', () => {
  const readings = [
    Date.UTC(2024, 4, 1, 12, 30, 15, 250),
    Date.UTC(2024, 4, 1, 12, 30, 15, 250),
    Date.UTC(2024, 4, 1, 12, 30, 15, 251),
    0,
  ];
  let at = 0;
  const time = isoClock(() => readings[at++] as number);
  assert.equal(
    readings.map(() => time()),
    ['2024-05-01T12:30:15.250Z', '2024-05-01T12:30:15.250Z', '2024-05-01T12:30:15.251Z', '1970-01-01T00:00:00.000Z'],
  );
});
clock.run();
