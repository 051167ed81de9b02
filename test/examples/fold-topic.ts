// A downstream consumer: folds the report events topic with the service's own projections/ code
// and prints the same state digest as `reports replay`. Names and tags are sealed: it reads the key
// topic (which only a trusted consumer may) to open live reports' content, and holds a report's
// name and tag only while the report is live and its key is there: a ReportDeleted, or a key that
// is not in the key topic, is its order to forget them. Each event is folded in a span that
// continues the trace of the request that wrote it (the event's traceparent); without an
// OpenTelemetry SDK registered those spans cost nothing. (Quoted in docs/topic-contract.md; a test runs it.)
import { createHash } from 'node:crypto';
import {
  defaultTextMapGetter,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  trace,
  type TextMapPropagator,
  type Tracer,
} from '@opentelemetry/api';
import kafkajs, { type Kafka, type KafkaMessage } from 'kafkajs';
import { canonicalState } from '../../projections/canonical.js';
import { decodeEvent } from '../../projections/codec.js';
import { createState, evolve, isSealedReport, type StoredReport } from '../../projections/reports.js';
import { openContent } from '../../projections/sealing.js';

export interface FoldOptions {
  /** The key topic (REPORTS_KEY_TOPIC of the service): `<topic>.keys` unless set. */
  readonly keyTopic?: string;
  readonly tracer?: Tracer;
  /** Reads `traceparent`/`tracestate` (W3C); the global one is what a registered SDK set up. */
  readonly propagator?: TextMapPropagator;
}

/** A record of the key topic: format byte 1, the 32-byte AES-256 secret, the 32-byte SHA-256 of the content. */
interface ContentKey {
  readonly secret: Buffer;
  readonly digest: Buffer;
}

/** The end offset of each partition of `topic` now. */
async function endOffsets(kafka: Kafka, topic: string): Promise<Map<number, number>> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    if (!(await admin.listTopics()).includes(topic)) return new Map(); // a topic written before erasure has no key topic
    return new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, Number(p.high)]));
  } finally {
    await admin.disconnect();
  }
}

/** Calls `each` with every record of `topic` before `end`, partition by partition in offset order. */
async function readUpTo(
  kafka: Kafka,
  topic: string,
  end: Map<number, number>,
  each: (message: KafkaMessage) => void,
): Promise<void> {
  const done = new Set([...end].filter(([, high]) => high === 0).map(([partition]) => partition));
  if (done.size === end.size) return;
  // It stops at the end, so a short fetch wait: disconnect() waits out the fetch under way (5 s by default).
  const consumer = kafka.consumer({
    groupId: `report-folder-${topic}-${process.pid}-${Date.now()}`,
    maxWaitTimeInMs: 100,
  });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await new Promise<void>((resolve) => {
    void consumer.run({
      eachMessage: ({ partition, message }) => {
        if (Number(message.offset) < (end.get(partition) ?? 0)) each(message);
        if (Number(message.offset) + 1 >= (end.get(partition) ?? 0)) done.add(partition);
        if (done.size === end.size) resolve();
        return Promise.resolve();
      },
    });
  });
  await consumer.disconnect();
}

export async function foldTopic(
  brokers: string[],
  topic: string,
  { keyTopic = `${topic}.keys`, tracer = trace.getTracer('report-folder'), propagator = propagation }: FoldOptions = {},
) {
  const kafka = new kafkajs.Kafka({ clientId: 'report-folder', brokers, logLevel: kafkajs.logLevel.ERROR });
  // Fold up to the end offsets seen now (a long-running consumer would keep following both topics).
  // The events' ends first, then the keys: a key is in the key topic before the event that uses it.
  const eventsEnd = await endOffsets(kafka, topic);
  const keys = new Map<string, ContentKey>();
  await readUpTo(kafka, keyTopic, await endOffsets(kafka, keyTopic), ({ key, value }) => {
    const id = key?.toString() ?? '';
    if (value === null)
      keys.delete(id); // a tombstone: the key is destroyed
    else if (value.length === 65 && value[0] === 1)
      keys.set(id, { secret: value.subarray(1, 33), digest: value.subarray(33) });
    // anything else (the `~roll` records that only roll segments, a format this consumer does not know) is not a key
  });
  const state = createState();
  const names = new Map<string, StoredReport>(); // the content this consumer holds: live reports' only
  await readUpTo(kafka, topic, eventsEnd, (message) => {
    const decoded = decodeEvent(message.value ?? Buffer.alloc(0));
    if (!decoded.ok) return; // invalid records are skipped, as the service does
    // The CloudEvents distributed-tracing attributes are W3C trace context: continue that trace.
    const span = tracer.startSpan(
      `process ${decoded.event.type}`,
      { kind: SpanKind.CONSUMER },
      propagator.extract(ROOT_CONTEXT, decoded.event, defaultTextMapGetter),
    );
    const change = evolve(state, decoded.event);
    if (change.kind === 'created') {
      const { report } = change;
      const key = isSealedReport(report) ? keys.get(report.sealed.key) : undefined;
      const opened = isSealedReport(report)
        ? key &&
          openContent(report.sealed, key.secret, {
            id: change.id,
            ...(report.expectedversion === undefined ? {} : { expectedversion: report.expectedversion }),
          })
        : report;
      if (opened) names.set(change.id, opened);
    }
    if (change.kind === 'deleted') names.delete(change.id); // the order to forget
    span.end();
  });
  // The state digest of `reports replay`: a live report's line is the SHA-256 of its content, which the key topic keeps beside the key.
  const digest = createHash('sha256')
    .update(canonicalState(state, ({ sealed }) => keys.get(sealed.key)?.digest))
    .digest('hex');
  return { reports: state, names, digest };
}

// node dist/test/examples/fold-topic.js 127.0.0.1:9092 reports.events
if (process.argv[1]?.endsWith('fold-topic.js')) {
  const [brokers = '127.0.0.1:9092', topic = 'reports.events'] = process.argv.slice(2);
  const { reports, names, digest } = await foldTopic(brokers.split(','), topic);
  console.log(`live reports: ${reports.size} (${names.size} with their names)\nstate digest: sha256:${digest}`);
}
