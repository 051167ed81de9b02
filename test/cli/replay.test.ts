// `reports replay`: counts and the state digest; the digest depends only on the reports, so the
// same history gives the same digest on the file log and on Kafka, whatever the order of writes.
import { rm } from 'node:fs/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ReportEvent } from '../../projections/events.js';
import { stateDigest } from '../../src/projector/fold-log.js';
import { reports, replaySummary, lines } from '../helpers/cli.js';
import { created, deleted } from '../helpers/events.js';
import { appendToFileLog, notAnEvent } from '../helpers/file-history.js';
import { appendToTopic } from '../helpers/topic-history.js';
import { kafkaEnv, startKafkaServer, uniqueTopic, withAdmin, withKafka } from '../helpers/kafka.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';
import { deleteReport, idSource, postReport } from '../http/requests.js';

const EMPTY_DIGEST = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/** Runs `use` with fresh temporary data directories, removed afterwards. */
async function withDirs(count: number, use: (...dirs: string[]) => Promise<void>): Promise<void> {
  const dirs = await Promise.all(Array.from({ length: count }, () => tempDir('reports-replay-')));
  try {
    await use(...dirs);
  } finally {
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  }
}

const at = (dir: string) => ({ REPORTS_DATA_DIR: dir });

const file = suite('reports replay: file log');

file(
  'counts records, void events, invalid records and live reports, and prints the digest of the reports left',
  async () => {
    await withDirs(1, async (dir) => {
      await appendToFileLog(dir, [
        created('1', 'one'),
        created('1', 'one again'), // void: the id exists
        created('2', 'two', 'blue'),
        deleted('2'),
        deleted('9'), // void: no such report
        notAnEvent('9'),
        created('3', 'three'),
      ]);
      const { code, stdout, stderr } = await reports(['replay'], { env: at(dir) });
      assert.is(code, 0, stderr);
      const digest = stateDigest(
        new Map([
          ['1', { name: 'one' }],
          ['3', { name: 'three' }],
        ]),
      );
      assert.equal(lines(stdout), [
        'events read:     7',
        'void events:     2',
        'invalid records: 1',
        'live reports:    2',
        'position:        7',
        `state digest:    sha256:${digest}`,
      ]);
      const summary = await replaySummary(at(dir));
      assert.equal(
        { ...summary, seconds: 0 },
        { events: 7, voidEvents: 2, invalidRecords: 1, liveReports: 2, digest, position: '7', seconds: 0 },
      );
    });
  },
);

file('an empty log replays to no reports and the digest of the empty state', async () => {
  await withDirs(1, async (dir) => {
    await appendToFileLog(dir, []);
    const summary = await replaySummary(at(dir));
    assert.equal([summary.events, summary.liveReports, summary.digest, summary.position], [0, 0, EMPTY_DIGEST, '']);
    assert.match((await reports(['replay'], { env: at(dir) })).stdout, 'position:        (empty log)');
  });
});

file('the digest equals that of the read model a server builds from the same log', async () => {
  const server = await startTestServer();
  try {
    const nextId = idSource();
    const ids = [nextId(), nextId(), nextId()];
    for (const id of ids)
      assert.is((await postReport(server, id, `report ${id}`, id.endsWith('0') ? null : 'tagged')).status, 200);
    assert.is((await deleteReport(server, ids[1] as string)).status, 204);
    const summary = await replaySummary(at(server.dataDir));
    assert.is(summary.digest, stateDigest(server.projector.model.reports, await server.keys.lookup()));
    assert.equal([summary.events, summary.liveReports], [4, 2]);
  } finally {
    await server.dispose();
  }
});

file('the same reports reached by different histories give the same digest', async () => {
  await withDirs(2, async (one, other) => {
    await appendToFileLog(one, [created('1', 'a'), created('2', 'b'), created('3', 'c', 'x'), deleted('2')]);
    await appendToFileLog(other, [created('3', 'c', 'x'), created('1', 'a')]);
    const [a, b] = await Promise.all([replaySummary(at(one)), replaySummary(at(other))]);
    assert.is(a.digest, b.digest);
    assert.is.not(a.events, b.events);
  });
});

