// `reports migrate --to-topic NAME` and `--to-file DIR` from a topic written by a server (and by
// a writer before erasure, and a create that lost a race): every create sealed anew under keys of
// the target (NAME.keys; DIR/keys.db), deleted and void content left erased, `reports events` the
// same on both, digests equal, and a server on the target serves the reports opened.
import { rm } from 'node:fs/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Env } from '../../src/config.js';
import { lines, reports } from '../helpers/cli.js';
import { basedOn, created, deleted } from '../helpers/events.js';
import { kafkaEnv, startKafkaServer, uniqueTopic, withAdmin, withKafka } from '../helpers/kafka.js';
import { field, printedEvents, type PrintedEvent } from '../helpers/migrate-output.js';
import { openedReport } from '../helpers/opened.js';
import { appendSealedToTopic } from '../helpers/sealed-history.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';
import { appendToTopic } from '../helpers/topic-history.js';
import { deleteReport, idSource, postReport } from '../http/requests.js';

interface Source {
  readonly topic: string;
  readonly live: string;
  readonly gone: string;
}

/** Plain events of an earlier writer; a history through a server; a create that lost a race (its key destroyed). */
async function writeTopic(brokers: string, topic: string, { race = true } = {}): Promise<Source> {
  await appendToTopic(brokers, topic, [
    created('100', 'plain and live', 'old'),
    created('101', 'plain and deleted'),
    deleted('101'),
  ]);
  const server = await startKafkaServer(brokers, {}, topic);
  const nextId = idSource();
  const [live, gone, again] = [nextId(), nextId(), nextId()];
  try {
    assert.is((await postReport(server, live, 'live one', 'finance')).status, 200);
    assert.is((await postReport(server, gone, 'deleted one')).status, 200);
    assert.is((await postReport(server, again, 'first time')).status, 200);
    for (const id of [gone, again]) assert.is((await deleteReport(server, id)).status, 204);
    assert.is((await postReport(server, again, 'second time')).status, 200);
  } finally {
    await server.dispose();
  }
  if (race)
    await appendSealedToTopic(brokers, topic, [basedOn(created(live, 'lost the race'), 0)], (keys, [lost]) =>
      keys.destroy(lost ? [lost.id] : []),
    );
  return { topic, live, gone };
}

/** What `reports events` prints of the source, as its copy must print it: the plain deleted create erased. */
async function expectedCopy(env: Env): Promise<PrintedEvent[]> {
  return (await printedEvents(env)).map((line) =>
    line.event.type === 'ReportCreated' && line.event.data.id === '101'
      ? { erased: true, event: { ...line.event, data: { id: '101' } } }
      : line,
  );
}

async function expectServed(server: TestServer, { live, gone }: Source): Promise<void> {
  try {
    const { reports: model } = server.projector.model;
    assert.equal(await openedReport(model, server.keys, live), { name: 'live one', tag: 'finance' });
    assert.equal(await openedReport(model, server.keys, '100'), { name: 'plain and live', tag: 'old' });
    assert.is(model.has(gone), false);
    assert.is(
      (await postReport(server, live, 'live one', 'finance')).status,
      200,
      'an identical create answers from the opened content',
    );
  } finally {
    await server.dispose();
  }
}

withKafka('reports migrate from Kafka', (brokers) => {
  const migrate = suite<{ topics: string[]; dirs: string[] }>('reports migrate --to-topic and --to-file', {
    topics: [],
    dirs: [],
  });
  migrate.after(async ({ topics, dirs }) => {
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
    await withAdmin(brokers, (admin) =>
      admin.deleteTopics({ topics: topics.flatMap((topic) => [topic, `${topic}.keys`]) }),
    );
  });

  migrate(
    '--to-topic copies the topic and its keys into NAME and NAME.keys: the same events, equal digests, a server serves them',
    async (context) => {
      const [from, to] = [uniqueTopic('cli-migrate-from'), uniqueTopic('cli-migrate-to')];
      context.topics.push(from, to);
      const source = await writeTopic(brokers, from);
      const { code, stdout, stderr } = await reports(['migrate', '--to-topic', to], {
        env: kafkaEnv(brokers, from, { REPORTS_TOPIC_PARTITIONS: '5' }),
      });
      assert.is(code, 0, stderr);
      // Live at the end: 100, the live one, the one created again. Left erased: 101, the deleted one, the first "again", the lost race.
      assert.equal(
        ['copied now', 'content sealed anew', 'content left erased'].map((label) => field(stdout, label)),
        ['10', '3', '4'],
      );
      assert.ok(lines(stdout).includes('digests match'), stdout);
      assert.equal(await printedEvents(kafkaEnv(brokers, to)), await expectedCopy(kafkaEnv(brokers, from)));
      const topics = await withAdmin(brokers, (admin) => admin.fetchTopicMetadata({ topics: [to, `${to}.keys`] }));
      assert.equal(
        topics.topics.map((topic) => topic.partitions.length),
        [5, 5],
      );
      await expectServed(await startKafkaServer(brokers, {}, to), source);
    },
  );

  migrate(
    '--to-file copies the topic and its keys into an embedded log: the same events, equal digests, a sound log a server serves',
    async (context) => {
      const from = uniqueTopic('cli-migrate-to-file');
      const dir = await tempDir('reports-migrate-to-file-');
      context.topics.push(from);
      context.dirs.push(dir);
      // The file log has one writer, which never writes a void event: `reports verify` would call a lost race a fault there.
      const source = await writeTopic(brokers, from, { race: false });
      const env = kafkaEnv(brokers, from);
      const { code, stdout, stderr } = await reports(['migrate', '--to-file', dir], { env });
      assert.is(code, 0, stderr);
      assert.is(field(stdout, `file log ${dir} digest`), field(stdout, `topic ${from} digest`));
      assert.equal(await printedEvents({ REPORTS_DATA_DIR: dir }), await expectedCopy(env));
      const verified = await reports(['verify'], { env: { REPORTS_DATA_DIR: dir } });
      assert.is(verified.stdout, 'OK: 9 records, 0 void events, 3 live sealed reports opened with their keys\n');
      await expectServed(await startTestServer({}, { dataDir: dir }), source);
      const again = await reports(['migrate', '--to-file', dir], { env });
      assert.equal([again.code, field(again.stdout, 'copied now')], [0, '0']);
    },
  );

  migrate.run();
});
