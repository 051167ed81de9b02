// `reports verify`: exit 0 for a sound log; exit 1 naming the first bad position for damaged
// frames, torn tails, records that are not events, and (on the single-writer file log) void events.
import { rm, truncate, stat, writeFile } from 'node:fs/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeEvent } from '../../projections/codec.js';
import { FILE_MAGIC } from '../../src/log/file/frames.js';
import { reports } from '../helpers/cli.js';
import { created, deleted } from '../helpers/events.js';
import {
  appendToFileLog,
  eventsLogPath,
  flipByte,
  frameStarts,
  notAnEvent,
  type Entry,
} from '../helpers/file-history.js';
import { kafkaEnv, startKafkaServer, uniqueTopic, withAdmin, withKafka } from '../helpers/kafka.js';
import { startTestServer, tempDir } from '../helpers/server.js';
import { appendToTopic } from '../helpers/topic-history.js';
import { deleteReport, idSource, postReport } from '../http/requests.js';

interface Findings {
  readonly ok: boolean;
  readonly records: number;
  readonly voidEvents: number;
  readonly problems: number;
  readonly sealedReports: number;
  readonly unopenedReports: number;
  readonly first?: { readonly position: string; readonly reason: string };
}

const verify = suite<{ dir: string }>('reports verify: file log');

verify.before.each(async (context) => {
  context.dir = await tempDir('reports-verify-');
});
verify.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

const run = (dir: string, json = false) =>
  reports(json ? ['verify', '--json'] : ['verify'], { env: { REPORTS_DATA_DIR: dir } });

/** A server started on `dir` cuts what verify reported as torn, and the log is sound afterwards. */
async function expectSoundAfterServerStart(dir: string, records: number): Promise<void> {
  const server = await startTestServer({}, { dataDir: dir });
  await server.dispose();
  const { code, stdout } = await run(dir);
  assert.is(code, 0);
  assert.is(stdout, `OK: ${records} records, 0 void events, 0 live sealed reports opened with their keys\n`);
}

const five = (): Entry[] => [
  created('1', 'a'),
  created('2', 'b'),
  created('3', 'c'),
  deleted('2'),
  created('4', 'd', 'x'),
];

verify('a sound log written through a server exits 0 and says how many records it checked', async ({ dir }) => {
  const server = await startTestServer({}, { dataDir: dir });
  try {
    const nextId = idSource();
    const [a, b] = [nextId(), nextId()];
    assert.is((await postReport(server, a, 'a')).status, 200);
    assert.is((await postReport(server, b, 'b', 'tag')).status, 200);
    assert.is((await deleteReport(server, a)).status, 204);
  } finally {
    await server.dispose();
  }
  const { code, stdout } = await run(dir);
  assert.is(code, 0);
  assert.is(stdout, 'OK: 3 records, 0 void events, 1 live sealed report opened with its key\n');
});

verify('--json prints the findings as one object', async ({ dir }) => {
  await appendToFileLog(dir, five());
  const { code, stdout } = await run(dir, true);
  assert.is(code, 0);
  assert.equal(JSON.parse(stdout) as Findings, {
    ok: true,
    records: 5,
    voidEvents: 0,
    problems: 0,
    sealedReports: 0,
    unopenedReports: 0,
    changedMeanwhile: 0,
  });
});

verify('an empty log is sound', async ({ dir }) => {
  await appendToFileLog(dir, []);
  const { code, stdout } = await run(dir);
  assert.is(code, 0);
  assert.is(stdout, 'OK: 0 records, 0 void events, 0 live sealed reports opened with their keys\n');
});

