// `reports snapshot` and how the server uses snapshots: it starts from the newest valid one and
// folds only the tail; corrupt snapshots, snapshots of another log and snapshots beyond the head
// are skipped with a warning; with REPORTS_SNAPSHOT_EVERY the server writes its own.
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openFileLogReader } from '../../src/log/file/file-log-reader.js';
import { stateDigest } from '../../src/projector/fold-log.js';
import { decodeSnapshot } from '../../src/snapshot/snapshot-format.js';
import { snapshotDir, writeSnapshot } from '../../src/snapshot/snapshot-store.js';
import { collect, withTimeout } from '../helpers/async.js';
import { lines, reports, replaySummary } from '../helpers/cli.js';
import { created, deleted } from '../helpers/events.js';
import { appendToFileLog, flipByte } from '../helpers/file-history.js';
import { kafkaEnv, uniqueTopic, withAdmin, withKafka } from '../helpers/kafka.js';
import { testSnapshot } from '../helpers/snapshots.js';
import { memoryLogger, startTestServer, tempDir, type TestServer } from '../helpers/server.js';
import { deleteReport, idSource, postReport } from '../http/requests.js';
import { readRecords } from '../../src/log/record-batches.js';

const nextId = idSource();
const snapshotName = (records: number) => `snapshot-${String(records).padStart(16, '0')}.snap`;

async function fileLogIdentity(dataDir: string): Promise<string> {
  const log = await openFileLogReader({ dir: dataDir, logger: memoryLogger().logger });
  await log.close();
  return log.identity;
}

async function snapshotFiles(dataDir: string): Promise<string[]> {
  return (await readdir(snapshotDir(dataDir)).catch(() => [] as string[]))
    .filter((name) => name.endsWith('.snap'))
    .sort();
}

/** Creates `count` reports through `server` and deletes the first; returns the ids. */
async function writeReports(server: TestServer, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, () => nextId());
  for (const id of ids) assert.is((await postReport(server, id, `report ${id}`)).status, 200);
  assert.is((await deleteReport(server, ids[0] as string)).status, 204);
  return ids;
}

/** `reports snapshot` on `env`; fails unless it exits 0. */
async function snapshot(env: Record<string, string | undefined>): Promise<string> {
  const { code, stdout, stderr } = await reports(['snapshot'], { env });
  assert.is(code, 0, stderr);
  return stdout;
}

/** Starts a server on `dataDir`, checks what it folded, and stops it. */
async function expectRestart(
  dataDir: string,
  { applied, warning }: { applied: number; warning?: RegExp },
  env: Record<string, string | undefined> = {},
): Promise<void> {
  const server = await startTestServer(env, { dataDir });
  try {
    assert.is(server.projector.progress().applied, applied, 'records folded at start');
    assert.is(
      stateDigest(server.projector.model.reports, await server.keys.lookup()),
      (await replaySummary({ ...env, REPORTS_DATA_DIR: dataDir })).digest,
      'read model against a full replay',
    );
    const warnings = server
      .logLines()
      .filter((line) => line['level'] === 40)
      .map((line) => String(line['msg']));
    if (warning)
      assert.ok(
        warnings.some((msg) => warning.test(msg)),
        `a warning matching ${warning}; got ${JSON.stringify(warnings)}`,
      );
    else assert.equal(warnings, []);
  } finally {
    await server.dispose();
  }
}

const file = suite<{ dir: string }>('reports snapshot: file log');

file.before.each(async (context) => {
  context.dir = await tempDir('reports-snapshot-');
});
file.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

