// The key topic on a real broker: created when missing with settings derived from the erasure
// bound; an existing one that is not compacted, expires keys, or would keep a destroyed key longer
// than the bound is refused at start with one line naming the topic and the setting.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import kafkajs from 'kafkajs';
import { keyIdText } from '../../src/keys/key-store.js';
import { partitionOfKey } from '../../src/log/kafka/key-partition.js';
import { readCleanerSettings } from '../../src/log/kafka/key-topic.js';
import { KAFKA_CLEANER_DEFAULTS } from '../../src/log/kafka/key-topic-settings.js';
import { openTestKeyStore } from '../helpers/kafka-keys.js';
import { uniqueTopic, withAdmin, withKafka } from '../helpers/kafka.js';
import { createTopicsSettled } from '../../src/log/kafka/topic.js';

/** The message a start on `topic` fails with (the store must not open). */
async function refusal(brokers: string, topic: string, env: Record<string, string> = {}): Promise<string> {
  try {
    const { store } = await openTestKeyStore(brokers, topic, env);
    await store.close();
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  throw new Error('the key store opened');
}

async function createTopic(
  brokers: string,
  topic: string,
  config: Record<string, string>,
  numPartitions = 1,
): Promise<void> {
  await withAdmin(brokers, (admin) =>
    createTopicsSettled(admin, {
      topics: [
        {
          topic,
          numPartitions,
          replicationFactor: 1,
          configEntries: Object.entries(config).map(([name, value]) => ({ name, value })),
        },
      ],
    }),
  );
}

const EVENT_TOPIC_CONFIG = { 'retention.ms': '-1', 'retention.bytes': '-1', 'cleanup.policy': 'delete' };

const partitionCount = async (brokers: string, topic: string) =>
  withAdmin(
    brokers,
    async (admin) => (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0]?.partitions.length,
  );

const deleteTopic = (brokers: string, topic: string) =>
  withAdmin(brokers, (admin) => admin.deleteTopics({ topics: [topic] }));

withKafka('key topic', (brokers) => {
  const topic = suite('kafka: the key topic');

  topic(
    'is created when missing with the partitions of the event topic and compaction bounded by REPORTS_KEY_ERASURE_BOUND_MS',
    async () => {
      const name = uniqueTopic('keys-created');
      const { store } = await openTestKeyStore(brokers, name, {
        REPORTS_TOPIC_PARTITIONS: '5',
        REPORTS_KEY_ERASURE_BOUND_MS: '20000',
      });
      // The test broker's cleaner looks every second (test/broker/kafka-broker.sh): 10 s lag + 1 s + 1 s of file deletion.
      assert.is(store.erasureWithinMs, 12_000);
      await store.close();
      await withAdmin(brokers, async (admin) => {
        assert.is((await admin.fetchTopicMetadata({ topics: [name] })).topics[0]?.partitions.length, 5);
        assert.is(
          (await admin.fetchTopicMetadata({ topics: [`${name}.events`] })).topics[0]?.partitions.length,
          5,
          'the event topic, created first',
        );
        const names = [
          'cleanup.policy',
          'retention.ms',
          'max.compaction.lag.ms',
          'segment.ms',
          'min.cleanable.dirty.ratio',
          'delete.retention.ms',
          'file.delete.delay.ms',
          'unclean.leader.election.enable',
        ];
        const described = await admin.describeConfigs({
          includeSynonyms: false,
          resources: [{ type: kafkajs.ConfigResourceTypes.TOPIC, name, configNames: names }],
        });
        const config = Object.fromEntries(
          (described.resources[0]?.configEntries ?? []).map((entry) => [entry.configName, entry.configValue]),
        );
        assert.equal(config, {
          'cleanup.policy': 'compact',
          'retention.ms': '-1',
          'max.compaction.lag.ms': '10000',
          'segment.ms': '5000',
          'min.cleanable.dirty.ratio': '0.01',
          'delete.retention.ms': '5000',
          'file.delete.delay.ms': '1000',
          'unclean.leader.election.enable': 'false',
        });
      });
      await deleteTopic(brokers, name);
    },
  );

  topic(
    'is created with the partitions of an existing event topic, whatever REPORTS_TOPIC_PARTITIONS says',
    async () => {
      const name = uniqueTopic('keys-following');
      await createTopic(brokers, `${name}.events`, EVENT_TOPIC_CONFIG, 4);
      const { store, logText } = await openTestKeyStore(brokers, name, { REPORTS_TOPIC_PARTITIONS: '2' });
      await store.close();
      assert.is(await partitionCount(brokers, name), 4);
      assert.not.match(logText(), /other replicas|partitions and topic/);
      await deleteTopic(brokers, name);
      await deleteTopic(brokers, `${name}.events`);
    },
  );

  topic(
    'an existing key topic with other partitions than the event topic is used, with a warning naming both',
    async () => {
      const name = uniqueTopic('keys-unmatched');
      await createTopic(brokers, `${name}.events`, EVENT_TOPIC_CONFIG, 3);
      await createTopic(brokers, name, {
        'cleanup.policy': 'compact',
        'max.compaction.lag.ms': '30000',
        'segment.ms': '10000',
        'file.delete.delay.ms': '0',
      });
      const { store, logText } = await openTestKeyStore(brokers, name, { REPORTS_KEY_ERASURE_BOUND_MS: '60000' });
      await store.close();
      assert.match(
        logText(),
        new RegExp(
          `key topic ${name.replaceAll('.', '\\.')} has 1 partition and topic ${name.replaceAll('.', '\\.')}\\.events 3 partitions`,
        ),
      );
      await deleteTopic(brokers, name);
      await deleteTopic(brokers, `${name}.events`);
    },
  );

  topic('a key topic that is not compacted is refused, naming cleanup.policy', async () => {
    const name = uniqueTopic('keys-delete');
    await createTopic(brokers, name, { 'cleanup.policy': 'delete', 'retention.ms': '-1' });
    const message = await refusal(brokers, name);
    assert.match(message, new RegExp(`key topic ${name.replaceAll('.', '\\.')} has cleanup\\.policy=delete`));
    assert.not.match(message, /\n/);
    await deleteTopic(brokers, name);
  });

  topic('one that also deletes with finite retention is refused, naming retention.ms', async () => {
    const name = uniqueTopic('keys-expiring');
    await createTopic(brokers, name, {
      'cleanup.policy': 'compact,delete',
      'retention.ms': '604800000',
      'max.compaction.lag.ms': '10000',
    });
    assert.match(await refusal(brokers, name, { REPORTS_KEY_ERASURE_BOUND_MS: '60000' }), /retention\.ms=604800000/);
    await deleteTopic(brokers, name);
  });

  topic('one whose max.compaction.lag.ms would keep a destroyed key past the bound is refused, naming it', async () => {
    const name = uniqueTopic('keys-slow');
    await createTopic(brokers, name, { 'cleanup.policy': 'compact', 'max.compaction.lag.ms': '86400000' });
    const message = await refusal(brokers, name, { REPORTS_KEY_ERASURE_BOUND_MS: '20000' });
    assert.match(
      message,
      new RegExp(`key topic ${name.replaceAll('.', '\\.')} has max\\.compaction\\.lag\\.ms=86400000`),
    );
    assert.match(message, /longer than REPORTS_KEY_ERASURE_BOUND_MS=20000/);
    assert.not.match(message, /\n/);
    await deleteTopic(brokers, name);
  });

  topic('an existing key topic with fitting settings is used as it is', async () => {
    const name = uniqueTopic('keys-own');
    await createTopic(brokers, name, {
      'cleanup.policy': 'compact',
      'max.compaction.lag.ms': '30000',
      'segment.ms': '10000',
      'file.delete.delay.ms': '0',
    });
    const { store } = await openTestKeyStore(brokers, name, { REPORTS_KEY_ERASURE_BOUND_MS: '60000' });
    assert.is(store.erasureWithinMs, 30_000 + 1000);
    await store.close();
    await deleteTopic(brokers, name);
  });

  topic(
    'a key topic holding a key outside its partition (its partition count changed) is refused at start',
    async () => {
      const name = uniqueTopic('keys-moved');
      const { store } = await openTestKeyStore(brokers, name);
      await store.close();
      const id = keyIdText(Buffer.alloc(16, 5));
      const wrong = (partitionOfKey(id, 3) + 1) % 3;
      const kafka = new kafkajs.Kafka({
        clientId: 'key-topic-tests',
        brokers: [brokers],
        logLevel: kafkajs.logLevel.NOTHING,
      });
      const producer = kafka.producer();
      await producer.connect();
      await producer.send({ topic: name, messages: [{ key: id, value: null, partition: wrong }] });
      await producer.disconnect();
      const message = await refusal(brokers, name);
      assert.match(
        message,
        new RegExp(
          `key topic ${name.replaceAll('.', '\\.')} has a key at partition ${wrong} offset 0 that belongs in partition ${partitionOfKey(id, 3)}`,
        ),
      );
      assert.not.match(message, /\n/);
      await deleteTopic(brokers, name);
    },
  );

  topic(
    "the brokers' log cleaner settings are read, and Kafka's defaults assumed with a warning when they cannot be",
    async () => {
      await withAdmin(brokers, async (admin) => {
        const ids = (await admin.describeCluster()).brokers.map((broker) => broker.nodeId);
        assert.equal(await readCleanerSettings(admin, ids), { cleaner: { enabled: true, backoffMs: 1000 } });
        const unknown = await readCleanerSettings(admin, [9999]);
        assert.equal(unknown.cleaner, KAFKA_CLEANER_DEFAULTS);
        assert.match(unknown.warning ?? '', /assuming log\.cleaner\.enable=true and log\.cleaner\.backoff\.ms=15000/);
      });
    },
  );

  topic.run();
});
