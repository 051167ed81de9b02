// `reports events`: the log as NDJSON with positions, --from, --type, --follow, and records that
// are not events; on the file log (written directly or through a running server) and on Kafka.
import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ReportEvent } from '../../projections/events.js';
import { withTimeout } from '../helpers/async.js';
import { reports, startReports, lines } from '../helpers/cli.js';
import { created, deleted } from '../helpers/events.js';
import { appendToFileLog, notAnEvent } from '../helpers/file-history.js';
import { kafkaEnv, startKafkaServer, uniqueTopic, withAdmin, withKafka } from '../helpers/kafka.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';
import { deleteReport, idSource, postReport } from '../http/requests.js';

interface Line {
  readonly position: string;
  readonly time: string;
  readonly event?: ReportEvent;
  readonly invalid?: string;
}

const parse = (stdout: string): Line[] => lines(stdout).map((line) => JSON.parse(line) as Line);
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const history = [created('1', 'one'), created('2', 'two', 'blue'), deleted('1'), created('3', 'three')];

const file = suite<{ dir: string }>('reports events: file log');

file.before(async (context) => {
  context.dir = await tempDir('reports-events-');
  await appendToFileLog(context.dir, history);
});
file.after(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

file('prints one NDJSON line a record, with its position, time and CloudEvent, and exits 0', async ({ dir }) => {
  const { code, stdout, stderr } = await reports(['events'], { env: { REPORTS_DATA_DIR: dir } });
  assert.is(code, 0, stderr);
  const printed = parse(stdout);
  assert.equal(
    printed.map((line) => line.position),
    ['0', '1', '2', '3'],
  );
  assert.equal(
    printed.map((line) => line.event),
    history,
  );
  for (const line of printed) assert.match(line.time, ISO_TIME);
});

file('--from N starts at record N', async ({ dir }) => {
  const { code, stdout } = await reports(['events', '--from', '2'], { env: { REPORTS_DATA_DIR: dir } });
  assert.is(code, 0);
  assert.equal(
    parse(stdout).map((line) => line.position),
    ['2', '3'],
  );
});

file('--from at the head prints nothing and exits 0; past it, exits 2 naming the last position', async ({ dir }) => {
  const atHead = await reports(['events', '--from', '4'], { env: { REPORTS_DATA_DIR: dir } });
  assert.is(atHead.code, 0);
  assert.is(atHead.stdout, '');
  // From another log, or from before a restore: with --follow it skipped every event up to it.
  for (const follow of [[], ['--follow']]) {
    const past = await reports(['events', '--from', '99', ...follow], { env: { REPORTS_DATA_DIR: dir } });
    assert.is(past.code, 2);
    assert.is(past.stdout, '');
    assert.match(past.stderr, '--from is past the end of the log (its last position is 3)');
  }
});

file('--type ReportDeleted prints only the deletions', async ({ dir }) => {
  const { code, stdout } = await reports(['events', '--type', 'ReportDeleted'], { env: { REPORTS_DATA_DIR: dir } });
  assert.is(code, 0);
  assert.equal(
    parse(stdout).map((line) => [line.position, line.event?.type, line.event?.subject]),
    [['2', 'ReportDeleted', '1']],
  );
});

file('--type ReportCreated prints only the creations', async ({ dir }) => {
  const { stdout } = await reports(['events', '--type', 'ReportCreated'], { env: { REPORTS_DATA_DIR: dir } });
  assert.equal(
    parse(stdout).map((line) => line.event?.subject),
    ['1', '2', '3'],
  );
});

file('a bad --from exits 2 with the usage line', async ({ dir }) => {
  const { code, stderr } = await reports(['events', '--from', 'start'], { env: { REPORTS_DATA_DIR: dir } });
  assert.is(code, 2);
  assert.match(stderr, '--from must be N or P:O');
  assert.match(stderr, /^usage: reports events/m);
});

file(
  'a --from of a partition the file log does not have exits 2, rather than printing from the start',
  async ({ dir }) => {
    const { code, stdout, stderr } = await reports(['events', '--from', '5:3'], { env: { REPORTS_DATA_DIR: dir } });
    assert.is(code, 2);
    assert.is(stdout, '');
    assert.match(stderr, '--from must be N on the file log (it has one partition), got "5:3"');
  },
);

file('an unknown --type exits 2 naming the known types', async ({ dir }) => {
  const { code, stderr } = await reports(['events', '--type', 'ReportRenamed'], { env: { REPORTS_DATA_DIR: dir } });
  assert.is(code, 2);
  assert.match(stderr, '--type must be ReportCreated or ReportDeleted, got "ReportRenamed"');
  assert.match(stderr, /^usage: reports events/m);
});

file.run();

const odd = suite('reports events: records that are not events');

odd(
  'prints {"invalid": reason} with the position of a record that is not an event, and --type leaves it out',
  async () => {
    const dir = await tempDir('reports-events-invalid-');
    try {
      const event = created('5', 'five');
      await appendToFileLog(dir, [event, notAnEvent('5')]);
      const all = await reports(['events'], { env: { REPORTS_DATA_DIR: dir } });
      assert.is(all.code, 0);
      const [first, second] = parse(all.stdout);
      assert.equal(first?.event, event);
      assert.is(second?.position, '1');
      assert.is(second?.event, undefined);
      assert.match(second?.invalid ?? '', '/type: must be ReportCreated or ReportDeleted');
      const filtered = await reports(['events', '--type', 'ReportCreated'], { env: { REPORTS_DATA_DIR: dir } });
      assert.equal(
        parse(filtered.stdout).map((line) => line.position),
        ['0'],
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
);

odd.run();

const piped = suite('reports events: piped into a reader that stops early');
const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

piped(
  'exits quietly with the code of SIGPIPE when the reader goes away, as in `reports events | head -1`',
  async () => {
    const dir = await tempDir('reports-events-pipe-');
    try {
      // Far more than a pipe buffer holds, so the command is still writing when the reader leaves.
      await appendToFileLog(
        dir,
        Array.from({ length: 3000 }, (_, i) => created(String(i), `report ${i}`)),
      );
      const child = spawn(process.execPath, [CLI, 'events'], {
        env: { REPORTS_DATA_DIR: dir },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
      });
      // 'close': the exit and every byte of stderr read, so the check of stderr below sees all of it.
      const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
      const firstLine = new Promise<void>((resolve) => {
        child.stdout.once('data', () => {
          child.stdout.destroy();
          resolve();
        });
      });
      await withTimeout(firstLine, 15_000, 'the first line of output');
      assert.is(await withTimeout(exited, 15_000, 'the command to exit'), 141);
      assert.is(stderr, '');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
);

piped.run();

/** Follows the log with `reports events --follow`, writes `more` through `server`, and returns every line printed. */
async function followWhileWriting(
  env: Record<string, string>,
  before: number,
  write: () => Promise<void>,
  after: number,
): Promise<Line[]> {
  const follow = startReports(['events', '--follow'], { env });
  await follow.waitForLines(before, `the ${before} events already in the log`);
  await write();
  await follow.waitForLines(before + after, `the ${after} events written after --follow started`);
  follow.interrupt();
  const { code, stdout } = await follow.done;
  assert.is(code, 0);
  return parse(stdout);
}

const following = suite('reports events --follow: file log');

following('streams the events a running server appends after it started, until interrupted', async () => {
  const server = await startTestServer();
  try {
    const nextId = idSource();
    const [a, b] = [nextId(), nextId()];
    assert.is((await postReport(server, a, 'before')).status, 200);
    const printed = await followWhileWriting(
      { REPORTS_DATA_DIR: server.dataDir },
      1,
      async () => {
        assert.is((await postReport(server, b, 'after')).status, 200);
        assert.is((await deleteReport(server, a)).status, 204);
      },
      2,
    );
    assert.equal(
      printed.map((line) => [line.position, line.event?.type, line.event?.subject]),
      [
        ['0', 'ReportCreated', a],
        ['1', 'ReportCreated', b],
        ['2', 'ReportDeleted', a],
      ],
    );
  } finally {
    await server.dispose();
  }
});

following.run();

withKafka('reports events', (brokers) => {
  const kafka = suite<{ server: TestServer; topic: string; ids: string[]; env: Record<string, string> }>(
    'reports events: Kafka',
  );

  kafka.before(async (context) => {
    context.topic = uniqueTopic('cli-events');
    context.server = await startKafkaServer(brokers, {}, context.topic);
    context.env = { ...kafkaEnv(brokers, context.topic), REPORTS_DATA_DIR: context.server.dataDir };
    const nextId = idSource();
    context.ids = [nextId(), nextId(), nextId()];
    for (const id of context.ids) assert.is((await postReport(context.server, id, `report ${id}`)).status, 200);
    assert.is((await deleteReport(context.server, context.ids[0] as string)).status, 204);
  });
  kafka.after(async ({ server, topic }) => {
    await server?.dispose();
    await withAdmin(brokers, (admin) => admin.deleteTopics({ topics: [topic] }));
  });

  kafka('prints every event of the topic with its partition:offset position', async ({ env, ids }) => {
    const { code, stdout, stderr } = await reports(['events'], { env });
    assert.is(code, 0, stderr);
    const printed = parse(stdout);
    assert.is(printed.length, 4);
    for (const line of printed) assert.match(line.position, /^\d+:\d+$/);
    assert.equal(
      printed
        .filter((line) => line.event?.type === 'ReportCreated')
        .map((line) => line.event?.subject)
        .sort(),
      [...ids].sort(),
    );
    // One report's events share a partition, in order.
    const ofFirst = printed.filter((line) => line.event?.subject === ids[0]);
    assert.equal(
      ofFirst.map((line) => line.event?.type),
      ['ReportCreated', 'ReportDeleted'],
    );
  });

  kafka('--from P:O skips what lies before the cursor on that partition', async ({ env }) => {
    const all = parse((await reports(['events'], { env })).stdout);
    const skipped = all.find((line) => line.position.endsWith(':0'));
    assert.ok(skipped, 'some partition holds an event at offset 0');
    const partition = skipped.position.split(':')[0] ?? '';
    const { code, stdout } = await reports(['events', '--from', `${partition}:1`], { env });
    assert.is(code, 0);
    const rest = parse(stdout)
      .map((line) => line.position)
      .sort();
    assert.equal(
      rest,
      all
        .map((line) => line.position)
        .filter((position) => position !== skipped.position)
        .sort(),
    );
  });

  kafka('--type ReportDeleted prints only the deletion', async ({ env, ids }) => {
    const { stdout } = await reports(['events', '--type', 'ReportDeleted'], { env });
    assert.equal(
      parse(stdout).map((line) => [line.event?.type, line.event?.subject]),
      [['ReportDeleted', ids[0]]],
    );
  });

  kafka(
    '--follow streams the events a server on the topic writes after it started, until interrupted',
    async ({ env, server }) => {
      const fresh = idSource()();
      const printed = await followWhileWriting(
        env,
        4,
        async () => {
          assert.is((await postReport(server, fresh, 'followed')).status, 200);
        },
        1,
      );
      assert.is(printed.length, 5);
      assert.equal(printed.at(-1)?.event?.subject, fresh);
      assert.equal(
        printed.at(-1)?.event?.data,
        { id: fresh, name: 'followed' },
        'opened with its key from the key topic',
      );
    },
  );

  kafka.run();
});