file(
  'writes a checksummed snapshot of the whole log under <data dir>/snapshots and prints its position and digest',
  async ({ dir }) => {
    await appendToFileLog(dir, [created('1', 'a'), created('2', 'b', 'x'), deleted('1'), created('3', 'c')]);
    const stdout = await snapshot({ REPORTS_DATA_DIR: dir });
    const path = join(snapshotDir(dir), snapshotName(4));
    const { digest } = await replaySummary({ REPORTS_DATA_DIR: dir });
    assert.equal(lines(stdout), [
      `snapshot:        ${path}`,
      'position:        4',
      'events folded:   4',
      'live reports:    2',
      `state digest:    sha256:${digest}`,
    ]);
    const decoded = decodeSnapshot(await readFile(path));
    assert.ok(decoded.ok);
    assert.equal(
      [decoded.snapshot.log, decoded.snapshot.model.cursor, decoded.snapshot.model.counts.records],
      [await fileLogIdentity(dir), new Map([[0, 4]]), 4],
    );
    assert.match(decoded.snapshot.log, /^file:events\.log#[0-9a-f]{8}$/);
    assert.equal(
      new Map(decoded.snapshot.model.reports),
      new Map([
        ['2', { name: 'b', tag: 'x' }],
        ['3', { name: 'c' }],
      ]),
    );
  },
);

file('runs beside a running server, which keeps writing', async ({ dir }) => {
  const server = await startTestServer({}, { dataDir: dir });
  try {
    await writeReports(server, 3);
    assert.match(await snapshot({ REPORTS_DATA_DIR: dir }), 'position:        4');
    await writeReports(server, 2);
  } finally {
    await server.dispose();
  }
  assert.equal(await snapshotFiles(dir), [snapshotName(4)]);
});

file('a server started after it folds only the tail, and its read model equals a full replay', async ({ dir }) => {
  const server = await startTestServer({}, { dataDir: dir });
  try {
    await writeReports(server, 5); // records 0..5
    await snapshot({ REPORTS_DATA_DIR: dir });
    await writeReports(server, 3); // 4 more records
  } finally {
    await server.dispose();
  }
  await expectRestart(dir, { applied: 4 });
});

file('a second snapshot starts from the first and folds only what came after it', async ({ dir }) => {
  await appendToFileLog(dir, [created('1', 'a'), created('2', 'b')]);
  await snapshot({ REPORTS_DATA_DIR: dir });
  await appendToFileLog(dir, [deleted('1'), created('3', 'c'), created('4', 'd')]);
  const stdout = await snapshot({ REPORTS_DATA_DIR: dir });
  assert.match(stdout, 'events folded:   5 (3 after the previous snapshot)');
  assert.match(stdout, `state digest:    sha256:${(await replaySummary({ REPORTS_DATA_DIR: dir })).digest}`);
  assert.equal(await snapshotFiles(dir), [snapshotName(2), snapshotName(5)]);
  await expectRestart(dir, { applied: 0 });
});

file('a corrupt snapshot is ignored with a warning, and the server folds the whole log', async ({ dir }) => {
  await appendToFileLog(dir, [created('1', 'a'), created('2', 'b'), deleted('1')]);
  await snapshot({ REPORTS_DATA_DIR: dir });
  await flipByte(join(snapshotDir(dir), snapshotName(3)), 100);
  await expectRestart(dir, { applied: 3, warning: /corrupt snapshot/ });
});

file('an older valid snapshot is used when the newest is corrupt', async ({ dir }) => {
  await appendToFileLog(dir, [created('1', 'a'), created('2', 'b'), deleted('1'), created('3', 'c')]);
  await snapshot({ REPORTS_DATA_DIR: dir });
  await appendToFileLog(dir, [created('4', 'd'), deleted('2'), created('5', 'e')]);
  await snapshot({ REPORTS_DATA_DIR: dir });
  await flipByte(join(snapshotDir(dir), snapshotName(7)), 80);
  await expectRestart(dir, { applied: 3, warning: /corrupt snapshot/ });
});

file('a snapshot of another log is ignored with a warning', async ({ dir }) => {
  await appendToFileLog(dir, [created('1', 'a'), created('2', 'b')]);
  const foreign = new Map([['99', { name: 'from elsewhere' }]]);
  await writeSnapshot(
    snapshotDir(dir),
    testSnapshot({
      log: 'kafka:some-cluster/reports.events',
      cursor: new Map([[0, 1]]),
      events: 1,
      createdAt: new Date().toISOString(),
      reports: foreign,
      keys: new Map(),
      anchors: new Map(),
    }),
  );
  await expectRestart(dir, { applied: 2, warning: /snapshot of another log/ });
});

file('a snapshot beyond the head of the log is ignored with a warning', async ({ dir }) => {
  await appendToFileLog(dir, [created('1', 'a'), created('2', 'b')]);
  await writeSnapshot(
    snapshotDir(dir),
    testSnapshot({
      log: await fileLogIdentity(dir),
      cursor: new Map([[0, 50]]),
      events: 50,
      createdAt: new Date().toISOString(),
      reports: new Map([['99', { name: 'ghost' }]]),
      keys: new Map(),
      anchors: new Map(),
    }),
  );
  await expectRestart(dir, { applied: 2, warning: /beyond the head/ });
});

file('a snapshot of another history put in place of the log file is ignored', async ({ dir }) => {
  await appendToFileLog(dir, [created('1', 'a'), created('2', 'b')]);
  await snapshot({ REPORTS_DATA_DIR: dir });
  await rm(join(dir, 'events.log'));
  await appendToFileLog(dir, [created('7', 'other'), created('8', 'history'), created('9', 'longer')]);
  await expectRestart(dir, { applied: 3, warning: /another log/ });
});

file(
  'a server started from a snapshot scans only the log after it, and still reads the history before it when asked',
  async ({ dir }) => {
    await appendToFileLog(dir, [created('1', 'a'), created('2', 'b', 'x')]);
    await appendToFileLog(dir, [created('3', 'c'), deleted('1')]);
    await snapshot({ REPORTS_DATA_DIR: dir });
    await appendToFileLog(dir, [created('4', 'd')]);
    const server = await startTestServer({}, { dataDir: dir });
    try {
      const opened = server.logLines().find((line) => line['msg'] === 'opened the embedded event log');
      assert.equal(
        [opened?.['records'], opened?.['scannedFrom']],
        [5, 2],
        'the scan resumed at the batch of the last record folded',
      );
      assert.is(server.projector.progress().applied, 1, 'only the record after the snapshot folded');
      assert.equal(
        new Map(server.projector.model.reports),
        new Map([
          ['2', { name: 'b', tag: 'x' }],
          ['3', { name: 'c' }],
          ['4', { name: 'd' }],
        ]),
      );
      const earliest = await collect(readRecords(server.log, new Map()));
      assert.equal(
        earliest.map((record) => record.key),
        ['1', '2', '3', '1', '4'],
      );
    } finally {
      await server.dispose();
    }
  },
);

file('the server writes a snapshot by itself every REPORTS_SNAPSHOT_EVERY records', async ({ dir }) => {
  const env = { REPORTS_SNAPSHOT_EVERY: '5' };
  const server = await startTestServer(env, { dataDir: dir });
  const appeared = async (name: string) => {
    const poll = async () => {
      while (!(await snapshotFiles(dir)).includes(name)) await new Promise((resolve) => setTimeout(resolve, 10));
    };
    await withTimeout(poll(), 10_000, `${name} to be written`);
  };
  try {
    await writeReports(server, 4); // 5 records
    await appeared(snapshotName(5));
    await writeReports(server, 4); // 10 records
    await appeared(snapshotName(10));
    await writeReports(server, 1); // 12 records: no snapshot due
    assert.ok(server.logLines().some((line) => line['msg'] === 'wrote a snapshot of the read model'));
  } finally {
    await server.dispose();
  }
  assert.equal(await snapshotFiles(dir), [snapshotName(5), snapshotName(10)]);
  const decoded = decodeSnapshot(await readFile(join(snapshotDir(dir), snapshotName(10))));
  assert.ok(decoded.ok);
  assert.equal([decoded.snapshot.model.cursor, decoded.snapshot.model.counts.records], [new Map([[0, 10]]), 10]);
  await expectRestart(dir, { applied: 2 }, env);
});

file.run();

withKafka('reports snapshot', (brokers) => {
  const kafka = suite<{ dir: string; topics: string[] }>('reports snapshot: Kafka', { dir: '', topics: [] });

  kafka.before.each(async (context) => {
    context.dir = await tempDir('reports-snapshot-kafka-');
  });
  kafka.after.each(async ({ dir }) => {
    await rm(dir, { recursive: true, force: true });
  });
  kafka.after(async ({ topics }) => {
    await withAdmin(brokers, (admin) => admin.deleteTopics({ topics }));
  });

  const envFor = (context: { dir: string; topics: string[] }) => {
    const topic = uniqueTopic('cli-snapshot');
    context.topics.push(topic);
    return { ...kafkaEnv(brokers, topic), REPORTS_DATA_DIR: context.dir };
  };

  kafka('a server on the topic started after a snapshot folds only the tail', async (context) => {
    const env = envFor(context);
    const server = await startTestServer(env, { dataDir: context.dir });
    try {
      await writeReports(server, 4); // 5 records
      assert.match(await snapshot(env), 'events folded:   5');
      await writeReports(server, 2); // 3 more
    } finally {
      await server.dispose();
    }
    await expectRestart(context.dir, { applied: 3 }, env);
  });

  kafka('a snapshot of another topic is ignored with a warning', async (context) => {
    const first = envFor(context);
    const server = await startTestServer(first, { dataDir: context.dir });
    try {
      await writeReports(server, 2);
    } finally {
      await server.dispose();
    }
    await snapshot(first);
    const second = envFor(context);
    await expectRestart(context.dir, { applied: 0, warning: /snapshot of another log/ }, second);
  });

  kafka.run();
});
