// A key topic deleted while the service was stopped: created empty again, it would read as every
// report erased on that start and every later one. The start stops instead, with one line naming
// both topics, as it does for a missing keys.db; a history that never sealed content still starts.
// The event topic deleted while its key topic holds keys stops the start too (as a missing
// events.log beside keys.db does): created empty, its sweep would destroy every key.
import { suite } from 'uvu';
import type { Env } from '../../src/config.js';
import * as assert from 'uvu/assert';
import { startReports } from '../helpers/cli.js';
import { pause } from '../../src/pause.js';
import { created } from '../helpers/events.js';
import { kafkaEnv, startKafkaServer, uniqueTopic, withAdmin, withKafka } from '../helpers/kafka.js';
import { appendToTopic } from '../helpers/topic-history.js';
import { tempDir } from '../helpers/server.js';
import { rm } from 'node:fs/promises';

/** `reports serve` on `env`, which must stop by itself: a start that goes on is interrupted, and fails here. */
async function refusedStart(env: Env): Promise<{ code: number; stderr: string }> {
  const dataDir = await tempDir('reports-topic-lost-');
  try {
    const serve = startReports(['serve'], { env: { ...env, PORT: '0', REPORTS_DATA_DIR: dataDir } });
    const ended = await Promise.race([serve.done, pause(20_000).then(() => undefined)]);
    if (ended === undefined) serve.interrupt();
    const { code, stderr } = ended ?? (await serve.done);
    assert.ok(ended !== undefined, `the start went on: ${stderr}`);
    return { code, stderr };
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** A server on `topic` creates report `id` (sealed, so both topics hold records), then stops. */
async function serverCreated(brokers: string, topic: string, id: number): Promise<void> {
  const server = await startKafkaServer(brokers, {}, topic);
  try {
    const answer = await server.request('/reports', { method: 'POST', json: JSON.stringify({ id, name: 'kept' }) });
    assert.is(answer.status, 200);
  } finally {
    await server.dispose();
  }
}

const topicsNow = (brokers: string) => withAdmin(brokers, (admin) => admin.listTopics());

withKafka('key topic lost', (brokers) => {
  const lost = suite<{ topics: string[] }>('kafka: a key topic missing at start', { topics: [] });

  lost.after(async ({ topics }) => {
    const existing = new Set(await topicsNow(brokers));
    await withAdmin(brokers, (admin) => admin.deleteTopics({ topics: topics.filter((name) => existing.has(name)) }));
  });

  lost('stops the start, naming both topics, when the event topic holds sealed creates', async (context) => {
    const topic = uniqueTopic('keys-lost');
    const keyTopic = `${topic}.keys`;
    context.topics.push(topic, keyTopic);
    await serverCreated(brokers, topic, 7);
    assert.ok((await topicsNow(brokers)).includes(keyTopic), 'the first start created the key topic');
    await withAdmin(brokers, (admin) => admin.deleteTopics({ topics: [keyTopic] }));
    const { code, stderr } = await refusedStart(kafkaEnv(brokers, topic));
    assert.is(code, 1);
    assert.not.match(stderr, /no broker answered/);
    assert.match(
      stderr,
      new RegExp(
        `key topic ${keyTopic} does not exist, but ${topic} holds creates sealed under its keys \\(the first at \\d+:0\\)`,
      ),
    );
    assert.not.ok((await topicsNow(brokers)).includes(keyTopic), 'the refused start did not create it');
  });

  lost('stops the start when the event topic is missing while its key topic holds records', async (context) => {
    const topic = uniqueTopic('events-lost');
    const keyTopic = `${topic}.keys`;
    context.topics.push(topic, keyTopic);
    await serverCreated(brokers, topic, 9);
    await withAdmin(brokers, (admin) => admin.deleteTopics({ topics: [topic] }));
    const { code, stderr } = await refusedStart(kafkaEnv(brokers, topic));
    assert.is(code, 1);
    assert.not.match(stderr, /no broker answered/);
    assert.match(stderr, `topic ${topic} does not exist, but its key topic ${keyTopic} holds records`);
    assert.not.ok((await topicsNow(brokers)).includes(topic), 'the refused start did not create it');
  });

  lost('creates it for a history written before content was sealed, whose reports read as before', async (context) => {
    const topic = uniqueTopic('keys-plain');
    context.topics.push(topic, `${topic}.keys`);
    await appendToTopic(brokers, topic, [created('8', 'plain', 'old')]);
    assert.not.ok((await topicsNow(brokers)).includes(`${topic}.keys`));
    const server = await startKafkaServer(brokers, {}, topic);
    try {
      const read = await server.request('/reports/8');
      assert.is(read.status, 200);
      assert.equal(await read.json(), { name: 'plain', tag: 'old' });
      assert.ok((await topicsNow(brokers)).includes(`${topic}.keys`));
    } finally {
      await server.dispose();
    }
  });

  lost.run();

  const underServer = suite<{ topics: string[] }>('kafka: a key topic deleted under a running server', { topics: [] });

  underServer.after(async ({ topics }) => {
    const existing = new Set(await topicsNow(brokers));
    await withAdmin(brokers, (admin) => admin.deleteTopics({ topics: topics.filter((name) => existing.has(name)) }));
  });

  underServer(
    'answers 503 and logs one error naming the key topic, not only timeouts of the event log',
    async (context) => {
      const topic = uniqueTopic('keys-gone');
      const keyTopic = `${topic}.keys`;
      context.topics.push(topic, keyTopic);
      const server = await startKafkaServer(brokers, { REPORTS_WRITE_TIMEOUT_MS: '2000' }, topic);
      try {
        const first = await server.request('/reports', { method: 'POST', json: '{"id": 1, "name": "a"}' });
        assert.is(first.status, 200);
        await withAdmin(brokers, (admin) => admin.deleteTopics({ topics: [keyTopic] }));
        const named = (line: Record<string, unknown>) => line['level'] === 50 && line['topic'] === keyTopic;
        for (let id = 2; id < 12 && !server.logLines().some(named); id += 1) {
          const answer = await server.request('/reports', { method: 'POST', json: JSON.stringify({ id, name: 'b' }) });
          assert.is(answer.status, 503);
          await pause(500);
        }
        const errors = server.logLines().filter(named);
        assert.is(errors.length, 1);
        assert.match(String(errors[0]?.['msg']), `the key topic ${keyTopic} no longer exists`);
      } finally {
        await server.dispose();
      }
    },
  );

  underServer.run();
});
