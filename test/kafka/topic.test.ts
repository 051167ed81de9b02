// The topic: created with settings that keep history forever; an existing topic that would lose
// history (finite retention, compaction) is refused with a message naming the setting.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import kafkajs from 'kafkajs';
import { kafkaEnv, startKafkaServer, uniqueTopic, withAdmin, withKafka } from '../helpers/kafka.js';
import { startTestServer } from '../helpers/server.js';
import { openedReport } from '../helpers/opened.js';
import { createTopicsSettled } from '../../src/log/kafka/topic.js';

async function startError(env: Record<string, string>): Promise<string> {
  try {
    const server = await startTestServer(env);
    await server.dispose();
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  throw new Error('the server started');
}

withKafka('topic', (brokers) => {
  const topic = suite('kafka: the topic');

  topic('is created when missing with the configured partitions, infinite retention and delete policy', async () => {
    const name = uniqueTopic('created');
    const server = await startKafkaServer(brokers, { REPORTS_TOPIC_PARTITIONS: '5' }, name);
    await server.dispose();
    await withAdmin(brokers, async (admin) => {
      const metadata = await admin.fetchTopicMetadata({ topics: [name] });
      assert.is(metadata.topics[0]?.partitions.length, 5);
      const described = await admin.describeConfigs({
        includeSynonyms: false,
        resources: [{ type: kafkajs.ConfigResourceTypes.TOPIC, name, configNames: ['retention.ms', 'cleanup.policy'] }],
      });
      const config = Object.fromEntries(
        (described.resources[0]?.configEntries ?? []).map((entry) => [entry.configName, entry.configValue]),
      );
      assert.equal(config, { 'retention.ms': '-1', 'cleanup.policy': 'delete' });
      await admin.deleteTopics({ topics: [name] });
    });
  });

  topic('an existing topic with finite retention is refused', async () => {
    const name = uniqueTopic('finite');
    await withAdmin(brokers, (admin) =>
      createTopicsSettled(admin, {
        topics: [
          {
            topic: name,
            numPartitions: 1,
            replicationFactor: 1,
            configEntries: [{ name: 'retention.ms', value: '604800000' }],
          },
        ],
      }),
    );
    const message = await startError(kafkaEnv(brokers, name) as Record<string, string>);
    assert.match(message, /retention\.ms=604800000/);
    assert.match(message, new RegExp(name.replaceAll('.', '\\.')));
    await withAdmin(brokers, (admin) => admin.deleteTopics({ topics: [name] }));
  });

  topic('an existing compacted topic is refused', async () => {
    const name = uniqueTopic('compacted');
    await withAdmin(brokers, (admin) =>
      createTopicsSettled(admin, {
        topics: [
          {
            topic: name,
            numPartitions: 1,
            replicationFactor: 1,
            configEntries: [
              { name: 'cleanup.policy', value: 'compact' },
              { name: 'retention.ms', value: '-1' },
            ],
          },
        ],
      }),
    );
    const message = await startError(kafkaEnv(brokers, name) as Record<string, string>);
    assert.match(message, /cleanup\.policy=compact/);
    await withAdmin(brokers, (admin) => admin.deleteTopics({ topics: [name] }));
  });

  topic('an existing topic with the right settings is used as it is, history included', async () => {
    const name = uniqueTopic('reused');
    const first = await startKafkaServer(brokers, {}, name);
    assert.is((await first.request('/reports', { method: 'POST', json: '{"id": 42, "name": "kept"}' })).status, 200);
    await first.dispose();
    const second = await startKafkaServer(brokers, {}, name);
    assert.equal(await openedReport(second.projector.model.reports, second.keys, '42'), { name: 'kept' });
    assert.is((await second.request('/reports', { method: 'POST', json: '{"id": 42, "name": "other"}' })).status, 409);
    await second.dispose();
    await withAdmin(brokers, (admin) => admin.deleteTopics({ topics: [name] }));
  });

  topic('events carry the report id as key and the CloudEvents content-type header', async () => {
    const name = uniqueTopic('wire');
    const server = await startKafkaServer(brokers, {}, name);
    assert.is(
      (
        await server.request('/reports', {
          method: 'POST',
          json: '{"id": 9007199254740993, "name": "wire", "tag": "t"}',
        })
      ).status,
      200,
    );
    assert.is((await server.request('/reports/9007199254740993', { method: 'DELETE' })).status, 204);
    await server.dispose();
    const kafka = new kafkajs.Kafka({ clientId: 'wire-test', brokers: [brokers], logLevel: kafkajs.logLevel.NOTHING });
    const consumer = kafka.consumer({ groupId: `wire-${name}`, maxWaitTimeInMs: 100 });
    const seen: { key: string; type: string; headers: string; data: unknown; subject: string }[] = [];
    await consumer.connect();
    await consumer.subscribe({ topic: name, fromBeginning: true });
    await new Promise<void>((resolve) => {
      void consumer.run({
        eachMessage: ({ message }) => {
          const event = JSON.parse(message.value?.toString() ?? '{}') as {
            type: string;
            data: unknown;
            subject: string;
          };
          seen.push({
            key: message.key?.toString() ?? '',
            type: event.type,
            headers: message.headers?.['content-type']?.toString() ?? '',
            data: event.data,
            subject: event.subject,
          });
          if (seen.length === 2) resolve();
          return Promise.resolve();
        },
      });
    });
    await consumer.disconnect();
    // The name and tag travel sealed, under a key the delete destroyed.
    const [create] = seen;
    const sealed = (create?.data as { sealed?: { key: string; box: string } } | undefined)?.sealed;
    assert.ok(
      sealed !== undefined && /^[A-Za-z0-9_-]+$/.test(sealed.key) && sealed.box.length >= 24,
      'the create carries sealed content',
    );
    assert.not.ok(JSON.stringify(create).includes('wire'), 'no name in the clear');
    assert.equal(seen, [
      {
        key: '9007199254740993',
        type: 'ReportCreated',
        headers: 'application/cloudevents+json',
        data: { id: '9007199254740993', sealed },
        subject: '9007199254740993',
      },
      {
        key: '9007199254740993',
        type: 'ReportDeleted',
        headers: 'application/cloudevents+json',
        data: { id: '9007199254740993' },
        subject: '9007199254740993',
      },
    ]);
    await withAdmin(brokers, (admin) => admin.deleteTopics({ topics: [name] }));
  });

  topic.run();
});
