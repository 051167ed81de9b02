// The topic contract's consumer example (docs/topic-contract.md) folds a real, sealed topic to the
// digest `reports replay` prints, opening live reports' names with the key topic and holding none
// of a deleted report's (nor of a live report whose key is not there); and continues the trace of
// each traced write. The page quotes this very file.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { replaySummary } from '../helpers/cli.js';
import { serverDigest } from '../helpers/digest.js';
import { created, deleted } from '../helpers/events.js';
import { kafkaEnv, startKafkaServer, uniqueTopic, withAdmin, withKafka } from '../helpers/kafka.js';
import { appendSealedToTopic } from '../helpers/sealed-history.js';
import { appendToTopic } from '../helpers/topic-history.js';
import { distinctive } from '../http/requests.js';
import { foldTopic } from './fold-topic.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

const readme = suite('docs/topic-contract.md consumer example');
readme('quotes test/examples/fold-topic.ts verbatim', async () => {
  const [text, source] = await Promise.all([
    readFile(`${root}docs/topic-contract.md`, 'utf8'),
    readFile(`${root}test/examples/fold-topic.ts`, 'utf8'),
  ]);
  assert.ok(
    text.includes(source.trim()),
    'docs/topic-contract.md does not contain the current test/examples/fold-topic.ts',
  );
});
readme.run();

withKafka('consumer example', (brokers) => {
  const consumer = suite<{ topics: string[] }>('fold-topic consumer', { topics: [] });
  consumer.after(async ({ topics }) => {
    await withAdmin(brokers, (admin) =>
      admin.deleteTopics({ topics: topics.flatMap((topic) => [topic, `${topic}.keys`]) }),
    );
  });
  const topicFor = (context: { topics: string[] }, prefix: string) => {
    const topic = uniqueTopic(prefix);
    context.topics.push(topic);
    return topic;
  };

  consumer(
    'folds a sealed topic to the digest `reports replay` prints, holding the names of live reports only',
    async (context) => {
      const topic = topicFor(context, 'consumer');
      const server = await startKafkaServer(brokers, {}, topic);
      const names = new Map<number, string>();
      try {
        for (let id = 1; id <= 30; id += 1) {
          names.set(id, distinctive(`r${id}`));
          const response = await server.request('/reports', {
            method: 'POST',
            json: `{"id": ${id}, "name": "${names.get(id)}"${id % 3 === 0 ? ', "tag": "t"' : ''}}`,
          });
          assert.is(response.status, 200);
        }
        for (let id = 1; id <= 30; id += 4)
          assert.is((await server.request(`/reports/${id}`, { method: 'DELETE' })).status, 204);
        const folded = await foldTopic([brokers], topic);
        assert.is(folded.reports.size, server.projector.model.reports.size);
        assert.is(`sha256:${folded.digest}`, await serverDigest(server));
        assert.is(folded.digest, (await replaySummary(kafkaEnv(brokers, topic))).digest);
        const held = JSON.stringify([...folded.names, ...folded.reports]);
        for (const [id, name] of names) {
          const deleted = (id - 1) % 4 === 0;
          assert.equal(
            folded.names.get(String(id)),
            deleted ? undefined : { name, ...(id % 3 === 0 ? { tag: 't' } : {}) },
          );
          if (deleted) assert.not.ok(held.includes(name), `the consumer holds the name of deleted report ${id}`);
        }
      } finally {
        await server.dispose();
      }
    },
  );

  consumer(
    'events written in the clear fold as before; a live report whose key is not there is held without its name',
    async (context) => {
      const topic = topicFor(context, 'consumer-mixed');
      await appendToTopic(brokers, topic, [
        created('1', 'written before erasure', 'old'),
        created('2', 'deleted before erasure'),
        deleted('2'),
      ]);
      await appendSealedToTopic(brokers, topic, [created('3', 'sealed'), created('4', 'key lost')], (keys, [, lost]) =>
        keys.destroy(lost ? [lost.id] : []),
      );
      const folded = await foldTopic([brokers], topic);
      assert.is(folded.digest, (await replaySummary(kafkaEnv(brokers, topic))).digest);
      assert.equal([...folded.names].sort(), [
        ['1', { name: 'written before erasure', tag: 'old' }],
        ['3', { name: 'sealed' }],
      ]);
      assert.equal([folded.reports.size, folded.reports.has('4')], [3, true]);
    },
  );

  consumer('continues the trace of a traced write in the span that folds its event', async (context) => {
    const topic = topicFor(context, 'consumer-trace');
    const server = await startKafkaServer(brokers, {}, topic);
    const [traceId, parentId] = ['5c3e1f0a9b8d7c6e5f4a3b2c1d0e9f8a', '1a2b3c4d5e6f7a8b'];
    try {
      assert.is(
        (
          await server.request('/reports', {
            method: 'POST',
            json: '{"id": 5, "name": "traced"}',
            headers: { traceparent: `00-${traceId}-${parentId}-01` },
          })
        ).status,
        200,
      );
      assert.is(
        (await server.request('/reports', { method: 'POST', json: '{"id": 6, "name": "untraced"}' })).status,
        200,
      );
    } finally {
      await server.dispose();
    }
    const exporter = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer(
      'consumer-test',
    );
    await foldTopic([brokers], topic, { tracer, propagator: new W3CTraceContextPropagator() });
    const spans = exporter.getFinishedSpans().filter((span) => span.name === 'process ReportCreated');
    assert.is(spans.length, 2);
    const continued = spans.filter((span) => span.spanContext().traceId === traceId);
    assert.is(continued.length, 1, 'exactly the traced event continues its trace');
    assert.is(continued[0]?.parentSpanContext?.spanId, parentId);
    assert.ok(continued[0]?.parentSpanContext?.isRemote);
  });
  consumer.run();
});
