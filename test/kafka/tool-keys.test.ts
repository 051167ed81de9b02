// The key topic as the tools read it (kafka-tool-keys.ts): a lookup answers until the tool closes
// its keys, a later lookup reads what was put and destroyed since, a topic without a key topic
// (written before erasure) holds no key until a server creates one, and a tool writes nothing.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openKafkaToolKeys } from '../../src/keys/kafka-tool-keys.js';
import { digestOf, keyStoreConfig, openTestKeyStore } from '../helpers/kafka-keys.js';
import { uniqueTopic, withAdmin, withKafka } from '../helpers/kafka.js';
import { memoryLogger } from '../helpers/server.js';

withKafka('tool keys', (brokers) => {
  const tool = suite<{ topics: string[] }>('kafka: the key topic as the tools read it', { topics: [] });
  tool.after(async ({ topics }) => {
    await withAdmin(brokers, (admin) => admin.deleteTopics({ topics }));
  });

  const open = (keyTopic: string) =>
    openKafkaToolKeys({
      config: keyStoreConfig(brokers, keyTopic),
      logger: memoryLogger().logger,
      writeTimeoutMs: 5000,
    });

  tool(
    'a lookup answers with every key put before it, and a later one with the keys put and destroyed since',
    async (context) => {
      const topic = uniqueTopic('tool-keys');
      context.topics.push(topic);
      const { store } = await openTestKeyStore(brokers, topic);
      const keys = await open(topic);
      try {
        const [first, second] = [store.mint(digestOf('first')), store.mint(digestOf('second'))];
        await store.put([first]);
        const before = await keys.lookup();
        assert.equal(before.get(first.id), first);
        await store.put([second]);
        await store.destroy([first.id]);
        const after = await keys.lookup();
        assert.equal(after.get(second.id), second);
        assert.is(after.get(first.id), undefined);
      } finally {
        await keys.close();
        await store.close();
      }
    },
  );

  tool(
    'a missing key topic holds no key and is not created; once a server creates it, a lookup finds its keys',
    async (context) => {
      const topic = uniqueTopic('tool-keys-missing');
      context.topics.push(topic);
      const keys = await open(topic);
      try {
        assert.is((await keys.lookup()).get(Buffer.alloc(16, 1)), undefined);
        assert.not.ok(
          (await withAdmin(brokers, (admin) => admin.listTopics())).includes(topic),
          'a tool never creates the key topic',
        );
        const { store } = await openTestKeyStore(brokers, topic);
        const key = store.mint(digestOf('later'));
        await store.put([key]).finally(() => store.close());
        assert.equal((await keys.lookup()).get(key.id), key);
      } finally {
        await keys.close();
      }
    },
  );

  tool(
    "opens no producer: followed past the time a store would roll its tombstone's segment, the key topic stays as it was",
    async (context) => {
      const topic = uniqueTopic('tool-keys-no-writes');
      context.topics.push(topic);
      // A short bound: a store that read the tombstone would write a roll record about 2.5 to 4.5 s after it.
      const { store } = await openTestKeyStore(brokers, topic, { REPORTS_KEY_ERASURE_BOUND_MS: '10000' });
      const key = store.mint(digestOf('destroyed'));
      await store.put([key]);
      await store.destroy([key.id]);
      await store.close();
      const records = () =>
        withAdmin(brokers, async (admin) =>
          (await admin.fetchTopicOffsets(topic)).reduce((sum, { high }) => sum + Number(high), 0),
        );
      const before = await records();
      const keys = await open(topic);
      try {
        assert.is((await keys.lookup()).get(key.id), undefined);
        await new Promise((resolve) => setTimeout(resolve, 6000));
        assert.is(await records(), before, 'a record was written to the key topic');
      } finally {
        await keys.close();
      }
    },
  );

  tool.run();
});
