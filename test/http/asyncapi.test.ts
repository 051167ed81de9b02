// GET /asyncapi.json: the AsyncAPI 3.1 document of the topic, served without a token, clean under
// the official parser (no errors, no warnings), with the payload schemas of projections/events.ts;
// and the records the service really writes (file log and Kafka) validate against it.
import type { AsyncAPIDocumentInterface } from '@asyncapi/parser';
import kafkajs from 'kafkajs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { eventsJsonSchema } from '../../projections/json-schema.js';
import {
  describeDiagnostics,
  messageValidators,
  parseAsyncApi,
  recordProblems,
  withSeverity,
  type WireRecord,
} from '../helpers/asyncapi.js';
import { startKafkaServer, uniqueTopic, withAdmin, withKafka } from '../helpers/kafka.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { reportBody, serverSuite } from './requests.js';
import { expectJson, expectNoContent, expectReport } from './responses.js';
import { readRecords } from '../../src/log/record-batches.js';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

/** The value at `path` inside a parsed JSON document, or undefined. */
function at(document: unknown, ...path: string[]): unknown {
  let node = document;
  for (const key of path)
    node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[key] : undefined;
  return node;
}

/** The messages of the event topic's channel (the key topic's are in asyncapi-keys.test.ts). */
const eventMessages = (document: AsyncAPIDocumentInterface | undefined) =>
  document?.channels().get('reportEvents')?.messages().all() ?? [];

const fetchDocument = async (server: TestServer) =>
  expectJson(await server.request('/asyncapi.json', { token: null }), 200);

async function validatorsOf(document: unknown) {
  const { document: parsed, diagnostics } = await parseAsyncApi(document);
  assert.ok(parsed, describeDiagnostics(diagnostics));
  return messageValidators(parsed);
}

/** Writes a create (traced) and a delete (untraced) of `id` through the HTTP interface. */
async function writeBoth(server: TestServer, id: string): Promise<void> {
  await expectReport(
    await server.request('/reports', {
      method: 'POST',
      json: reportBody(id, 'wire', 't'),
      headers: { traceparent: TRACEPARENT, tracestate: 'congo=t61rcWkgMzE' },
    }),
    { name: 'wire', tag: 't' },
  );
  await expectNoContent(await server.request(`/reports/${id}`, { method: 'DELETE' }));
}

const served = serverSuite('GET /asyncapi.json', (env) => startTestServer(env));

served('is served as JSON without a token', async ({ server }) => {
  const document = await fetchDocument(server);
  assert.is(at(document, 'asyncapi'), '3.1.0');
});

served('has no errors under the official AsyncAPI parser', async ({ server }) => {
  const { document, diagnostics } = await parseAsyncApi(await fetchDocument(server));
  const errors = withSeverity(diagnostics, 'error');
  assert.is(errors.length, 0, describeDiagnostics(errors));
  assert.ok(document);
});

served('has no warnings under the official AsyncAPI parser', async ({ server }) => {
  const { diagnostics } = await parseAsyncApi(await fetchDocument(server));
  const warnings = withSeverity(diagnostics, 'warning');
  assert.is(warnings.length, 0, describeDiagnostics(warnings));
});

served('would fail the parser if the document were broken (the parser is live)', async ({ server }) => {
  const document = (await fetchDocument(server)) as Record<string, unknown>;
  const broken = {
    ...document,
    operations: { sendReportCreated: { action: 'publish', channel: { $ref: '#/channels/nowhere' } } },
  };
  const { diagnostics } = await parseAsyncApi(broken);
  assert.ok(withSeverity(diagnostics, 'error').length > 0, describeDiagnostics(diagnostics));
});

served(
  'describes a channel at the topic with both events, and one at the key topic, sent by the service',
  async ({ server }) => {
    const { document } = await parseAsyncApi(await fetchDocument(server));
    const channels = document?.channels().all() ?? [];
    assert.equal(
      channels.map((channel) => channel.address()),
      ['reports.events', 'reports.events.keys'],
    );
    assert.equal(
      eventMessages(document)
        .map((message) => message.name())
        .sort(),
      ['ReportCreated', 'ReportDeleted'],
    );
    assert.equal(
      document
        ?.operations()
        .all()
        .map((operation) => [
          operation.action(),
          operation
            .messages()
            .all()
            .map((m) => m.name()),
        ]),
      [
        ['send', ['ReportCreated']],
        ['send', ['ReportDeleted']],
        ['send', ['ContentKey', 'ContentKeyDestroyed', 'SegmentRoll']],
      ],
    );
  },
);

served('takes the payload schemas from the same definitions as events.schema.json', async ({ server }) => {
  const document = await fetchDocument(server);
  const { $defs } = eventsJsonSchema() as { $defs: Record<string, unknown> };
  assert.equal(at(document, 'components', 'schemas', 'ReportCreated'), $defs['ReportCreated']);
  assert.equal(at(document, 'components', 'schemas', 'ReportDeleted'), $defs['ReportDeleted']);
});

served('states the structured-mode content type, its Kafka header and the key', async ({ server }) => {
  const { document } = await parseAsyncApi(await fetchDocument(server));
  for (const message of eventMessages(document)) {
    assert.is(message.contentType(), 'application/cloudevents+json');
    assert.equal(message.headers()?.required(), ['content-type']);
    assert.is(message.headers()?.properties()?.['content-type']?.const(), 'application/cloudevents+json');
    const key = message.bindings().get('kafka')?.value<{ key: { type: string; pattern: string } }>().key;
    assert.is(key?.type, 'string');
    assert.ok(new RegExp(key?.pattern ?? '^$').test('-9223372036854775808'));
    assert.not.ok(new RegExp(key?.pattern ?? '^$').test('007'));
  }
});