verify('a corrupt byte in a middle record exits 1 and names that record', async ({ dir }) => {
  // One append (one group-commit batch) per record: damage in the last batch would be a torn write.
  for (const entry of five()) await appendToFileLog(dir, [entry]);
  const starts = await frameStarts(dir);
  await flipByte(eventsLogPath(dir), (starts[2] as number) + 30);
  const { code, stdout } = await run(dir);
  assert.is(code, 1);
  assert.match(
    stdout,
    /^FAILED: the log cannot be read past 2: corrupt record \(valid records follow it\) at byte \d+: CRC mismatch.*; its records were not checked$/m,
  );
  const findings = JSON.parse((await run(dir, true)).stdout) as Findings;
  assert.is(findings.ok, false);
  assert.is(findings.first?.position, '2');
});

verify(
  'a torn tail exits 1 naming the record cut short, and the log is sound once the server has cut it',
  async ({ dir }) => {
    for (const entry of five()) await appendToFileLog(dir, [entry]);
    const path = eventsLogPath(dir);
    await truncate(path, (await stat(path)).size - 7);
    const { code, stdout } = await run(dir);
    assert.is(code, 1);
    assert.match(stdout, /first at 4: torn tail \(an unacknowledged write; the server cuts it at start\)/);
    const findings = JSON.parse((await run(dir, true)).stdout) as Findings;
    assert.equal([findings.records, findings.problems], [4, 1]);
    await expectSoundAfterServerStart(dir, 4);
  },
);

verify('a record that is not an event exits 1 and names its position', async ({ dir }) => {
  await appendToFileLog(dir, [created('1', 'a'), notAnEvent('1'), created('2', 'b')]);
  const { code, stdout } = await run(dir);
  assert.is(code, 1);
  assert.match(
    stdout,
    'FAILED: 1 problem in 3 records; first at 1: not a valid event: /type: must be ReportCreated or ReportDeleted',
  );
});

verify('a void event exits 1: the file log has one writer, which never writes one', async ({ dir }) => {
  await appendToFileLog(dir, [created('1', 'a'), deleted('2'), created('1', 'b')]);
  const { code, stdout } = await run(dir);
  assert.is(code, 1);
  assert.match(stdout, 'FAILED: 2 problems in 3 records; first at 1: void ReportDeleted for report 2');
  const findings = JSON.parse((await run(dir, true)).stdout) as Findings;
  assert.equal([findings.voidEvents, findings.problems], [2, 2]);
});

verify('a record whose key does not name its report exits 1', async ({ dir }) => {
  await appendToFileLog(dir, [created('1', 'a'), { key: '7', value: encodeEvent(created('2', 'b')) }]);
  const { code, stdout } = await run(dir);
  assert.is(code, 1);
  assert.match(stdout, 'first at 1: key "7" does not name the event\'s report 2');
});

verify('an event written twice exits 1 naming the duplicate', async ({ dir }) => {
  const event = created('1', 'a');
  await appendToFileLog(dir, [event, deleted('1'), event]);
  const { code, stdout } = await run(dir);
  assert.is(code, 1);
  assert.match(stdout, `first at 2: event id ${event.id} appears twice`);
});

verify('a file that is not a report store log exits 1 naming its magic bytes', async ({ dir }) => {
  await writeFile(eventsLogPath(dir), 'just some text, not a log\n');
  const { code, stdout } = await run(dir);
  assert.is(code, 1);
  assert.match(stdout, 'FAILED: the log cannot be read past byte 0: bad magic bytes');
});

verify(
  'a log whose magic bytes were cut short by a crash at its creation is a torn tail, as the server sees it',
  async ({ dir }) => {
    await writeFile(eventsLogPath(dir), FILE_MAGIC.subarray(0, 3));
    const { code, stdout } = await run(dir);
    assert.is(code, 1);
    assert.match(stdout, 'FAILED: 1 problem in 0 records; first at 0: torn tail');
    await expectSoundAfterServerStart(dir, 0);
  },
);

verify.run();

