// W3C Trace Context parsing, the event's trace attributes, and the spans of a write, with the
// no-op tracer of @opentelemetry/api (no SDK) and with an SDK tracer that records in memory.
import { createTraceState, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type SpanContext } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeEvent, encodeEvent } from '../../projections/codec.js';
import type { ReportEvent } from '../../projections/events.js';
import type { LogPosition } from '../../src/log/event-log.js';
import {
  createWriteTracing,
  defaultTracer,
  parentContext,
  parseTraceContext,
  traceAttributes,
  withTraceContext,
} from '../../src/reports/tracing.js';
import { created } from '../helpers/events.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${PARENT_ID}-01`;

const parse = suite('parseTraceContext');

parse('reads a version-00 traceparent as a remote span context', () => {
  assert.equal(parseTraceContext(TRACEPARENT, undefined), {
    traceId: TRACE_ID,
    spanId: PARENT_ID,
    traceFlags: 1,
    isRemote: true,
  });
});

parse('keeps the flags as sent, sampled or not', () => {
  assert.is(parseTraceContext(`00-${TRACE_ID}-${PARENT_ID}-00`, undefined)?.traceFlags, 0);
  assert.is(parseTraceContext(`00-${TRACE_ID}-${PARENT_ID}-03`, undefined)?.traceFlags, 3);
});

parse('ignores an absent traceparent, and a tracestate without one', () => {
  assert.is(parseTraceContext(undefined, undefined), undefined);
  assert.is(parseTraceContext(undefined, 'congo=t61rcWkgMzE'), undefined);
});

parse('ignores every malformed traceparent instead of failing', () => {
  const invalid = [
    '',
    'garbage',
    `00-${TRACE_ID.toUpperCase()}-${PARENT_ID}-01`,
    `00-${'0'.repeat(32)}-${PARENT_ID}-01`,
    `00-${TRACE_ID}-${'0'.repeat(16)}-01`,
    `00-${TRACE_ID.slice(1)}-${PARENT_ID}-01`,
    `00-${TRACE_ID}-${PARENT_ID.slice(1)}-01`,
    `00-${TRACE_ID}-${PARENT_ID}-1`,
    `00-${TRACE_ID}-${PARENT_ID}-0g`,
    `00-${TRACE_ID}-${PARENT_ID}-01-extra`,
    `00-${TRACE_ID}-${PARENT_ID}-01 `,
    `ff-${TRACE_ID}-${PARENT_ID}-01`,
    `0-${TRACE_ID}-${PARENT_ID}-01`,
    `00_${TRACE_ID}_${PARENT_ID}_01`,
    `${TRACEPARENT}, ${TRACEPARENT}`,
  ];
  for (const header of invalid) assert.is(parseTraceContext(header, 'congo=t61rcWkgMzE'), undefined, header);
});

parse('reads a later version by its first four fields, as the W3C asks', () => {
  assert.equal(parseTraceContext(`01-${TRACE_ID}-${PARENT_ID}-01-what-comes-next`, undefined), {
    traceId: TRACE_ID,
    spanId: PARENT_ID,
    traceFlags: 1,
    isRemote: true,
  });
  assert.ok(parseTraceContext(`cc-${TRACE_ID}-${PARENT_ID}-01`, undefined));
  assert.is(parseTraceContext(`cc-${TRACE_ID}-${PARENT_ID}-01x`, undefined), undefined);
});

