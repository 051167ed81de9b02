// `reports migrate --to-kafka`: copies the file log into the topic with every create sealed anew
// under keys of the key topic (events written in the clear sealed too), so `reports events` prints
// the same on both, no name is in the topic in the clear, and the digests match; skips what is
// already there (a second run adds nothing, an interrupted run resumes); a server on the migrated
// topic answers as the file-log server did.
import { rm } from 'node:fs/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ReportEvent } from '../../projections/events.js';
import { loadConfig, type KafkaConfig } from '../../src/config.js';
import { openKafkaLog } from '../../src/log/kafka/kafka-log.js';
import { readRecords } from '../../src/log/record-batches.js';
import { collect } from '../helpers/async.js';
import { lines, reports, replaySummary, startReports } from '../helpers/cli.js';
import { created, deleted } from '../helpers/events.js';
import { appendToFileLog, notAnEvent } from '../helpers/file-history.js';
import { kafkaEnv, uniqueTopic, withAdmin, withKafka } from '../helpers/kafka.js';
import { appendSealedToFileLog } from '../helpers/sealed-history.js';
import { memoryLogger, startTestServer, tempDir, type TestServer } from '../helpers/server.js';
import { appendToTopic } from '../helpers/topic-history.js';
import { deleteReport, idSource, postReport } from '../http/requests.js';
import { field, printedEvents, type PrintedEvent } from '../helpers/migrate-output.js';

const usage = suite('reports migrate: usage');

usage('without a target exits 2 asking where to', async () => {
  const { code, stderr } = await reports(['migrate']);
  assert.is(code, 2);
  assert.match(stderr, 'say where to: --to-kafka, --to-topic NAME or --to-file DIR');
  assert.match(stderr, /^usage: reports migrate --to-kafka \| --to-topic NAME \| --to-file DIR$/m);
});

usage('with two targets exits 2 asking for one', async () => {
  const { code, stderr } = await reports(['migrate', '--to-kafka', '--to-file', '/tmp/x']);
  assert.is(code, 2);
  assert.match(stderr, 'say one target only');
});

usage('without KAFKA_BROKERS exits 2 naming the variable', async () => {
  const { code, stderr } = await reports(['migrate', '--to-kafka'], { env: { REPORTS_DATA_DIR: '/nonexistent' } });
  assert.is(code, 2);
  assert.match(stderr, 'KAFKA_BROKERS must name the target Kafka cluster');
  assert.match(
    (await reports(['migrate', '--to-file', '/tmp/x'])).stderr,
    'KAFKA_BROKERS must name the source Kafka cluster',
  );
});

usage.run();

interface History {
  readonly live: string;
  readonly removed: string;
  readonly keyedRemoved: string;
  readonly names: readonly string[];
}

/** Plain events of an earlier version, then a history through a file-log server: creates (some tagged), deletes, one keyed. */
async function writeHistory(dir: string): Promise<History> {
  await appendToFileLog(dir, [
    created('100', 'plain and live', 'old'),
    created('101', 'plain and deleted'),
    deleted('101'),
  ]);
  const server = await startTestServer({}, { dataDir: dir });
  try {
    const nextId = idSource();
    const ids = Array.from({ length: 6 }, () => nextId());
    for (const [index, id] of ids.entries())
      assert.is((await postReport(server, id, `report ${index}`, index % 2 === 0 ? 'even' : undefined)).status, 200);
    const [live, removed, keyedRemoved] = ids as [string, string, string];
    assert.is((await deleteReport(server, removed)).status, 204);
    const keyed = await server.request(`/reports/${keyedRemoved}`, {
      method: 'DELETE',
      headers: { 'Idempotency-Key': `migrate-${keyedRemoved}` },
    });
    assert.is(keyed.status, 204);
    return {
      live,
      removed,
      keyedRemoved,
      names: ['plain and live', 'plain and deleted', ...ids.map((_, index) => `report ${index}`)],
    };
  } finally {
    await server.dispose();
  }
}

function isPlainCreateOf(line: PrintedEvent, id: string): boolean {
  return line.event.type === 'ReportCreated' && line.event.data.id === id && line.erased === undefined;
}

