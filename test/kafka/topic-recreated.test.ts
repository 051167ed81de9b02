// The event topic deleted and created again under a running instance (an operator's mistake): the
// offsets its read model had reached are no longer in the topic. It retried the follow every
// second for ever, stayed ready, answered from a history the topic no longer held, and acknowledged
// writes it never folded. It now stops, exit 1, with a line saying why; a restart folds the topic
// as it is. The key topic likewise: its follower stopped, and the instance stayed ready answering
// 500 for keys it no longer found.
import { rm } from 'node:fs/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startChildServer } from '../helpers/child-server.js';
import { kafkaEnv, uniqueTopic, withAdmin, withKafka } from '../helpers/kafka.js';
import { tempDir } from '../helpers/server.js';

withKafka('the event topic created again', (brokers) => {
  const test = suite('kafka: the event topic deleted and created again under a running instance');

  /** Starts an instance, writes six reports, then deletes `recreated(topic)` and creates it again, empty. */
  async function recreateUnder(recreated: (topic: string) => string): Promise<{ stderr: string; fatal?: string }> {
    const topic = uniqueTopic('recreated');
    const dataDir = await tempDir('reports-recreated-');
    const server = await startChildServer({ ...kafkaEnv(brokers, topic), REPORTS_DATA_DIR: dataDir });
    try {
      await server.waitReady();
      for (let id = 1; id <= 6; id += 1) {
        const created = await server.request('/reports', { method: 'POST', json: { id, name: `report ${id}` } });
        assert.is(created.status, 200, await created.text());
      }
      await withAdmin(brokers, async (admin) => {
        await admin.deleteTopics({ topics: [recreated(topic)] });
        // Created again as a start of the service would: empty, its offsets from 0 again.
        for (;;) {
          const made = await admin
            .createTopics({
              topics: [
                { topic: recreated(topic), numPartitions: 3, configEntries: [{ name: 'retention.ms', value: '-1' }] },
              ],
              waitForLeaders: true,
            })
            .catch(() => false);
          if (made) break;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      });
      const exit = await server.waitExit(30_000);
      assert.equal(exit, { code: 1, signal: null });
      assert.match(server.stderr(), `of ${recreated(topic)} is no longer in the topic`);
      assert.match(server.stderr(), 'start it again');
      const fatal = server.lines().find((line) => line['level'] === 60)?.['msg'];
      return { stderr: server.stderr(), ...(typeof fatal === 'string' ? { fatal } : {}) };
    } finally {
      server.kill('SIGKILL');
      await withAdmin(brokers, (admin) => admin.deleteTopics({ topics: [topic, `${topic}.keys`] })).catch(
        () => undefined,
      );
      await rm(dataDir, { recursive: true, force: true });
    }
  }

  test('the event topic: stops the instance (exit 1) with a line saying why, instead of answering from a history that is gone', async () => {
    const { fatal } = await recreateUnder((topic) => topic);
    assert.is(fatal, 'the event log no longer holds what this process folded');
  });

  test('the key topic: stops the instance too, instead of answering 500 for every key it no longer finds', async () => {
    const { fatal } = await recreateUnder((topic) => `${topic}.keys`);
    assert.is(fatal, 'the key topic no longer holds the keys this process read');
  });

  test.run();
});
