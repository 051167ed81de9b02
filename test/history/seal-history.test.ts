// `reports seal-history` on a stopped embedded log written before erasure: every create in the
// clear sealed, record for record (the same records at the same positions, with their event ids
// and times), the same state digest, every live report opening with its new key, no deleted
// report's name in any file, the snapshots gone; refused while a server runs; a second run has
// nothing to do.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { cp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeEvent } from '../../projections/codec.js';
import { openFileLogReader } from '../../src/log/file/file-log-reader.js';
import { readRecords } from '../../src/log/record-batches.js';
import { writeHistory } from '../bench/history.js';
import { collect } from '../helpers/async.js';
import { reports } from '../helpers/cli.js';
import { serverDigest } from '../helpers/digest.js';
import { basedOn, created, deleted } from '../helpers/events.js';
import { appendToFileLog } from '../helpers/file-history.js';
import { openedReport } from '../helpers/opened.js';
import { memoryLogger, startTestServer, tempDir } from '../helpers/server.js';
import { mountSmallDisk } from '../helpers/small-disk.js';

/** Each record as [key, timestamp, event id, type]. */
async function recordsOf(dataDir: string): Promise<[string, number, string, string][]> {
  const log = await openFileLogReader({ dir: dataDir, logger: memoryLogger().logger });
  try {
    return (await collect(readRecords(log, new Map()))).map(({ key, timestampMs, value }) => {
      const decoded = decodeEvent(value);
      return [key, timestampMs, decoded.ok ? decoded.event.id : 'invalid', decoded.ok ? decoded.event.type : 'invalid'];
    });
  } finally {
    await log.close();
  }
}

/** The files under `dir` holding `text`. */
async function filesHolding(dir: string, text: string | RegExp): Promise<string[]> {
  const hits: string[] = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    if (!(await stat(path)).isFile()) continue;
    const content = (await readFile(path)).toString('latin1');
    if (typeof text === 'string' ? content.includes(text) : text.test(content)) hits.push(path);
  }
  return hits;
}

async function digestOfServer(dataDir: string, env: Record<string, string> = {}): Promise<string> {
  const server = await startTestServer(env, { dataDir });
  try {
    return await serverDigest(server);
  } finally {
    await server.close();
  }
}

const field = (stdout: string, name: string) => new RegExp(`^${name}:\\s+(.*)$`, 'm').exec(stdout)?.[1] ?? '';
const sealHistory = (dataDir: string, tty = false) =>
  reports(['seal-history'], { env: { REPORTS_DATA_DIR: dataDir }, tty });

const rewrite = suite<{ dir: string }>('reports seal-history');
rewrite.before.each(async (context) => {
  context.dir = await tempDir('reports-seal-history-');
});
rewrite.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

rewrite(
  "seals every create in the clear record for record, with the same digest, and no deleted report's name is left in any file",
  async ({ dir }) => {
    const dataDir = join(dir, 'data');
    await writeHistory(dataDir, { firstId: 1000n, reports: 3000, deleteEven: true, plain: true });
    // A server of this version ran on it: snapshots (of content in the clear), a sealed report, a delete recorded.
    const server = await startTestServer({ REPORTS_SNAPSHOT_EVERY: '1000' }, { dataDir });
    let before: string;
    try {
      assert.is(
        (await server.request('/reports', { method: 'POST', json: '{"id": 5, "name": "sealed since"}' })).status,
        200,
      );
      assert.is((await server.request('/reports/1001', { method: 'DELETE' })).status, 204);
      before = await serverDigest(server);
    } finally {
      await server.close();
    }
    const records = await recordsOf(dataDir);
    assert.ok((await readdir(join(dataDir, 'snapshots'))).length > 0, 'the server wrote snapshots');
    const { code, stdout, stderr } = await sealHistory(dataDir);
    assert.is(code, 0, stderr);
    assert.is(
      field(stdout, 'sealed'),
      '3000 creates written in the clear: 1499 of live reports (under new keys), 1501 of deleted reports and 0 void (under keys destroyed at once)',
    );
    assert.is(field(stdout, 'events'), `${records.length} (positions unchanged)`);
    assert.is(field(stdout, 'state digest'), `${before} (before and after)`);
    assert.match(field(stdout, 'snapshots'), /^[1-9]\d* removed/);
    assert.equal(
      await recordsOf(dataDir),
      records,
      'the same records, keys, times and event ids at the same positions',
    );
    assert.equal(await filesHolding(dataDir, 'Quarterly report'), [], 'no name in the clear, deleted or live');
    assert.equal(await filesHolding(dataDir, '"finance"'), [], 'no tag in the clear');
    assert.not.ok((await readdir(dataDir)).some((name) => name === 'snapshots' || name.endsWith('.staging')));
    const after = await startTestServer({}, { dataDir });
    try {
      assert.is(await serverDigest(after), before);
      assert.equal(await openedReport(after.projector.model.reports, after.keys, '1003'), {
        name: 'Quarterly report 0000003',
        tag: 'finance',
      });
      assert.equal(await openedReport(after.projector.model.reports, after.keys, '5'), { name: 'sealed since' });
      assert.is((await after.request('/reports/1002', { method: 'DELETE' })).status, 404);
      assert.is((await after.request('/reports/1003', { method: 'DELETE' })).status, 204);
    } finally {
      await after.close();
    }
    const again = await sealHistory(dataDir);
    assert.is(field(again.stdout, 'sealed'), 'nothing: every create in the log is sealed already');
  },
);