withKafka('reports migrate', (brokers) => {
  interface Context {
    dir: string;
    history: History;
    topics: string[];
  }
  const migrate = suite<Context>('reports migrate --to-kafka', {
    dir: '',
    history: { live: '', removed: '', keyedRemoved: '', names: [] },
    topics: [],
  });

  migrate.before(async (context) => {
    context.dir = await tempDir('reports-migrate-');
    context.history = await writeHistory(context.dir);
  });
  migrate.after(async ({ dir, topics }) => {
    await rm(dir, { recursive: true, force: true });
    await withAdmin(brokers, (admin) =>
      admin.deleteTopics({ topics: topics.flatMap((topic) => [topic, `${topic}.keys`]) }),
    );
  });

  const envFor = (context: Context, dir = context.dir) => {
    const topic = uniqueTopic('cli-migrate');
    context.topics.push(topic);
    return { topic, env: { ...kafkaEnv(brokers, topic), REPORTS_DATA_DIR: dir } };
  };

  const topicValues = async (topic: string) => {
    const log = await openKafkaLog({
      config: loadConfig(kafkaEnv(brokers, topic)).kafka as KafkaConfig,
      logger: memoryLogger().logger,
      writeTimeoutMs: 10_000,
      readOnly: true,
      createTopic: false,
    });
    return (await collect(readRecords(log, new Map())).finally(() => log.close())).map((record) =>
      record.value.toString('utf8'),
    );
  };

  migrate(
    'copies every event sealed anew under keys of the key topic: the same events print on both, no name in the clear, digests match',
    async (context) => {
      const { topic, env } = envFor(context);
      const { code, stdout, stderr } = await reports(['migrate', '--to-kafka'], { env });
      assert.is(code, 0, stderr);
      assert.equal(
        [
          'events in the file log',
          'already in the topic',
          'copied now',
          'content sealed anew',
          'content left erased',
        ].map((label) => field(stdout, label)),
        ['11', '0', '11', '5', '3'],
      );
      assert.ok(lines(stdout).includes('digests match'));
      assert.is(field(stdout, 'file log digest'), field(stdout, 'Kafka topic digest'));
      // The same events, but that the file log holds the name of deleted report 101 in the clear (written before erasure): its copy is erased.
      const expected = (await printedEvents({ REPORTS_DATA_DIR: context.dir })).map((line) =>
        isPlainCreateOf(line, '101') ? { erased: true, event: { ...line.event, data: { id: '101' } } } : line,
      );
      assert.equal(await printedEvents(env), expected);
      const values = await topicValues(topic);
      assert.is(values.length, 11);
      for (const name of context.history.names)
        assert.not.ok(
          values.some((value) => value.includes(name)),
          `"${name}" is in the topic in the clear`,
        );
    },
  );

  migrate('a second run adds nothing', async (context) => {
    const { topic, env } = envFor(context);
    assert.is((await reports(['migrate', '--to-kafka'], { env })).code, 0);
    const { code, stdout } = await reports(['migrate', '--to-kafka'], { env });
    assert.is(code, 0);
    assert.equal([field(stdout, 'already in the topic'), field(stdout, 'copied now')], ['11', '0']);
    assert.is((await topicValues(topic)).length, 11);
  });

  migrate(
    'interrupted (Ctrl-C) part way, it exits 130; run again, it copies the rest and the digests match',
    async (context) => {
      const dir = await tempDir('reports-migrate-interrupted-');
      try {
        const events: ReportEvent[] = Array.from({ length: 3000 }, (_, i) => created(String(i), `report ${i}`));
        await appendSealedToFileLog(dir, [...events, ...Array.from({ length: 500 }, (_, i) => deleted(String(i * 2)))]);
        const { env } = envFor(context, dir);
        const first = startReports(['migrate', '--to-kafka'], { env, tty: true });
        await first.waitFor(() => /\| [1-9]\d*\/3500 events/.test(first.stdout()), 'the copy to be under way');
        first.interrupt();
        assert.is((await first.done).code, 130);
        const { code, stdout } = await reports(['migrate', '--to-kafka'], { env });
        assert.is(code, 0);
        const already = Number(field(stdout, 'already in the topic'));
        assert.ok(already > 0 && already < 3500, `${already} copied by the interrupted run`);
        assert.is(already + Number(field(stdout, 'copied now')), 3500);
        assert.is(field(stdout, 'Kafka topic digest'), field(stdout, 'file log digest'));
        assert.is((await replaySummary(env)).digest, (await replaySummary({ REPORTS_DATA_DIR: dir })).digest);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );

  migrate(
    'a server on the migrated topic serves the same reports, opened with its keys, and remembers the Idempotency-Keys',
    async (context) => {
      const { topic, env } = envFor(context);
      assert.is((await reports(['migrate', '--to-kafka'], { env })).code, 0);
      const server: TestServer = await startTestServer(kafkaEnv(brokers, topic));
      try {
        const { live, removed, keyedRemoved } = context.history;
        assert.is(server.projector.model.reports.size, 5);
        assert.is((await postReport(server, live, 'another name')).status, 409);
        const same = await postReport(server, live, 'report 0', 'even');
        assert.is(same.status, 200);
        assert.equal(await same.json(), { name: 'report 0', tag: 'even' });
        assert.is(
          (await postReport(server, '100', 'plain and live', 'old')).status,
          200,
          'a plain event of the file log, sealed in the topic',
        );
        assert.is((await deleteReport(server, removed)).status, 404);
        const retried = await server.request(`/reports/${keyedRemoved}`, {
          method: 'DELETE',
          headers: { 'Idempotency-Key': `migrate-${keyedRemoved}` },
        });
        assert.is(retried.status, 204);
      } finally {
        await server.dispose();
      }
    },
  );

  migrate('exits 1 with differing digests when the topic holds events the file log does not', async (context) => {
    const { topic, env } = envFor(context);
    await appendToTopic(brokers, topic, [created('1', 'only in the topic')]);
    const { code, stdout } = await reports(['migrate', '--to-kafka'], { env });
    assert.is(code, 1);
    assert.is(field(stdout, 'copied now'), '11');
    assert.match(stdout, 'DIGESTS DIFFER');
    assert.is.not(field(stdout, 'file log digest'), field(stdout, 'Kafka topic digest'));
  });

  migrate(
    'refuses a file log holding a record that is not an event, naming it, and copies nothing',
    async (context) => {
      const dir = await tempDir('reports-migrate-invalid-');
      const { topic, env } = envFor(context, dir);
      try {
        await appendToFileLog(dir, [created('1', 'a'), notAnEvent('1'), created('2', 'b')]);
        const { code, stderr } = await reports(['migrate', '--to-kafka'], { env });
        assert.is(code, 1);
        assert.match(stderr, 'record 1 is not a valid event');
        assert.match(stderr, 'reports verify');
        assert.is((await topicValues(topic)).length, 0);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );

  migrate.run();
});
