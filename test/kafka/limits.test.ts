// Permanent refusals are not outages, and the topic's durability settings are checked at start.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { checkTopicConfig, createTopicsSettled, minInsyncReplicasFor } from '../../src/log/kafka/topic.js';
import { kafkaEnv, startKafkaServer, uniqueTopic, withAdmin, withKafka } from '../helpers/kafka.js';
import { startTestServer } from '../helpers/server.js';

const KEEP_FOREVER = [
  { name: 'retention.ms', value: '-1' },
  { name: 'retention.bytes', value: '-1' },
  { name: 'cleanup.policy', value: 'delete' },
];

withKafka('limits', (brokers) => {
  const limits = suite('kafka: record size and durability settings');

  limits(
    'an event larger than the topic max.message.bytes is refused before it is sent with 413 naming the limit; readiness is unchanged',
    async () => {
      const topic = uniqueTopic('small');
      await withAdmin(brokers, (admin) =>
        createTopicsSettled(admin, {
          topics: [
            {
              topic,
              numPartitions: 1,
              replicationFactor: 1,
              configEntries: [...KEEP_FOREVER, { name: 'max.message.bytes', value: '20000' }],
            },
          ],
        }),
      );
      const server = await startKafkaServer(
        brokers,
        { REPORTS_NAME_MAX_CHARS: '1048576', REPORTS_BODY_LIMIT: '8mb' },
        topic,
      );
      try {
        const big = await server.request('/reports', {
          method: 'POST',
          json: JSON.stringify({ id: 1, name: 'x'.repeat(50_000) }),
        });
        assert.is(big.status, 413);
        const { message } = (await big.json()) as { message: string };
        assert.match(message, /more than the \d+ bytes the event log accepts/);
        assert.ok(Number(/the (\d+) bytes/.exec(message)?.[1]) < 20000);
        assert.is((await server.request('/readyz')).status, 200);
        const small = await server.request('/reports', {
          method: 'POST',
          json: JSON.stringify({ id: 2, name: 'fits' }),
        });
        assert.is(small.status, 200);
        // Many appends at once near the limit travel in several produce requests, not one refused batch
        // (a sealed name takes 4 bytes of the event every 3 characters: 14,000 characters, about 18,700 bytes).
        const name = 'y'.repeat(14_000);
        const statuses = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            server
              .request('/reports', { method: 'POST', json: JSON.stringify({ id: 10 + i, name }) })
              .then((r) => r.status),
          ),
        );
        assert.equal(statuses, Array(8).fill(200));
        assert.is((await server.request('/readyz')).status, 200);
      } finally {
        await server.dispose();
      }
    },
  );

  limits('a topic that allows unclean leader election is refused at start with a line naming the setting', async () => {
    const topic = uniqueTopic('unclean');
    await withAdmin(brokers, (admin) =>
      createTopicsSettled(admin, {
        topics: [
          {
            topic,
            numPartitions: 1,
            replicationFactor: 1,
            configEntries: [...KEEP_FOREVER, { name: 'unclean.leader.election.enable', value: 'true' }],
          },
        ],
      }),
    );
    let message = '';
    try {
      const server = await startTestServer(kafkaEnv(brokers, topic));
      await server.dispose();
    } catch (error) {
      message = error instanceof Error ? error.message : String(error);
    }
    assert.match(message, /unclean\.leader\.election\.enable=true/);
    assert.match(message, /--add-config unclean\.leader\.election\.enable=false/);
  });

  limits(
    'min.insync.replicas for a new topic is 2 from 3 replicas on, one less than the replicas below, at least 1',
    () => {
      assert.equal([1, 2, 3, 5].map(minInsyncReplicasFor), [1, 1, 2, 2]);
    },
  );

  limits(
    'a replicated topic with min.insync.replicas=1 starts with a warning naming the fix (one broker here: checked on the settings)',
    () => {
      const settings = new Map([
        ['retention.ms', '-1'],
        ['retention.bytes', '-1'],
        ['cleanup.policy', 'delete'],
        ['min.insync.replicas', '1'],
        ['max.message.bytes', '1048588'],
      ]);
      const { warnings, maxMessageBytes } = checkTopicConfig('t', settings, 3);
      assert.is(maxMessageBytes, 1048588);
      assert.is(warnings.length, 1);
      assert.match(warnings[0] ?? '', /min\.insync\.replicas=2/);
      assert.equal(checkTopicConfig('t', settings, 1).warnings, []);
    },
  );

  limits.run();
});