file('different reports give different digests', async () => {
  await withDirs(2, async (one, other) => {
    await appendToFileLog(one, [created('1', 'a')]);
    await appendToFileLog(other, [created('1', 'a', 'tag')]);
    const [a, b] = await Promise.all([replaySummary(at(one)), replaySummary(at(other))]);
    assert.is.not(a.digest, b.digest);
  });
});

file('--to N folds only the first N records: the same as a log holding only those', async () => {
  const history: ReportEvent[] = [
    created('1', 'a'),
    created('2', 'b'),
    deleted('1'),
    created('4', 'd'),
    deleted('2'),
    created('1', 'again'),
  ];
  await withDirs(2, async (full, prefix) => {
    await appendToFileLog(full, history);
    await appendToFileLog(prefix, history.slice(0, 3));
    const [partial, expected] = await Promise.all([replaySummary(at(full), ['--to', '3']), replaySummary(at(prefix))]);
    assert.equal(partial, { ...expected, seconds: partial.seconds });
    assert.equal([partial.events, partial.position, partial.liveReports], [3, '3', 1]);
    assert.is.not(partial.digest, (await replaySummary(at(full))).digest);
  });
});

file('--to past the head replays the whole log and says on stderr that it stopped at the head', async () => {
  await withDirs(1, async (dir) => {
    await appendToFileLog(dir, [
      created('1', 'a'),
      created('2', 'b'),
      deleted('1'),
      created('3', 'c'),
      created('4', 'd'),
      deleted('2'),
      created('5', 'e'),
    ]);
    const { code, stdout, stderr } = await reports(['replay', '--to', '999', '--json'], { env: at(dir) });
    assert.is(code, 0);
    assert.is(stderr, 'reports replay: --to 999 is past the head of the log (7): replayed up to the head\n');
    const summary = JSON.parse(stdout) as { events: number; position: string };
    assert.equal([summary.events, summary.position], [7, '7']);
    assert.is((await reports(['replay', '--to', '7'], { env: at(dir) })).stderr, '', 'the head itself is no news');
  });
});

file('--to 0 folds nothing', async () => {
  await withDirs(1, async (dir) => {
    await appendToFileLog(dir, [created('1', 'a')]);
    const summary = await replaySummary(at(dir), ['--to', '0']);
    assert.equal([summary.events, summary.digest], [0, EMPTY_DIGEST]);
  });
});

file('a bad --to exits 2 with the usage line', async () => {
  const { code, stderr } = await reports(['replay', '--to', 'end']);
  assert.is(code, 2);
  assert.match(stderr, '--to must be N or P:O');
  assert.match(stderr, /^usage: reports replay/m);
});

file('a --to of a partition the file log does not have exits 2', async () => {
  await withDirs(1, async (dir) => {
    const { code, stderr } = await reports(['replay', '--to', '1:4'], { env: at(dir) });
    assert.is(code, 2);
    assert.match(stderr, '--to must be N on the file log (it has one partition), got "1:4"');
  });
});

file('prints only the summary, without progress bar escape codes, when stdout is not a terminal', async () => {
  await withDirs(1, async (dir) => {
    await appendToFileLog(
      dir,
      Array.from({ length: 50 }, (_, i) => created(String(i), `r${i}`)),
    );
    const { stdout } = await reports(['replay'], { env: at(dir) });
    assert.not.match(stdout, '\x1b');
    assert.not.match(stdout, 'replay [');
    assert.is(lines(stdout).length, 6);
  });
});

file('draws a progress bar when stdout is a terminal', async () => {
  await withDirs(1, async (dir) => {
    await appendToFileLog(
      dir,
      Array.from({ length: 50 }, (_, i) => created(String(i), `r${i}`)),
    );
    const { code, stdout } = await reports(['replay'], { env: at(dir), tty: true });
    assert.is(code, 0);
    assert.match(stdout, '\x1b');
    assert.match(stdout, /replay \[.*\] 100% \| 50\/50 events/);
    assert.match(stdout, 'events read:     50');
  });
});

file.run();