rewrite(
  'seals void creates in the clear under keys destroyed at once, and keeps records that are not events as they are',
  async ({ dir }) => {
    const dataDir = join(dir, 'data');
    await appendToFileLog(dataDir, [
      created('1', 'first-name-marker'),
      created('1', 'void-name-marker'),
      basedOn(deleted('1'), 1),
      { key: '9', value: Buffer.from('not an event') },
      created('2', 'live-name-marker', 'live-tag'),
    ]);
    const before = await digestOfServer(dataDir);
    // A log an earlier version's restore kept: not rewritten, and named.
    await cp(join(dataDir, 'events.log'), join(dataDir, 'events.log.before-restore-2026-01-01T00-00-00-000Z'));
    const { code, stdout, stderr } = await sealHistory(dataDir, true);
    assert.is(code, 0, stderr);
    assert.match(stdout, /seal \[.*\] 100% \| 5\/5 events/);
    assert.is(
      field(stdout, 'kept logs'),
      'events.log.before-restore-2026-01-01T00-00-00-000Z: kept by earlier restores and not rewritten; they may hold content in the clear: delete them',
    );
    await rm(join(dataDir, 'events.log.before-restore-2026-01-01T00-00-00-000Z'));
    assert.is(
      field(stdout, 'sealed'),
      '3 creates written in the clear: 1 of live reports (under new keys), 1 of deleted reports and 1 void (under keys destroyed at once)',
    );
    assert.equal(await filesHolding(dataDir, /first-name|void-name|live-name|live-tag/), []);
    assert.ok(
      (await filesHolding(dataDir, 'not an event')).length > 0,
      'a record that is not an event stays as it was',
    );
    assert.is(await digestOfServer(dataDir), before);
  },
);

rewrite(
  'refuses while a server runs on the data directory, and where there is no log; changes nothing',
  async ({ dir }) => {
    const dataDir = join(dir, 'data');
    await appendToFileLog(dataDir, [created('1', 'one')]);
    await cp(join(dataDir, 'events.log'), join(dir, 'copy'));
    const server = await startTestServer({}, { dataDir });
    try {
      const refused = await sealHistory(dataDir);
      assert.is(refused.code, 1);
      assert.match(
        refused.stderr,
        `refusing to rewrite the log of ${dataDir}: process ${process.pid} (a server or a reports tool) is running on it; stop it first`,
      );
    } finally {
      await server.close();
    }
    assert.ok((await readFile(join(dataDir, 'events.log'))).equals(await readFile(join(dir, 'copy'))));
    const none = await sealHistory(join(dir, 'nowhere'));
    assert.equal(
      [none.code, none.stderr.trim()],
      [1, `reports seal-history: no event log at ${join(dir, 'nowhere', 'events.log')} (REPORTS_DATA_DIR)`],
    );
    const kafka = await reports(['seal-history'], { env: { KAFKA_BROKERS: '127.0.0.1:9092' } });
    assert.is(kafka.code, 2);
  },
);

rewrite(
  "refuses, before putting a key, a disk the sealed copy and its keys would leave with less than the log's reserve (64 MiB), and seals where they fit",
  async () => {
    // 20,000 creates in the clear: a log of about 6.5 MB, whose sealed copy and keys the check puts
    // at about 12 MB. On 72 MiB about 65.5 MiB are free: more than the reserve, less than the reserve
    // and the estimate. On 90 MiB both fit.
    const history = async (dataDir: string) =>
      writeHistory(dataDir, { firstId: 1n, reports: 20_000, deleteEven: false, plain: true });
    const small = await mountSmallDisk(72 * 1024 * 1024);
    try {
      const dataDir = join(small.dir, 'data');
      await history(dataDir);
      const keysBefore = await stat(join(dataDir, 'keys.db')).then(
        (info) => info.size,
        () => 0,
      );
      const logBefore = await readFile(join(dataDir, 'events.log'));
      for (let run = 0; run < 2; run += 1) {
        const { code, stderr } = await sealHistory(dataDir);
        assert.is(code, 1);
        assert.match(stderr, 'not enough free space for the sealed copy of the log and its keys');
        assert.is(
          await stat(join(dataDir, 'keys.db')).then(
            (info) => info.size,
            () => 0,
          ),
          keysBefore,
          'no key put',
        );
      }
      assert.ok(logBefore.equals(await readFile(join(dataDir, 'events.log'))), 'the log as it was');
    } finally {
      await small.unmount();
    }
    const large = await mountSmallDisk(90 * 1024 * 1024);
    try {
      const dataDir = join(large.dir, 'data');
      await history(dataDir);
      const { code, stderr } = await sealHistory(dataDir);
      assert.is(code, 0, stderr);
    } finally {
      await large.unmount();
    }
  },
);

rewrite.run();
