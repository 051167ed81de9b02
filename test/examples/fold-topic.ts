// A downstream consumer: folds the report events topic with the service's own projections/ code
// and prints the same state digest as `reports replay`. Each event is folded in a span that
// continues the trace of the request that wrote it (the event's traceparent); without an
// OpenTelemetry SDK registered those spans cost nothing. (Quoted in docs/topic-contract.md; a test runs it.)
import { createHash } from 'node:crypto';
import { defaultTextMapGetter, propagation, ROOT_CONTEXT, SpanKind, trace, type TextMapPropagator, type Tracer } from '@opentelemetry/api';
import kafkajs from 'kafkajs';
import { canonicalState } from '../../projections/canonical.js';
import { decodeEvent } from '../../projections/codec.js';
import { createState, evolve } from '../../projections/reports.js';

export interface FoldTracing {
  readonly tracer?: Tracer;
  /** Reads `traceparent`/`tracestate` (W3C); the global one is what a registered SDK set up. */
  readonly propagator?: TextMapPropagator;
}

export async function foldTopic(brokers: string[], topic: string, { tracer = trace.getTracer('report-folder'), propagator = propagation }: FoldTracing = {}) {
  const kafka = new kafkajs.Kafka({ clientId: 'report-folder', brokers, logLevel: kafkajs.logLevel.ERROR });
  const admin = kafka.admin();
  await admin.connect();
  // Fold up to the end offsets seen now; a long-running consumer would simply keep going.
  const end = new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, Number(p.high)]));
  await admin.disconnect();
  const state = createState();
  const consumer = kafka.consumer({ groupId: `report-folder-${process.pid}-${Date.now()}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const done = new Set([...end].filter(([, high]) => high === 0).map(([partition]) => partition));
  await new Promise<void>((resolve) => {
    if (done.size === end.size) return resolve();
    void consumer.run({
      eachMessage: ({ partition, message }) => {
        const decoded = decodeEvent(message.value ?? Buffer.alloc(0));
        if (decoded.ok) {
          // The CloudEvents distributed-tracing attributes are W3C trace context: continue that trace.
          const parent = propagator.extract(ROOT_CONTEXT, decoded.event, defaultTextMapGetter);
          const span = tracer.startSpan(`process ${decoded.event.type}`, { kind: SpanKind.CONSUMER }, parent);
          evolve(state, decoded.event);
          span.end();
        } // invalid records are skipped, as the service does
        if (Number(message.offset) + 1 >= (end.get(partition) ?? 0)) done.add(partition);
        if (done.size === end.size) resolve();
        return Promise.resolve();
      },
    });
  });
  await consumer.disconnect();
  return { reports: state, digest: createHash('sha256').update(canonicalState(state)).digest('hex') };
}

// node dist/test/examples/fold-topic.js 127.0.0.1:9092 reports.events
if (process.argv[1]?.endsWith('fold-topic.js')) {
  const [brokers = '127.0.0.1:9092', topic = 'reports.events'] = process.argv.slice(2);
  const { reports, digest } = await foldTopic(brokers.split(','), topic);
  console.log(`live reports: ${reports.size}\nstate digest: sha256:${digest}`);
}