parse('keeps a tracestate beside a valid traceparent', () => {
  const context = parseTraceContext(TRACEPARENT, 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE');
  assert.is(context?.traceState?.serialize(), 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE');
});

parse('drops invalid tracestate members and keeps the rest', () => {
  assert.is(parseTraceContext(TRACEPARENT, 'rojo=1, BAD KEY=2 ,congo=3')?.traceState?.serialize(), 'rojo=1,congo=3');
});

parse('drops a tracestate with no valid member, or over 512 characters, whole', () => {
  assert.is(parseTraceContext(TRACEPARENT, 'not a list')?.traceState, undefined);
  assert.is(parseTraceContext(TRACEPARENT, '')?.traceState, undefined);
  const long = Array.from({ length: 30 }, (_, i) => `k${i}=${'v'.repeat(15)}`).join(',');
  assert.ok(long.length > 512);
  assert.is(parseTraceContext(TRACEPARENT, long)?.traceState, undefined);
  assert.ok(parseTraceContext(TRACEPARENT, long), 'the traceparent still counts');
});

parse('keeps at most 32 tracestate members', () => {
  const many = Array.from({ length: 40 }, (_, i) => `k${i}=v`).join(',');
  assert.is(parseTraceContext(TRACEPARENT, many)?.traceState?.serialize().split(',').length, 32);
});

parse.run();

const attributes = suite('traceAttributes and withTraceContext');

attributes('formats a span context as traceparent and tracestate', () => {
  const span: SpanContext = {
    traceId: TRACE_ID,
    spanId: PARENT_ID,
    traceFlags: 1,
    traceState: createTraceState('congo=t61rcWkgMzE'),
  };
  assert.equal(traceAttributes(span), { traceparent: TRACEPARENT, tracestate: 'congo=t61rcWkgMzE' });
  assert.equal(traceAttributes({ traceId: TRACE_ID, spanId: PARENT_ID, traceFlags: 0 }), {
    traceparent: `00-${TRACE_ID}-${PARENT_ID}-00`,
  });
});

attributes('gives nothing for the invalid span context of a no-op span', () => {
  assert.is(
    traceAttributes(
      trace.wrapSpanContext({ traceId: '0'.repeat(32), spanId: '0'.repeat(16), traceFlags: 0 }).spanContext(),
    ),
    undefined,
  );
});

attributes('returns the very event when there is no trace context', () => {
  const event = created('1', 'a');
  assert.is(withTraceContext(event, { traceId: '0'.repeat(32), spanId: '0'.repeat(16), traceFlags: 0 }), event);
});

attributes('writes events that pass the envelope schema with their trace attributes', () => {
  const span: SpanContext = {
    traceId: TRACE_ID,
    spanId: PARENT_ID,
    traceFlags: 1,
    traceState: createTraceState('rojo=00f067aa0ba902b7,congo=t61rcWkgMzE'),
  };
  const event = withTraceContext(created('7', 'a'), span);
  assert.is(event.traceparent, TRACEPARENT);
  assert.equal(decodeEvent(encodeEvent(event)), { ok: true, event });
});

attributes.run();

/** A write traced with `tracer`: the event the log was given, and what the append answered. */
async function tracedWrite(
  tracing: ReturnType<typeof createWriteTracing>,
  remote: SpanContext | undefined,
  fail?: Error,
) {
  let written: ReportEvent | undefined;
  const parent = parentContext(remote);
  const positions = await tracing.append(parent, created('42', 'x'), (event) => {
    written = event;
    if (fail) return Promise.reject(fail);
    return Promise.resolve([{ partition: 2, offset: 17 } satisfies LogPosition]);
  });
  await tracing.wait(parent, () => Promise.resolve('applied'));
  return { written: written as ReportEvent, positions };
}

function recordingTracer() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { tracer: provider.getTracer('test'), spans: () => exporter.getFinishedSpans() };
}

const noop = suite('write spans without an SDK');
const remote = parseTraceContext(TRACEPARENT, 'congo=t61rcWkgMzE');

noop('carries the incoming trace context into the event unchanged', async () => {
  const { written } = await tracedWrite(createWriteTracing(defaultTracer()), remote);
  assert.is(written.traceparent, TRACEPARENT);
  assert.is(written.tracestate, 'congo=t61rcWkgMzE');
});

noop('invents none when the request had none', async () => {
  const { written } = await tracedWrite(createWriteTracing(defaultTracer()), undefined);
  assert.not.ok('traceparent' in written);
  assert.not.ok('tracestate' in written);
});

noop('passes the append result through', async () => {
  assert.equal((await tracedWrite(createWriteTracing(defaultTracer()), undefined)).positions, [
    { partition: 2, offset: 17 },
  ]);
});

noop.run();

const sdk = suite('write spans with an SDK');

sdk('names the append span in the event, a child of the incoming parent in the same trace', async () => {
  const { tracer, spans } = recordingTracer();
  const { written } = await tracedWrite(createWriteTracing(tracer), remote);
  const append = spans().find((span) => span.name === 'reports append');
  assert.ok(append);
  assert.is(append.kind, SpanKind.PRODUCER);
  assert.is(append.spanContext().traceId, TRACE_ID);
  assert.is(append.parentSpanContext?.spanId, PARENT_ID);
  assert.is(written.traceparent, `00-${TRACE_ID}-${append.spanContext().spanId}-01`);
  assert.is(written.tracestate, 'congo=t61rcWkgMzE');
});

sdk('records the wait for the projection as a sibling span under the same parent', async () => {
  const { tracer, spans } = recordingTracer();
  await tracedWrite(createWriteTracing(tracer), remote);
  const wait = spans().find((span) => span.name === 'reports wait for projection');
  assert.ok(wait);
  assert.is(wait.spanContext().traceId, TRACE_ID);
  assert.is(wait.parentSpanContext?.spanId, PARENT_ID);
});

sdk('gives the append span the CloudEvents attributes and the record position', async () => {
  const { tracer, spans } = recordingTracer();
  const { written } = await tracedWrite(createWriteTracing(tracer), remote);
  const append = spans().find((span) => span.name === 'reports append');
  assert.is(append?.attributes['cloudevents.event_id'], written.id);
  assert.is(append?.attributes['cloudevents.event_type'], 'ReportCreated');
  assert.is(append?.attributes['cloudevents.event_subject'], '42');
  assert.is(append?.attributes['reports.log.partition'], 2);
  assert.is(append?.attributes['reports.log.offset'], 17);
});

sdk('starts a new trace when tracing is on and the request had none', async () => {
  const { tracer, spans } = recordingTracer();
  const { written } = await tracedWrite(createWriteTracing(tracer), undefined);
  const append = spans().find((span) => span.name === 'reports append');
  assert.is(append?.parentSpanContext, undefined);
  assert.is(written.traceparent, `00-${append?.spanContext().traceId}-${append?.spanContext().spanId}-01`);
});

sdk('marks a failed append as an error and ends its span', async () => {
  const { tracer, spans } = recordingTracer();
  const failure = new Error('the log said no');
  try {
    await tracedWrite(createWriteTracing(tracer), remote, failure);
    assert.unreachable('the append should have failed');
  } catch (error) {
    assert.is(error, failure);
  }
  const append = spans().find((span) => span.name === 'reports append');
  assert.is(append?.status.code, SpanStatusCode.ERROR);
  assert.is(append?.events[0]?.name, 'exception');
});

sdk('follows a span already active instead of the header (an SDK that traces HTTP itself)', async () => {
  const { tracer, spans } = recordingTracer();
  const server = tracer.startSpan('server', {}, ROOT_CONTEXT);
  const active = trace.setSpan(ROOT_CONTEXT, server);
  await createWriteTracing(tracer).append(parentContext(remote, active), created('1', 'a'), () => Promise.resolve([]));
  server.end();
  const append = spans().find((span) => span.name === 'reports append');
  assert.is(append?.parentSpanContext?.spanId, server.spanContext().spanId);
  assert.is.not(append?.spanContext().traceId, TRACE_ID);
});

sdk.run();
