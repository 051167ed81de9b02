// With an OpenTelemetry SDK tracer (recording in memory, given to this server only, never
// registered globally): the event of a request names the span of its append, which continues the
// request's trace, and the read-your-writes wait has its own span under the same parent.
import { SpanKind } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-node';
import * as assert from 'uvu/assert';
import { startTestServer } from '../helpers/server.js';
import { eventsFor } from './contract/trace-context.js';
import { idSource, reportBody, serverSuite } from './requests.js';
import { expectNoContent, expectReport } from './responses.js';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const PARENT_ID = 'b7ad6b7169203331';
const TRACEPARENT = `00-${TRACE_ID}-${PARENT_ID}-01`;

const exporter = new InMemorySpanExporter();
const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test');
const nextId = idSource();

/** The finished span named `name` whose append wrote the event of report `id`. */
function spanOf(name: string, id: string): ReadableSpan | undefined {
  const append = exporter
    .getFinishedSpans()
    .find((span) => span.name === 'reports append' && span.attributes['cloudevents.event_subject'] === id);
  if (name === 'reports append' || append === undefined) return append;
  return exporter
    .getFinishedSpans()
    .find(
      (span) =>
        span.name === name &&
        span.parentSpanContext?.spanId === append.parentSpanContext?.spanId &&
        span.spanContext().traceId === append.spanContext().traceId,
    );
}

const spans = serverSuite('write spans with an SDK tracer', (env) => startTestServer(env, { tracer }));

spans('the event names the append span, a producer span under the request traceparent', async ({ server }) => {
  const id = nextId();
  await expectReport(
    await server.request('/reports', {
      method: 'POST',
      json: reportBody(id, 'traced'),
      headers: { traceparent: TRACEPARENT, tracestate: 'congo=t61rcWkgMzE' },
    }),
    { name: 'traced' },
  );
  const append = spanOf('reports append', id);
  assert.ok(append, 'no append span');
  assert.is(append.kind, SpanKind.PRODUCER);
  assert.is(append.spanContext().traceId, TRACE_ID);
  assert.is(append.parentSpanContext?.spanId, PARENT_ID);
  const [event] = await eventsFor(server, id);
  assert.is(event?.traceparent, `00-${TRACE_ID}-${append.spanContext().spanId}-01`);
  assert.is(event?.tracestate, 'congo=t61rcWkgMzE');
  assert.is(append.attributes['cloudevents.event_id'], event?.id);
});

spans('the read-your-writes wait is a span of its own under the same parent', async ({ server }) => {
  const id = nextId();
  await expectReport(
    await server.request('/reports', {
      method: 'POST',
      json: reportBody(id, 'traced'),
      headers: { traceparent: TRACEPARENT },
    }),
    { name: 'traced' },
  );
  const [append, wait] = [spanOf('reports append', id), spanOf('reports wait for projection', id)];
  assert.ok(append && wait, 'a span is missing');
  assert.is(wait.parentSpanContext?.spanId, PARENT_ID);
  assert.is(wait.kind, SpanKind.INTERNAL);
  assert.is.not(wait.spanContext().spanId, append.spanContext().spanId);
});

spans('a delete names its append span in the ReportDeleted event', async ({ server }) => {
  const id = nextId();
  await expectReport(await server.request('/reports', { method: 'POST', json: reportBody(id, 'doomed') }), {
    name: 'doomed',
  });
  exporter.reset();
  await expectNoContent(
    await server.request(`/reports/${id}`, { method: 'DELETE', headers: { traceparent: TRACEPARENT } }),
  );
  const append = spanOf('reports append', id);
  const events = await eventsFor(server, id);
  assert.is(events[1]?.type, 'ReportDeleted');
  assert.is(events[1]?.traceparent, `00-${TRACE_ID}-${append?.spanContext().spanId}-01`);
});

spans('with tracing on, a request without a traceparent starts a trace, and its event names it', async ({ server }) => {
  const id = nextId();
  await expectReport(await server.request('/reports', { method: 'POST', json: reportBody(id, 'root') }), {
    name: 'root',
  });
  const append = spanOf('reports append', id);
  assert.ok(append);
  assert.is(append.parentSpanContext, undefined);
  const [event] = await eventsFor(server, id);
  assert.is(event?.traceparent, `00-${append.spanContext().traceId}-${append.spanContext().spanId}-01`);
});

spans('an unsampled traceparent stays unsampled in the event', async ({ server }) => {
  const id = nextId();
  await expectReport(
    await server.request('/reports', {
      method: 'POST',
      json: reportBody(id, 'quiet'),
      headers: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-00` },
    }),
    { name: 'quiet' },
  );
  const [event] = await eventsFor(server, id);
  assert.match(event?.traceparent ?? '', new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-00$`));
});

spans.run();
