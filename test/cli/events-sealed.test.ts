// `reports events` on sealed content: a live report's create prints opened (name and tag in place
// of `sealed`, the key id beside the event); a create whose key is destroyed (a deleted report's, a
// void create's) prints without content, marked erased, and its name is in no line; a key that
// does not open its box prints unopenable; plain events print as they are. On the file log
// (written through a server, or directly) and on Kafka, and with --follow.
import { rm } from 'node:fs/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeEvent } from '../../projections/codec.js';
import type { ReportEvent } from '../../projections/events.js';
import { keyIdText } from '../../src/keys/key-store.js';
import { openFileLog } from '../../src/log/file/file-log.js';
import { lines, reports, startReports } from '../helpers/cli.js';
import { basedOn, created } from '../helpers/events.js';
import { appendToFileLog } from '../helpers/file-history.js';
import { kafkaEnv, startKafkaServer, uniqueTopic, withAdmin, withKafka } from '../helpers/kafka.js';
import { appendSealedToFileLog, sealedCreate } from '../helpers/sealed-history.js';
import { memoryLogger, startTestServer, tempDir, type TestServer } from '../helpers/server.js';
import { deleteReport, distinctive, idSource, postReport } from '../http/requests.js';

interface Line {
  readonly position: string;
  readonly opened?: string;
  readonly erased?: true;
  readonly unopenable?: true;
  readonly event: ReportEvent;
}

const parse = (stdout: string): Line[] => lines(stdout).map((line) => JSON.parse(line) as Line);
const creates = (printed: Line[]) => printed.filter((line) => line.event.type === 'ReportCreated');

/** Writes a tagged live report, a live one with an Idempotency-Key and a deleted one through `server`. */
async function writeThree(
  server: TestServer,
): Promise<{ live: string; keyed: string; gone: string; goneName: string }> {
  const nextId = idSource();
  const [live, keyed, gone] = [nextId(), nextId(), nextId()];
  const goneName = distinctive('deleted name');
  assert.is((await postReport(server, live, 'Q3 revenue', 'finance')).status, 200);
  assert.is(
    (
      await server.request('/reports', {
        method: 'POST',
        json: `{"id": ${keyed}, "name": "draft"}`,
        headers: { 'Idempotency-Key': `events-${keyed}` },
      })
    ).status,
    200,
  );
  assert.is((await postReport(server, gone, goneName, 'secret tag')).status, 200);
  assert.is((await deleteReport(server, gone)).status, 204);
  return { live, keyed, gone, goneName };
}

function expectThree(stdout: string, { live, keyed, gone, goneName }: Awaited<ReturnType<typeof writeThree>>): void {
  const printed = creates(parse(stdout));
  const of = (id: string) => printed.find((line) => line.event.subject === id);
  assert.equal(of(live)?.event.data, { id: live, name: 'Q3 revenue', tag: 'finance' });
  assert.match(of(live)?.opened ?? '', /^[A-Za-z0-9_-]+$/);
  assert.is(of(live)?.erased, undefined);
  assert.equal(of(keyed)?.event.data, { id: keyed, name: 'draft', idempotencyKey: `events-${keyed}` });
  const erased = of(gone);
  assert.is(erased?.erased, true);
  assert.is(erased?.opened, undefined);
  assert.equal(Object.keys(erased?.event.data ?? {}), ['id', 'sealed']);
  assert.equal(Object.keys((erased?.event.data as { sealed: object }).sealed), ['key']);
  assert.not.match(stdout, goneName);
  assert.not.match(stdout, 'secret tag');
}

const file = suite('reports events: sealed content on the file log');

file('a live report prints opened with its key, a deleted one erased, its name in no line', async () => {
  const server = await startTestServer();
  try {
    const written = await writeThree(server);
    const { code, stdout, stderr } = await reports(['events'], { env: { REPORTS_DATA_DIR: server.dataDir } });
    assert.is(code, 0, stderr);
    expectThree(stdout, written);
    assert.equal(
      parse(stdout).map((line) => line.event.type),
      ['ReportCreated', 'ReportCreated', 'ReportCreated', 'ReportDeleted'],
    );
  } finally {
    await server.dispose();
  }
});

