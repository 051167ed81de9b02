// The topic contract's consumer example (docs/topic-contract.md) folds a real topic to the same digest
// as `reports replay`, and continues the trace of each traced write; the page quotes this very file.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { stateDigest } from '../../src/projection/fold-log.js';
import { startKafkaServer, uniqueTopic, withKafka } from '../helpers/kafka.js';
import { foldTopic } from './fold-topic.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

const readme = suite('docs/topic-contract.md consumer example');
readme('quotes test/examples/fold-topic.ts verbatim', async () => {
  const [text, source] = await Promise.all([readFile(`${root}docs/topic-contract.md`, 'utf8'), readFile(`${root}test/examples/fold-topic.ts`, 'utf8')]);
  assert.ok(text.includes(source.trim()), 'docs/topic-contract.md does not contain the current test/examples/fold-topic.ts');
});
readme.run();

withKafka('consumer example', (brokers) => {
  const consumer = suite('fold-topic consumer');
  consumer('folds the topic to the digest of the service read model', async () => {
    const topic = uniqueTopic('consumer');
    const server = await startKafkaServer(brokers, {}, topic);
    try {
      for (let id = 1; id <= 30; id += 1) {
        const response = await server.request('/reports', { method: 'POST', json: `{"id": ${id}, "name": "r${id}"${id % 3 === 0 ? ', "tag": "t"' : ''}}` });
        assert.is(response.status, 200);
      }
      for (let id = 1; id <= 30; id += 4) assert.is((await server.request(`/reports/${id}`, { method: 'DELETE' })).status, 204);
      const { reports, digest } = await foldTopic([brokers], topic);
      assert.is(reports.size, server.projector.model.reports.size);
      assert.is(digest, stateDigest(server.projector.model.reports));
    } finally {
      await server.dispose();
    }
  });

  consumer('continues the trace of a traced write in the span that folds its event', async () => {
    const topic = uniqueTopic('consumer-trace');
    const server = await startKafkaServer(brokers, {}, topic);
    const [traceId, parentId] = ['5c3e1f0a9b8d7c6e5f4a3b2c1d0e9f8a', '1a2b3c4d5e6f7a8b'];
    try {
      assert.is((await server.request('/reports', { method: 'POST', json: '{"id": 5, "name": "traced"}', headers: { traceparent: `00-${traceId}-${parentId}-01` } })).status, 200);
      assert.is((await server.request('/reports', { method: 'POST', json: '{"id": 6, "name": "untraced"}' })).status, 200);
    } finally {
      await server.dispose();
    }
    const exporter = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('consumer-test');
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
