// Idempotency keys outlive the process: they are folded from the events (and carried by
// snapshots), so a request retried with its key after a restart gets its first answer again,
// on the file log, from a snapshot, and on Kafka through another instance.
import { rm } from 'node:fs/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { reports } from '../helpers/cli.js';
import { kafkaEnv, startKafkaServer, uniqueTopic, withAdmin, withKafka } from '../helpers/kafka.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';
import { idSource, logHead, reportBody } from '../http/requests.js';

const nextId = idSource();
const keyed = (key: string) => ({ 'Idempotency-Key': key });

async function keyedDelete(server: TestServer, id: string, key: string): Promise<number> {
  const response = await server.request(`/reports/${id}`, { method: 'DELETE', headers: keyed(key) });
  await response.arrayBuffer();
  return response.status;
}

async function keyedCreate(server: TestServer, id: string, name: string, key: string): Promise<Response> {
  return server.request('/reports', { method: 'POST', json: reportBody(id, name), headers: keyed(key) });
}

/** Before the restart: a keyed create and a keyed delete of two reports. */
async function firstRun(server: TestServer, { created, removed }: { created: string; removed: string }): Promise<void> {
  assert.is((await keyedCreate(server, removed, 'to delete', `create-${removed}`)).status, 200);
  assert.is(await keyedDelete(server, removed, `delete-${removed}`), 204);
  assert.is((await keyedCreate(server, created, 'kept', `create-${created}`)).status, 200);
}

/** After the restart: the retries get their first answers and append nothing. */
async function retriesAfterRestart(
  server: TestServer,
  { created, removed }: { created: string; removed: string },
): Promise<void> {
  const before = await logHead(server);
  assert.is(await keyedDelete(server, removed, `delete-${removed}`), 204, 'the retried DELETE with its key');
  const retried = await keyedCreate(server, created, 'kept', `create-${created}`);
  assert.is(retried.status, 200);
  assert.equal(await retried.json(), { name: 'kept' });
  assert.is(await logHead(server), before, 'a retry appends nothing');
  assert.is(await keyedDelete(server, created, `delete-${removed}`), 422, 'the key names another request');
  const unkeyed = await server.request(`/reports/${removed}`, { method: 'DELETE' });
  assert.is(unkeyed.status, 404, 'without its key the same DELETE finds nothing to delete');
  await unkeyed.arrayBuffer();
}

const restart = suite<{ dir: string }>('Idempotency-Key across restarts: file log');

restart.before.each(async (context) => {
  context.dir = await tempDir('reports-keys-');
});
restart.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

restart(
  'a retried DELETE with its Idempotency-Key is answered 204 by a server restarted on the same data directory',
  async ({ dir }) => {
    const ids = { created: nextId(), removed: nextId() };
    const first = await startTestServer({}, { dataDir: dir });
    await firstRun(first, ids).finally(() => first.dispose());
    const second = await startTestServer({}, { dataDir: dir });
    try {
      assert.is(second.projector.progress().applied, 3);
      await retriesAfterRestart(second, ids);
    } finally {
      await second.dispose();
    }
  },
);

restart(
  'a server restarted from a snapshot has the keys without folding the events that wrote them',
  async ({ dir }) => {
    const ids = { created: nextId(), removed: nextId() };
    const first = await startTestServer({}, { dataDir: dir });
    await firstRun(first, ids).finally(() => first.dispose());
    const { code, stderr } = await reports(['snapshot'], { env: { REPORTS_DATA_DIR: dir } });
    assert.is(code, 0, stderr);
    const second = await startTestServer({}, { dataDir: dir });
    try {
      assert.is(second.projector.progress().applied, 0, 'everything came from the snapshot');
      assert.is(second.projector.model.keys.size, 3);
      await retriesAfterRestart(second, ids);
    } finally {
      await second.dispose();
    }
  },
);

restart.run();

withKafka('Idempotency-Key across restarts', (brokers) => {
  const kafka = suite('Idempotency-Key across restarts: Kafka');

  kafka('a retried DELETE with its Idempotency-Key is answered 204 by a new instance on the same topic', async () => {
    const topic = uniqueTopic('keys-restart');
    const ids = { created: nextId(), removed: nextId() };
    try {
      const first = await startKafkaServer(brokers, {}, topic);
      await firstRun(first, ids).finally(() => first.dispose());
      const second = await startKafkaServer(brokers, {}, topic);
      try {
        await retriesAfterRestart(second, ids);
      } finally {
        await second.dispose();
      }
    } finally {
      await withAdmin(brokers, (admin) => admin.deleteTopics({ topics: [topic] }));
    }
  });

  kafka('a new instance started from a snapshot of the topic has the keys', async () => {
    const topic = uniqueTopic('keys-snapshot');
    const dir = await tempDir('reports-keys-kafka-');
    const ids = { created: nextId(), removed: nextId() };
    const env = kafkaEnv(brokers, topic);
    try {
      const first = await startTestServer(env, { dataDir: dir });
      await firstRun(first, ids).finally(() => first.dispose());
      assert.is((await reports(['snapshot'], { env: { ...env, REPORTS_DATA_DIR: dir } })).code, 0);
      const second = await startTestServer(env, { dataDir: dir });
      try {
        assert.is(second.projector.progress().applied, 0, 'everything came from the snapshot');
        await retriesAfterRestart(second, ids);
      } finally {
        await second.dispose();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
      await withAdmin(brokers, (admin) => admin.deleteTopics({ topics: [topic] }));
    }
  });

  kafka.run();
});