served('documents traceparent and tracestate as optional envelope attributes', async ({ server }) => {
  const { document } = await parseAsyncApi(await fetchDocument(server));
  for (const message of eventMessages(document)) {
    const payload = message.payload();
    assert.ok(payload?.properties()?.['traceparent'], `${message.name()} has no traceparent`);
    assert.ok(payload?.properties()?.['tracestate'], `${message.name()} has no tracestate`);
    assert.not.ok(payload?.required()?.includes('traceparent'));
  }
});

served('states the fold rules in the descriptions', async ({ server }) => {
  const document = await fetchDocument(server);
  assert.match(
    String(at(document, 'info', 'description')),
    /`ReportCreated` for an id that exists is void; `ReportDeleted` for an id that does not exist is void/,
  );
  assert.match(
    String(at(document, 'components', 'messages', 'ReportCreated', 'description')),
    /void when the id exists already/,
  );
  assert.match(
    String(at(document, 'components', 'messages', 'ReportDeleted', 'description')),
    /void when the id does not exist/,
  );
});

served('has examples that validate against their own message', async ({ server }) => {
  const { document } = await parseAsyncApi(await fetchDocument(server));
  assert.ok(document);
  const validators = messageValidators(document);
  for (const message of eventMessages(document)) {
    const [example] = message.examples().all();
    const value = example?.payload();
    const record: WireRecord = {
      key: String(at(value, 'subject')),
      headers: example?.headers() as Record<string, string>,
      value,
    };
    assert.equal(recordProblems(validators, record), [], message.name());
  }
});

served('validates the events the service writes to the file log', async ({ server }) => {
  const validators = await validatorsOf(await fetchDocument(server));
  await writeBoth(server, '9007199254740993');
  let records = 0;
  for await (const record of readRecords(server.log, new Map())) {
    const wire = {
      key: record.key,
      headers: { 'content-type': 'application/cloudevents+json' },
      value: JSON.parse(record.value.toString('utf8')) as unknown,
    };
    assert.equal(recordProblems(validators, wire), []);
    records += 1;
  }
  assert.is(records, 2);
});

served('rejects a record that breaks the contract (the validation is live)', async ({ server }) => {
  const validators = await validatorsOf(await fetchDocument(server));
  const event = {
    specversion: '1.0',
    id: 'x',
    source: 's',
    type: 'ReportDeleted',
    subject: '1',
    time: '2024-01-01T00:00:00Z',
    datacontenttype: 'application/json',
    data: { id: '1' },
  };
  const good = { key: '1', headers: { 'content-type': 'application/cloudevents+json' }, value: event };
  assert.equal(recordProblems(validators, good), []);
  assert.ok(recordProblems(validators, { ...good, key: '01' }).length > 0);
  assert.ok(recordProblems(validators, { ...good, headers: { 'content-type': 'application/json' } }).length > 0);
  assert.ok(recordProblems(validators, { ...good, value: { ...event, traceparent: 'not-a-traceparent' } }).length > 0);
  assert.ok(recordProblems(validators, { ...good, value: { ...event, data: { id: '1', name: 'x' } } }).length > 0);
});

served.run();

/** Every record of `topic` as a consumer reads it: key, headers and the parsed value. */
async function consumeTopic(brokers: string, topic: string, count: number): Promise<WireRecord[]> {
  const kafka = new kafkajs.Kafka({
    clientId: 'asyncapi-test',
    brokers: [brokers],
    logLevel: kafkajs.logLevel.NOTHING,
  });
  const consumer = kafka.consumer({ groupId: `asyncapi-${topic}`, maxWaitTimeInMs: 100 });
  const records: WireRecord[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve) => {
      void consumer.run({
        eachMessage: ({ message }) => {
          const headers = Object.fromEntries(
            Object.entries(message.headers ?? {}).map(([name, value]) => [name, String(value)]),
          );
          records.push({
            key: message.key?.toString('utf8') ?? '',
            headers,
            value: JSON.parse(message.value?.toString('utf8') ?? 'null') as unknown,
          });
          if (records.length === count) resolve();
          return Promise.resolve();
        },
      });
    });
  } finally {
    await consumer.disconnect();
  }
  return records;
}

withKafka('AsyncAPI against the topic', (brokers) => {
  const wire = suite('AsyncAPI document against Kafka records');

  wire('names the configured topic and validates every record the service produced', async () => {
    const topic = uniqueTopic('asyncapi');
    const server = await startKafkaServer(brokers, {}, topic);
    let validators;
    try {
      const document = await fetchDocument(server);
      assert.equal(at(document, 'channels', 'reportEvents', 'address'), topic);
      validators = await validatorsOf(document);
      await writeBoth(server, '-42');
    } finally {
      await server.dispose();
    }
    const records = await consumeTopic(brokers, topic, 2);
    assert.equal(
      records.map((record) => [record.key, at(record.value, 'type'), at(record.value, 'traceparent')]),
      [
        ['-42', 'ReportCreated', TRACEPARENT],
        ['-42', 'ReportDeleted', undefined],
      ],
    );
    for (const record of records) assert.equal(recordProblems(validators, record), []);
    await withAdmin(brokers, (admin) => admin.deleteTopics({ topics: [topic] }));
  });

  wire.run();
});