withKafka('reports replay', (brokers) => {
  const kafka = suite<{ topics: string[] }>('reports replay: Kafka', { topics: [] });

  kafka.after(async ({ topics }) => {
    await withAdmin(brokers, (admin) => admin.deleteTopics({ topics }));
  });

  const topicFor = (context: { topics: string[] }, prefix: string) => {
    const topic = uniqueTopic(prefix);
    context.topics.push(topic);
    return topic;
  };

  /** Creates, deletes and re-creates reports through `server`: several events per report. */
  async function writeHistory(server: TestServer, ids: readonly string[]): Promise<void> {
    for (const id of ids) assert.is((await postReport(server, id, `first ${id}`)).status, 200);
    for (const id of ids.slice(0, 3)) assert.is((await deleteReport(server, id)).status, 204);
    assert.is((await postReport(server, ids[0] as string, 'second', 'tagged')).status, 200);
  }

  kafka('a history migrated from the file log gives the same counts and digest on Kafka', async (context) => {
    await withDirs(1, async (dir) => {
      const server = await startTestServer({}, { dataDir: dir });
      const nextId = idSource();
      await writeHistory(
        server,
        Array.from({ length: 8 }, () => nextId()),
      ).finally(() => server.dispose());
      const env = { ...kafkaEnv(brokers, topicFor(context, 'cli-replay-migrated')), REPORTS_DATA_DIR: dir };
      assert.is((await reports(['migrate', '--to-kafka'], { env })).code, 0);
      const [onFile, onKafka] = await Promise.all([replaySummary(at(dir)), replaySummary(env)]);
      assert.is(onKafka.digest, onFile.digest);
      assert.equal([onKafka.events, onKafka.voidEvents, onKafka.liveReports], [onFile.events, 0, onFile.liveReports]);
      assert.equal([onFile.events, onFile.liveReports], [12, 6]);
    });
  });

  kafka(
    'the same reports written through HTTP in another order on Kafka and on the file log give the same digest',
    async (context) => {
      const topic = topicFor(context, 'cli-replay-order');
      const [onFile, onKafka] = await Promise.all([startTestServer(), startKafkaServer(brokers, {}, topic)]);
      try {
        const nextId = idSource();
        const [a, b, c, d] = [nextId(), nextId(), nextId(), nextId()];
        for (const [id, name] of [
          [a, 'A'],
          [b, 'B'],
          [c, 'C'],
        ] as const)
          assert.is((await postReport(onFile, id, name)).status, 200);
        assert.is((await deleteReport(onFile, b)).status, 204);
        for (const [id, name] of [
          [d, 'D'],
          [c, 'C'],
          [b, 'B'],
          [a, 'A'],
        ] as const)
          assert.is((await postReport(onKafka, id, name)).status, 200);
        assert.is((await deleteReport(onKafka, b)).status, 204);
        assert.is((await deleteReport(onKafka, d)).status, 204);
        const [fileSummary, kafkaSummary] = await Promise.all([
          replaySummary(at(onFile.dataDir)),
          replaySummary({ ...kafkaEnv(brokers, topic), REPORTS_DATA_DIR: onKafka.dataDir }),
        ]);
        assert.is(kafkaSummary.digest, fileSummary.digest);
        assert.is(kafkaSummary.digest, stateDigest(onKafka.projector.model.reports, await onKafka.keys.lookup()));
        assert.equal([fileSummary.events, kafkaSummary.events], [4, 6]);
      } finally {
        await Promise.all([onFile.dispose(), onKafka.dispose()]);
      }
    },
  );

  kafka('--to P:O folds only the records before it: the same as a file log holding only those', async (context) => {
    const topic = topicFor(context, 'cli-replay-to');
    const prefix = await tempDir('reports-replay-prefix-');
    try {
      const history: ReportEvent[] = [
        created('1', 'a'),
        created('2', 'b'),
        deleted('1'),
        created('4', 'd'),
        deleted('2'),
        created('1', 'again'),
        created('5', 'e'),
        deleted('4'),
      ];
      await appendToTopic(brokers, topic, history, { REPORTS_TOPIC_PARTITIONS: '1' });
      await appendToFileLog(prefix, history.slice(0, 5));
      const env = kafkaEnv(brokers, topic);
      const [partial, expected] = await Promise.all([replaySummary(env, ['--to', '0:5']), replaySummary(at(prefix))]);
      assert.equal(
        [partial.events, partial.liveReports, partial.digest, partial.position],
        [expected.events, expected.liveReports, expected.digest, '0:5'],
      );
      assert.equal([partial.events, partial.liveReports], [5, 1]);
    } finally {
      await rm(prefix, { recursive: true, force: true });
    }
  });

  kafka.run();
});
