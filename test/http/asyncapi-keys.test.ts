// The key topic in the AsyncAPI document: a second channel at REPORTS_KEY_TOPIC, compacted, whose
// messages are a key (65 bytes), its tombstone and the roll records; the document says how to open
// sealed content with a key, and that only trusted consumers may read the topic; and the records the
// service really writes to the key topic validate against it.
import type { AsyncAPIDocumentInterface } from '@asyncapi/parser';
import kafkajs from 'kafkajs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { eventsJsonSchema } from '../../projections/json-schema.js';
import { loadConfig, type Env } from '../../src/config.js';
import { createAsyncApiDocument, topicFacts } from '../../src/http/asyncapi.js';
import { SERVICE_VERSION } from '../../src/version.js';
import { describeDiagnostics, messageValidators, parseAsyncApi, type MessageValidators } from '../helpers/asyncapi.js';
import { kafkaEnv, startKafkaServer, uniqueTopic, withAdmin, withKafka } from '../helpers/kafka.js';

async function parsed(env: Env = {}): Promise<AsyncAPIDocumentInterface> {
  const { document, diagnostics } = await parseAsyncApi(
    createAsyncApiDocument(topicFacts(loadConfig(env)), SERVICE_VERSION),
  );
  if (document === undefined) throw new Error(describeDiagnostics(diagnostics));
  return document;
}

/** One record of the key topic as a consumer reads it: its key, and its value's bytes (null: a tombstone). */
interface KeyRecord {
  readonly key: string;
  readonly value: Buffer | null;
}

/** The problems of `record` against the message of the key topic it is (empty: valid). */
function keyRecordProblems(validators: Map<string, MessageValidators>, { key, value }: KeyRecord): string[] {
  const name = value !== null ? 'ContentKey' : key === '~roll' ? 'SegmentRoll' : 'ContentKeyDestroyed';
  const message = validators.get(name) as MessageValidators;
  // Bytes as a string of one character a byte: what `format: binary` with a length says.
  const payload = value === null ? null : value.toString('latin1');
  const checks: [string, boolean][] = [
    ['key', message.key(key)],
    ['payload', message.payload(payload)],
    ['headers', message.headers({})],
  ];
  return checks.filter(([, valid]) => !valid).map(([part]) => `${name}: its ${part} does not fit`);
}

const document = suite('AsyncAPI: the key topic');

document(
  'is a second channel at REPORTS_KEY_TOPIC (<topic>.keys unless set), compacted, with its three records',
  async () => {
    const channel = (await parsed()).channels().get('contentKeys');
    assert.is(channel?.address(), 'reports.events.keys');
    assert.equal(
      channel
        ?.messages()
        .all()
        .map((message) => message.name()),
      ['ContentKey', 'ContentKeyDestroyed', 'SegmentRoll'],
    );
    assert.equal(channel?.bindings().get('kafka')?.value<{ topicConfiguration: unknown }>().topicConfiguration, {
      'cleanup.policy': ['compact'],
      'retention.ms': -1,
      'retention.bytes': -1,
    });
    const configured = await parsed(
      kafkaEnv('127.0.0.1:9092', 'billing.events', { REPORTS_KEY_TOPIC: 'billing.secrets' }),
    );
    assert.is(configured.channels().get('contentKeys')?.address(), 'billing.secrets');
  },
);

document('says how to open sealed content, and that only trusted consumers may read the keys', async () => {
  const parsedDocument = await parsed();
  const described = `${parsedDocument.info().description() ?? ''} ${parsedDocument.channels().get('contentKeys')?.description() ?? ''}`;
  for (const words of [
    'AES-256-GCM',
    'nonce 12 zero bytes',
    'ReportCreated\\n<data.id>\\n<expectedversion>',
    '0xFF',
    'openContent',
    'Only trusted consumers may read this topic',
  ]) {
    assert.ok(described.includes(words), `"${words}" is not in the descriptions`);
  }
  const { $defs } = eventsJsonSchema() as { $defs: Record<string, unknown> };
  assert.match(JSON.stringify($defs['ReportCreated']), 'key topic');
});

document('validates a key, a tombstone and a roll record, and refuses a value of another length', async () => {
  const validators = messageValidators(await parsed());
  const value = Buffer.concat([Buffer.from([1]), Buffer.alloc(64, 7)]);
  assert.equal(keyRecordProblems(validators, { key: 'A-tc-Q3-f4Efn6uZ5h_MmA', value }), []);
  assert.equal(keyRecordProblems(validators, { key: 'A-tc-Q3-f4Efn6uZ5h_MmA', value: null }), []);
  assert.equal(keyRecordProblems(validators, { key: '~roll', value: null }), []);
  assert.is(keyRecordProblems(validators, { key: 'AAAAAAAA', value: value.subarray(0, 64) }).length, 1);
  assert.is(keyRecordProblems(validators, { key: 'not/a key', value }).length, 1);
});

document.run();

withKafka('AsyncAPI against the key topic', (brokers) => {
  const wire = suite("AsyncAPI document against the key topic's records");

  wire('validates every record the service wrote to the key topic', async () => {
    const topic = uniqueTopic('asyncapi-keys');
    const server = await startKafkaServer(brokers, {}, topic);
    try {
      assert.is((await server.request('/reports', { method: 'POST', json: '{"id": 7, "name": "keyed"}' })).status, 200);
      assert.is((await server.request('/reports/7', { method: 'DELETE' })).status, 204);
    } finally {
      await server.dispose();
    }
    const kafka = new kafkajs.Kafka({
      clientId: 'asyncapi-keys-test',
      brokers: [brokers],
      logLevel: kafkajs.logLevel.NOTHING,
    });
    const consumer = kafka.consumer({ groupId: `asyncapi-keys-${topic}`, maxWaitTimeInMs: 100 });
    const records: KeyRecord[] = [];
    await consumer.connect();
    try {
      await consumer.subscribe({ topic: `${topic}.keys`, fromBeginning: true });
      await new Promise<void>((resolve) => {
        void consumer.run({
          eachMessage: ({ message }) => {
            records.push({ key: message.key?.toString('utf8') ?? '', value: message.value });
            if (records.length === 2) resolve();
            return Promise.resolve();
          },
        });
      });
    } finally {
      await consumer.disconnect();
    }
    const validators = messageValidators(await parsed(kafkaEnv(brokers, topic)));
    assert.equal(
      records.map((record) => keyRecordProblems(validators, record)),
      [[], []],
    );
    assert.equal(
      records.map((record) => record.value?.length ?? null),
      [65, null],
    );
    await withAdmin(brokers, (admin) => admin.deleteTopics({ topics: [topic, `${topic}.keys`] }));
  });

  wire.run();
});
