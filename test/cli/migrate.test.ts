// `reports migrate --to-kafka`: copies the file log into the topic verbatim, skips what is already
// there (so a second run adds nothing and an interrupted run resumes), and compares the digests;
// a server on the migrated topic then answers as the file-log server did.
import { rm } from 'node:fs/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { LogRecord } from '../../src/log/event-log.js';
import { openFileLogReader } from '../../src/log/file/file-log-reader.js';
import { collect } from '../helpers/async.js';
import { lines, reports, replaySummary } from '../helpers/cli.js';
import { created } from '../helpers/events.js';
import { appendToFileLog, notAnEvent } from '../helpers/file-history.js';
import { kafkaEnv, uniqueTopic, withAdmin, withKafka } from '../helpers/kafka.js';
import { memoryLogger, startTestServer, tempDir, type TestServer } from '../helpers/server.js';
import { appendToTopic } from '../helpers/topic-history.js';
import { deleteReport, idSource, postReport } from '../http/requests.js';
import { readRecords } from '../../src/log/record-batches.js';

const usage = suite('reports migrate: usage');

usage('without --to-kafka or --to-topic exits 2 asking where to', async () => {
  const { code, stderr } = await reports(['migrate']);
  assert.is(code, 2);
  assert.match(stderr, 'say where to: --to-kafka');
  assert.match(stderr, /^usage: reports migrate --to-kafka \| --to-topic NAME$/m);
});

usage('without KAFKA_BROKERS exits 2 naming the variable', async () => {
  const { code, stderr } = await reports(['migrate', '--to-kafka'], { env: { REPORTS_DATA_DIR: '/nonexistent' } });
  assert.is(code, 2);
  assert.match(stderr, 'KAFKA_BROKERS must name the target Kafka cluster');
});

usage.run();

interface History {
  readonly live: string;
  readonly removed: string;
  readonly keyedRemoved: string;
}

/** Writes a history through a file-log server: creates (one tagged), deletes, one with an Idempotency-Key. */
async function writeHistory(server: TestServer): Promise<History> {
  const nextId = idSource();
  const ids = Array.from({ length: 6 }, () => nextId());
  for (const [index, id] of ids.entries()) assert.is((await postReport(server, id, `report ${index}`, index % 2 === 0 ? 'even' : undefined)).status, 200);
  const [live, removed, keyedRemoved] = ids as [string, string, string];
  assert.is((await deleteReport(server, removed)).status, 204);
  const keyed = await server.request(`/reports/${keyedRemoved}`, { method: 'DELETE', headers: { 'Idempotency-Key': `migrate-${keyedRemoved}` } });
  assert.is(keyed.status, 204);
  return { live, removed, keyedRemoved };
}

/** The line `label: value` of the migrate summary. */
function field(stdout: string, label: string): string | undefined {
  return lines(stdout).find((line) => line.startsWith(`${label}:`))?.slice(label.length + 1).trim();
}

