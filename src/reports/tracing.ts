// Trace context from a request into the event it writes (the CloudEvents distributed-tracing
// extension), and spans around the append and the read-your-writes wait. Everything goes through
// @opentelemetry/api, whose tracer is a no-op until an SDK is registered (`node --import` of a
// set-up file): then a write without a traceparent costs two empty no-op spans and nothing else.
import {
  context,
  createTraceState,
  isSpanContextValid,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type SpanContext,
  type Tracer,
} from '@opentelemetry/api';
import { TRACESTATE_MAX_CHARS, type ReportEvent } from '../../projections/events.js';
import type { LogPosition } from '../log/event-log.js';
import { SERVICE_VERSION } from '../version.js';

// W3C Trace Context, traceparent: version-traceid-parentid-flags, lowercase hex. A later version
// may append fields after a dash; version ff is forbidden; version 00 is exactly 55 characters.
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ALL_ZEROS = /^0+$/;

/**
 * The trace context of an incoming `traceparent` (and `tracestate`) as a remote span context, or
 * undefined when the traceparent is absent or invalid: a receiver must then ignore both (W3C), so
 * an invalid header is never an error. A tracestate is kept only beside a valid traceparent, with
 * its invalid members dropped, and is dropped whole when longer than the W3C limit.
 */
export function parseTraceContext(
  traceparent: string | undefined,
  tracestate: string | undefined,
): SpanContext | undefined {
  if (traceparent === undefined) return undefined;
  const match = TRACEPARENT.exec(traceparent);
  if (match === null) return undefined;
  const [, version, traceId = '', spanId = '', flags = ''] = match;
  if (version === 'ff' || (version === '00' && match[5] !== undefined)) return undefined;
  if (ALL_ZEROS.test(traceId) || ALL_ZEROS.test(spanId)) return undefined;
  const traceState =
    tracestate === undefined || tracestate.length > TRACESTATE_MAX_CHARS ? undefined : createTraceState(tracestate);
  const kept = traceState !== undefined && traceState.serialize() !== '' ? { traceState } : {};
  return { traceId, spanId, traceFlags: parseInt(flags, 16), isRemote: true, ...kept };
}

/** The `traceparent` and `tracestate` attributes of an event written within `span` (none for an invalid span). */
export function traceAttributes(span: SpanContext): { traceparent: string; tracestate?: string } | undefined {
  if (!isSpanContextValid(span)) return undefined;
  const traceparent = `00-${span.traceId}-${span.spanId}-${span.traceFlags.toString(16).padStart(2, '0')}`;
  const tracestate = span.traceState?.serialize();
  return tracestate === undefined || tracestate === '' ? { traceparent } : { traceparent, tracestate };
}

/** The event with the trace context of `span`, or the event itself when there is none. */
export function withTraceContext(event: ReportEvent, span: SpanContext): ReportEvent {
  const attributes = traceAttributes(span);
  return attributes === undefined ? event : { ...event, ...attributes };
}

/**
 * The parent of this write's spans: a span already active (an SDK that instruments HTTP itself
 * has read the headers) wins; otherwise the request's own traceparent, if it had a valid one.
 */
export function parentContext(remote: SpanContext | undefined, active: Context = context.active()): Context {
  if (remote === undefined || trace.getSpan(active) !== undefined) return active;
  return trace.setSpanContext(active, remote);
}

export function defaultTracer(): Tracer {
  return trace.getTracer('report-store', SERVICE_VERSION);
}

export interface WriteTracing {
  /**
   * Runs `append` in a producer span and gives it the event carrying that span's context: the span
   * of this append when a tracer records, else the incoming context unchanged, else nothing.
   */
  append(
    parent: Context,
    event: ReportEvent,
    append: (event: ReportEvent) => Promise<readonly LogPosition[]>,
  ): Promise<readonly LogPosition[]>;
  /** Runs the read-your-writes wait in a span. */
  wait<T>(parent: Context, wait: () => Promise<T>): Promise<T>;
}

export function createWriteTracing(tracer: Tracer): WriteTracing {
  return {
    append(parent, event, append) {
      const span = tracer.startSpan('reports append', { kind: SpanKind.PRODUCER }, parent);
      // A span that does not record (no SDK, or not sampled) has nothing to end or annotate.
      if (!span.isRecording()) return append(withTraceContext(event, span.spanContext()));
      span.setAttributes(eventAttributes(event));
      return within(span, async () => {
        const positions = await append(withTraceContext(event, span.spanContext()));
        const [first] = positions;
        if (first !== undefined)
          span.setAttributes({ 'reports.log.partition': first.partition, 'reports.log.offset': first.offset });
        return positions;
      });
    },
    wait(parent, wait) {
      const span = tracer.startSpan('reports wait for projection', { kind: SpanKind.INTERNAL }, parent);
      return span.isRecording() ? within(span, wait) : wait();
    },
  };
}

/** The CloudEvents semantic-convention attributes of the event being appended. */
function eventAttributes(event: ReportEvent) {
  return {
    'cloudevents.event_id': event.id,
    'cloudevents.event_source': event.source,
    'cloudevents.event_spec_version': event.specversion,
    'cloudevents.event_type': event.type,
    'cloudevents.event_subject': event.subject,
  };
}

/** Runs `work` in a recording span, records a failure on it, and ends it either way. */
async function within<T>(span: Span, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    span.recordException(error instanceof Error ? error : String(error));
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : 'error' });
    throw error;
  } finally {
    span.end();
  }
}
