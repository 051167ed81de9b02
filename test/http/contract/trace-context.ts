// W3C trace context on POST and DELETE: a valid traceparent (and its tracestate) is carried into the
// event the request writes, as the CloudEvents distributed-tracing extension; without one, or with
// an invalid one, the event carries none (no SDK is registered in the test process).
import * as assert from 'uvu/assert';
import { decodeEvent } from '../../../projections/codec.js';
import type { ReportEvent } from '../../../projections/events.js';
import type { TestServer } from '../../helpers/server.js';
import { reportBody, serverSuite, type StartServer } from '../requests.js';
import { expectNoContent, expectReport } from '../responses.js';
import { readRecords } from '../../../src/log/record-batches.js';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const TRACESTATE = 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE';

/** The events the log holds for report `id`, read back from the log itself. */
export async function eventsFor(server: TestServer, id: string): Promise<ReportEvent[]> {
  const events: ReportEvent[] = [];
  for await (const record of readRecords(server.log, new Map())) {
    const decoded = decodeEvent(record.value);
    if (decoded.ok && decoded.event.subject === id) events.push(decoded.event);
  }
  return events;
}

const post = (server: TestServer, id: string, headers: Record<string, string>) =>
  server.request('/reports', { method: 'POST', json: reportBody(id, 'traced'), headers });

/** The first event (the create) carries neither trace attribute. */
function assertNoTraceAttributes([event]: readonly ReportEvent[]): void {
  assert.ok(event);
  assert.not.ok('traceparent' in event);
  assert.not.ok('tracestate' in event);
}

export function traceContextContract(logName: string, start: StartServer, nextId: () => string): void {
  const traced = serverSuite(`${logName}: trace context`, start);

  traced('a create with traceparent and tracestate writes both into its event unchanged', async ({ server }) => {
    const id = nextId();
    await expectReport(await post(server, id, { traceparent: TRACEPARENT, tracestate: TRACESTATE }), {
      name: 'traced',
    });
    const [event] = await eventsFor(server, id);
    assert.is(event?.traceparent, TRACEPARENT);
    assert.is(event?.tracestate, TRACESTATE);
  });

  traced('a delete with a traceparent writes it into the ReportDeleted event', async ({ server }) => {
    const id = nextId();
    await expectReport(await post(server, id, {}), { name: 'traced' });
    await expectNoContent(
      await server.request(`/reports/${id}`, { method: 'DELETE', headers: { traceparent: TRACEPARENT } }),
    );
    const events = await eventsFor(server, id);
    assert.equal(
      events.map((event) => [event.type, event.traceparent]),
      [
        ['ReportCreated', undefined],
        ['ReportDeleted', TRACEPARENT],
      ],
    );
  });

  traced('a request without a traceparent writes an event without trace attributes', async ({ server }) => {
    const id = nextId();
    await expectReport(await post(server, id, {}), { name: 'traced' });
    assertNoTraceAttributes(await eventsFor(server, id));
  });

  traced('an invalid traceparent is ignored, with its tracestate: 200 and no trace attributes', async ({ server }) => {
    const id = nextId();
    await expectReport(
      await post(server, id, {
        traceparent: '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
        tracestate: TRACESTATE,
      }),
      { name: 'traced' },
    );
    assertNoTraceAttributes(await eventsFor(server, id));
  });

  traced('a tracestate without a traceparent is ignored', async ({ server }) => {
    const id = nextId();
    await expectReport(await post(server, id, { tracestate: TRACESTATE }), { name: 'traced' });
    const [event] = await eventsFor(server, id);
    assert.not.ok(event && 'tracestate' in event);
  });

  traced('two traceparent headers are ambiguous and ignored', async ({ server }) => {
    const id = nextId();
    const headers = new Headers([
      ['traceparent', TRACEPARENT],
      ['traceparent', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'],
    ]);
    await expectReport(await server.request('/reports', { method: 'POST', json: reportBody(id, 'traced'), headers }), {
      name: 'traced',
    });
    const [event] = await eventsFor(server, id);
    assert.not.ok(event && 'traceparent' in event);
  });

  traced.run();
}