file('a void create whose key was destroyed prints erased; plain events print as they are, unmarked', async () => {
  const dir = await tempDir('reports-events-sealed-');
  try {
    const plain = created('5', 'written before erasure', 'old');
    await appendToFileLog(dir, [plain]);
    await appendSealedToFileLog(
      dir,
      [created('1', 'first'), basedOn(created('1', 'loses the race'), 0)],
      async (keys, [, voidKey]) => keys.destroy([voidKey?.id ?? Buffer.alloc(0)]),
    );
    const { code, stdout } = await reports(['events'], { env: { REPORTS_DATA_DIR: dir } });
    assert.is(code, 0);
    const [first, second, third] = parse(stdout);
    assert.equal(Object.keys(first ?? {}), ['position', 'time', 'event']);
    assert.equal(first?.event, plain);
    assert.equal([second?.event.data, second?.opened !== undefined], [{ id: '1', name: 'first' }, true]);
    assert.is(third?.erased, true);
    assert.not.match(stdout, 'loses the race');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

file('a key that does not open its box prints unopenable, without the box', async () => {
  const dir = await tempDir('reports-events-unopenable-');
  try {
    const log = await openFileLog({ dir, logger: memoryLogger().logger });
    // Sealed for a create decided on no version, then written as decided on version 0: the associated data differs.
    const { event, key } = sealedCreate(created('7', 'bound to another event'), log.keyStore());
    await log.append([{ key: '7', value: encodeEvent(basedOn(event, 0)), contentKey: key }]).finally(() => log.close());
    const [printed] = parse((await reports(['events'], { env: { REPORTS_DATA_DIR: dir } })).stdout);
    assert.is(printed?.unopenable, true);
    assert.is(printed?.erased, undefined);
    assert.equal(printed?.event.data, { id: '7', sealed: { key: keyIdText(key.id) } });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

file('--follow prints a create written after it started opened, asking the key store for its key', async () => {
  const server = await startTestServer();
  try {
    const nextId = idSource();
    const [before, after] = [nextId(), nextId()];
    assert.is((await postReport(server, before, 'before')).status, 200);
    const follow = startReports(['events', '--follow'], { env: { REPORTS_DATA_DIR: server.dataDir } });
    await follow.waitForLines(1, 'the event already in the log');
    assert.is((await postReport(server, after, 'after', 'followed')).status, 200);
    await follow.waitForLines(2, 'the create written after --follow started');
    follow.interrupt();
    const { code, stdout } = await follow.done;
    assert.is(code, 0);
    assert.equal(
      parse(stdout).map((line) => [line.event.data, line.opened !== undefined]),
      [
        [{ id: before, name: 'before' }, true],
        [{ id: after, name: 'after', tag: 'followed' }, true],
      ],
    );
  } finally {
    await server.dispose();
  }
});

file('--follow prints a later create whose key the store does not hold erased, once it looked again', async () => {
  const dir = await tempDir('reports-events-follow-');
  const log = await openFileLog({ dir, logger: memoryLogger().logger });
  try {
    await log.append([{ key: '1', value: encodeEvent(created('1', 'before')) }]);
    const follow = startReports(['events', '--follow'], { env: { REPORTS_DATA_DIR: dir } });
    await follow.waitForLines(1, 'the event already in the log');
    // A key minted and never put: as a create of another producer, or one whose key file was lost.
    const { event } = sealedCreate(created('2', 'never keyed'), log.keyStore());
    await log.append([{ key: '2', value: encodeEvent(event) }]);
    // The last batch waits for its keys (the server writes them beside it): a batch after it shows
    // it is no write in progress.
    await log.append([{ key: '3', value: encodeEvent(created('3', 'after it')) }]);
    await follow.waitForLines(3, 'the creates written after --follow started');
    follow.interrupt();
    const [, later, last] = parse((await follow.done).stdout);
    assert.equal([later?.erased, later?.event.subject], [true, '2']);
    assert.equal([last?.erased, last?.event.subject], [undefined, '3']);
  } finally {
    await log.close();
    await rm(dir, { recursive: true, force: true });
  }
});

file.run();

withKafka('reports events, sealed', (brokers) => {
  const kafka = suite('reports events: sealed content on Kafka');

  kafka('a live report prints opened with its key from the key topic, a deleted one erased', async () => {
    const topic = uniqueTopic('cli-events-sealed');
    const server = await startKafkaServer(brokers, {}, topic);
    try {
      const written = await writeThree(server);
      const { code, stdout, stderr } = await reports(['events'], { env: kafkaEnv(brokers, topic) });
      assert.is(code, 0, stderr);
      expectThree(stdout, written);
    } finally {
      await server.dispose();
      await withAdmin(brokers, (admin) => admin.deleteTopics({ topics: [topic, `${topic}.keys`] }));
    }
  });

  kafka.run();
});