withKafka('reports migrate', (brokers) => {
  interface Context {
    dir: string;
    history: History;
    records: LogRecord[];
    topics: string[];
  }
  const migrate = suite<Context>('reports migrate --to-kafka', { dir: '', history: { live: '', removed: '', keyedRemoved: '' }, records: [], topics: [] });

  migrate.before(async (context) => {
    context.dir = await tempDir('reports-migrate-');
    const server = await startTestServer({}, { dataDir: context.dir });
    context.history = await writeHistory(server).finally(() => server.dispose());
    const log = await openFileLogReader({ dir: context.dir, logger: memoryLogger().logger });
    context.records = await collect(readRecords(log, new Map())).finally(() => log.close());
  });
  migrate.after(async ({ dir, topics }) => {
    await rm(dir, { recursive: true, force: true });
    await withAdmin(brokers, (admin) => admin.deleteTopics({ topics }));
  });

  const envFor = (context: Context) => {
    const topic = uniqueTopic('cli-migrate');
    context.topics.push(topic);
    return { topic, env: { ...kafkaEnv(brokers, topic), REPORTS_DATA_DIR: context.dir } };
  };

  const topicRecords = (topic: string) =>
    withAdmin(brokers, async (admin) => (await admin.fetchTopicOffsets(topic)).reduce((sum, { high }) => sum + Number(high), 0));

  migrate('copies every record into the topic verbatim, reports matching digests and exits 0', async (context) => {
    const { topic, env } = envFor(context);
    const { code, stdout, stderr } = await reports(['migrate', '--to-kafka'], { env });
    assert.is(code, 0, stderr);
    const total = context.records.length;
    assert.equal([field(stdout, 'events in the file log'), field(stdout, 'already in the topic'), field(stdout, 'copied now')], [String(total), '0', String(total)]);
    assert.ok(lines(stdout).includes('digests match'));
    assert.is(field(stdout, 'file log digest'), field(stdout, 'Kafka topic digest'));
    assert.is(await topicRecords(topic), total);
    const copied = lines((await reports(['events'], { env })).stdout).map((line) => JSON.stringify((JSON.parse(line) as { event: unknown }).event));
    assert.equal(copied.sort(), context.records.map((record) => JSON.stringify(JSON.parse(record.value.toString('utf8')))).sort());
  });

  migrate('a second run adds nothing', async (context) => {
    const { topic, env } = envFor(context);
    assert.is((await reports(['migrate', '--to-kafka'], { env })).code, 0);
    const head = await topicRecords(topic);
    const { code, stdout } = await reports(['migrate', '--to-kafka'], { env });
    assert.is(code, 0);
    assert.equal([field(stdout, 'already in the topic'), field(stdout, 'copied now')], [String(context.records.length), '0']);
    assert.is(await topicRecords(topic), head);
  });

  migrate('resumes: with the first records already in the topic it copies only the rest', async (context) => {
    const { topic, env } = envFor(context);
    const copiedBefore = 3;
    await appendToTopic(brokers, topic, context.records.slice(0, copiedBefore).map(({ key, value }) => ({ key, value })));
    const { code, stdout } = await reports(['migrate', '--to-kafka'], { env });
    assert.is(code, 0);
    const total = context.records.length;
    assert.equal([field(stdout, 'already in the topic'), field(stdout, 'copied now')], [String(copiedBefore), String(total - copiedBefore)]);
    assert.ok(lines(stdout).includes('digests match'));
    assert.is(await topicRecords(topic), total);
    const [onFile, onKafka] = await Promise.all([replaySummary({ REPORTS_DATA_DIR: context.dir }), replaySummary(env)]);
    assert.is(onKafka.digest, onFile.digest);
  });

  migrate('a server on the migrated topic serves the same reports and remembers the keys', async (context) => {
    const { topic, env } = envFor(context);
    assert.is((await reports(['migrate', '--to-kafka'], { env })).code, 0);
    const server = await startTestServer(kafkaEnv(brokers, topic));
    try {
      const { live, removed, keyedRemoved } = context.history;
      assert.is(server.projector.model.reports.size, 4);
      assert.is((await postReport(server, live, 'another name')).status, 409);
      const same = await postReport(server, live, 'report 0', 'even');
      assert.is(same.status, 200);
      assert.equal(await same.json(), { name: 'report 0', tag: 'even' });
      assert.is((await deleteReport(server, removed)).status, 404);
      const retried = await server.request(`/reports/${keyedRemoved}`, { method: 'DELETE', headers: { 'Idempotency-Key': `migrate-${keyedRemoved}` } });
      assert.is(retried.status, 204);
    } finally {
      await server.dispose();
    }
  });

  migrate('exits 1 with differing digests when the topic holds events the file log does not', async (context) => {
    const { topic, env } = envFor(context);
    await appendToTopic(brokers, topic, [created('1', 'only in the topic')]);
    const { code, stdout } = await reports(['migrate', '--to-kafka'], { env });
    assert.is(code, 1);
    assert.is(field(stdout, 'copied now'), String(context.records.length));
    assert.match(stdout, 'DIGESTS DIFFER');
    assert.is.not(field(stdout, 'file log digest'), field(stdout, 'Kafka topic digest'));
  });

  migrate('refuses a file log holding a record that is not an event, naming it, and copies nothing', async (context) => {
    const dir = await tempDir('reports-migrate-invalid-');
    const { topic, env } = envFor(context);
    try {
      await appendToFileLog(dir, [created('1', 'a'), notAnEvent('1'), created('2', 'b')]);
      const { code, stderr } = await reports(['migrate', '--to-kafka'], { env: { ...env, REPORTS_DATA_DIR: dir } });
      assert.is(code, 1);
      assert.match(stderr, 'record 1 is not a valid event');
      assert.match(stderr, 'reports verify');
      assert.is(await topicRecords(topic), 0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  migrate.run();
});
