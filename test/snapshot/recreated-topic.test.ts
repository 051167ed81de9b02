// On Kafka a snapshot is tied to the topic's history: a topic deleted and created again under the
// same name (same cluster, same name, so the same log identity) holds other records at the
// snapshot's positions, and the snapshot is not used.
import { rm } from 'node:fs/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { reports } from '../helpers/cli.js';
import { kafkaEnv, uniqueTopic, withAdmin, withKafka } from '../helpers/kafka.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';
import { deleteReport, postReport } from '../http/requests.js';

async function createReports(server: TestServer, ids: readonly number[]): Promise<void> {
  for (const id of ids) assert.is((await postReport(server, String(id), `report ${id}`)).status, 200);
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

async function deleteTopic(brokers: string, topic: string): Promise<void> {
  await withAdmin(brokers, async (admin) => {
    await admin.deleteTopics({ topics: [topic] });
    const deadline = Date.now() + 30_000;
    while ((await admin.listTopics()).includes(topic) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 200));
  });
}

withKafka('snapshots on a re-created topic', (brokers) => {
  const recreated = suite<{ dir: string; topic: string }>('a snapshot on a Kafka topic created again');
  recreated.before.each(async (context) => {
    context.dir = await tempDir('reports-recreated-');
    context.topic = uniqueTopic('recreated');
  });
  recreated.after.each(async ({ dir, topic }) => {
    await rm(dir, { recursive: true, force: true });
    await withAdmin(brokers, (admin) => admin.deleteTopics({ topics: [topic, `${topic}.keys`] })).catch(
      () => undefined,
    );
  });

  recreated('is ignored with a warning, and the new topic is folded from its start', async ({ dir, topic }) => {
    const env = kafkaEnv(brokers, topic, { REPORTS_DATA_DIR: dir });
    let server = await startTestServer(env, { dataDir: dir });
    await createReports(server, range(1001, 1009));
    await server.close();
    const { code, stderr } = await reports(['snapshot'], { env });
    assert.is(code, 0, stderr);
    // Both topics, as an operator starting anew under the same names does: the event topic alone
    // deleted, its key topic still holding keys, is refused (test/kafka/key-topic-lost.test.ts).
    await deleteTopic(brokers, topic);
    await deleteTopic(brokers, `${topic}.keys`);
    server = await startTestServer(env, { dataDir: dir });
    // Enough records that every partition of the new topic passes the snapshot's position.
    await createReports(server, range(1, 40));
    await server.close();

    server = await startTestServer(env, { dataDir: dir });
    try {
      const warning = server
        .logLines()
        .find((line) => line['level'] === 40 && String(line['msg']).includes('another history'));
      assert.match(String(warning?.['reason']), /^the record at \d+:\d+ is not the one it folded$/);
      assert.is((await deleteReport(server, '1001')).status, 404);
      for (const id of range(1, 40)) assert.is((await deleteReport(server, String(id))).status, 204, `report ${id}`);
    } finally {
      await server.close();
    }
  });

  recreated.run();
});