withKafka('reports verify', (brokers) => {
  const kafka = suite<{ topics: string[] }>('reports verify: Kafka', { topics: [] });

  kafka.after(async ({ topics }) => {
    await withAdmin(brokers, (admin) => admin.deleteTopics({ topics }));
  });

  const envFor = (context: { topics: string[] }, prefix: string) => {
    const topic = uniqueTopic(prefix);
    context.topics.push(topic);
    return { topic, env: kafkaEnv(brokers, topic) };
  };

  kafka('a sound topic written through a server exits 0', async (context) => {
    const { topic, env } = envFor(context, 'cli-verify-sound');
    const server = await startKafkaServer(brokers, {}, topic);
    try {
      const nextId = idSource();
      const ids = [nextId(), nextId(), nextId()];
      for (const id of ids) assert.is((await postReport(server, id, 'sound')).status, 200);
      assert.is((await deleteReport(server, ids[0] as string)).status, 204);
      const { code, stdout } = await reports(['verify'], { env: { ...env, REPORTS_DATA_DIR: server.dataDir } });
      assert.is(code, 0);
      assert.is(stdout, 'OK: 4 records, 0 void events, 2 live sealed reports opened with their keys\n');
    } finally {
      await server.dispose();
    }
  });

  kafka('a void event is counted but is not a fault: racing instances write them', async (context) => {
    const { topic, env } = envFor(context, 'cli-verify-void');
    await appendToTopic(brokers, topic, [created('1', 'first'), created('1', 'second')]);
    const { code, stdout } = await reports(['verify'], { env });
    assert.is(code, 0);
    assert.is(stdout, 'OK: 2 records, 1 void events, 0 live sealed reports opened with their keys\n');
  });

  kafka(
    'an event a producer wrote twice is counted as a copy, not a fault, while the copy changes nothing',
    async (context) => {
      const { topic, env } = envFor(context, 'cli-verify-copy');
      const create = created('1', 'once');
      const remove = deleted('2');
      await appendToTopic(brokers, topic, [create, create, created('2', 'b'), remove, remove]);
      const { code, stdout } = await reports(['verify'], { env });
      assert.is(code, 0);
      assert.is(
        stdout,
        "OK: 5 records, 2 void events (2 of them copies of an earlier record, written again by a retry of Kafka's producer), 0 live sealed reports opened with their keys\n",
      );
      const findings = JSON.parse((await reports(['verify', '--json'], { env })).stdout) as Findings & {
        copies: number;
      };
      assert.equal([findings.ok, findings.copies, findings.problems], [true, 2, 0]);
    },
  );

  kafka('another record under an event id already read exits 1, even when the fold voids it', async (context) => {
    const { topic, env } = envFor(context, 'cli-verify-same-id');
    const create = created('4', 'first');
    // The same event id on another create of the id: void (the report exists), but not a copy.
    const other = { ...created('4', 'second'), id: create.id };
    const [, clash] = await appendToTopic(brokers, topic, [create, other]);
    const { code, stdout } = await reports(['verify'], { env });
    assert.is(code, 1);
    assert.match(stdout, `first at ${clash?.partition}:${clash?.offset}: event id ${create.id} appears twice`);
  });

  kafka('an event written twice whose copy took effect exits 1 naming it', async (context) => {
    const { topic, env } = envFor(context, 'cli-verify-copy-effect');
    // Without a basis (expectedversion) the copy of the create makes the report again after its delete.
    const create = created('3', 'again');
    const [, , copy] = await appendToTopic(brokers, topic, [create, deleted('3'), create]);
    const { code, stdout } = await reports(['verify'], { env });
    assert.is(code, 1);
    assert.match(stdout, `first at ${copy?.partition}:${copy?.offset}: event id ${create.id} appears twice`);
  });

  kafka('a record that is not an event exits 1 naming its partition and offset', async (context) => {
    const { topic, env } = envFor(context, 'cli-verify-invalid');
    const [, bad] = await appendToTopic(brokers, topic, [created('1', 'a'), notAnEvent('1')]);
    const { code, stdout } = await reports(['verify'], { env });
    assert.is(code, 1);
    assert.match(stdout, `first at ${bad?.partition}:${bad?.offset}: not a valid event`);
  });

  kafka.run();
});
