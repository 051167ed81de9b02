// A snapshot belongs to the history it folded. The scenario of a restore from a backup: the log
// file is put back to an older copy and written on, so its head passes the snapshot's position
// while the records there are others; even when a batch starts exactly at the snapshot's resume
// byte, with another number of records before it.
import { copyFile, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeSnapshot } from '../../src/snapshot/snapshot-format.js';
import { snapshotDir } from '../../src/snapshot/snapshot-store.js';
import { reports, replaySummary } from '../helpers/cli.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';
import { deleteReport, postReport, reportBody } from '../http/requests.js';
import { SEAL_TAG_BYTES } from '../../projections/sealing.js';

async function createReports(server: TestServer, from: number, to: number): Promise<void> {
  for (let id = from; id <= to; id += 1) assert.is((await postReport(server, String(id), `report ${id}`)).status, 200);
}

const restored = suite<{ dir: string }>('a snapshot on a restored file log');
restored.before.each(async (context) => {
  context.dir = await tempDir('reports-restored-');
});
restored.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

restored('is ignored with a warning: the server folds the restored log and answers from it', async ({ dir }) => {
  const log = join(dir, 'events.log');
  let server = await startTestServer({}, { dataDir: dir });
  await createReports(server, 1, 10);
  await server.close();
  await copyFile(log, join(dir, 'events.log.backup'));
  server = await startTestServer({}, { dataDir: dir });
  await createReports(server, 11, 25);
  await server.close();
  const { code, stderr } = await reports(['snapshot'], { env: { REPORTS_DATA_DIR: dir } });
  assert.is(code, 0, stderr);
  await copyFile(join(dir, 'events.log.backup'), log);
  server = await startTestServer({}, { dataDir: dir });
  await createReports(server, 201, 215);
  await server.close();

  server = await startTestServer({}, { dataDir: dir });
  try {
    const warning = server
      .logLines()
      .find((line) => line['level'] === 40 && String(line['msg']).includes('another history'));
    assert.is(warning?.['reason'], 'the record at 0:24 is not the one it folded');
    assert.is((await deleteReport(server, '20')).status, 404);
    assert.is((await deleteReport(server, '205')).status, 204);
  } finally {
    await server.close();
  }
});

/** The byte at which the scan of the snapshot of `records` records may resume (its resume point). */
async function resumeByte(dir: string, records: number): Promise<number> {
  const decoded = decodeSnapshot(
    await readFile(join(snapshotDir(dir), `snapshot-${String(records).padStart(16, '0')}.snap`)),
  );
  assert.ok(decoded.ok);
  const [offset, byte] = (decoded.snapshot.resume ?? '').split('@').map(Number);
  assert.is(offset, records - 1, 'the resume point is the batch of the last record');
  return byte as number;
}

/**
 * The log: 10 reports copied; two more (one with a 2,000-character name) and `reports
 * snapshot`; the copy put back and written on so that a batch starts exactly at the snapshot's resume
 * byte with 12 records before it rather than 11. With `olderSnapshot`, one is taken at 10 records first.
 */
async function restoredOnTheResumeByte(dir: string, olderSnapshot: boolean): Promise<void> {
  const log = join(dir, 'events.log');
  let server = await startTestServer({}, { dataDir: dir });
  await createReports(server, 1, 10);
  await server.close();
  if (olderSnapshot) assert.is((await reports(['snapshot'], { env: { REPORTS_DATA_DIR: dir } })).code, 0);
  await copyFile(log, join(dir, 'events.log.backup'));
  server = await startTestServer({}, { dataDir: dir });
  assert.is((await postReport(server, '11', 'n'.repeat(2000))).status, 200);
  assert.is((await postReport(server, '12', 'report 12')).status, 200);
  await server.close();
  assert.is((await reports(['snapshot'], { env: { REPORTS_DATA_DIR: dir } })).code, 0);
  const byte = await resumeByte(dir, 12);
  await copyFile(join(dir, 'events.log.backup'), log);
  server = await startTestServer({}, { dataDir: dir });
  const before = (await stat(log)).size;
  assert.is((await postReport(server, '111', 'x')).status, 200);
  const oneCharBatch = (await stat(log)).size - before;
  // Same id length: the sealed name grows the batch 4 bytes every 3 characters (base64 of the box),
  // and an Idempotency-Key of the right length makes up the rest a byte at a time.
  const target = byte - before - oneCharBatch;
  const boxChars = (nameChars: number) => 4 * Math.ceil((nameChars + SEAL_TAG_BYTES) / 3);
  const withName = (nameChars: number) => oneCharBatch + boxChars(nameChars) - boxChars(1);
  let nameChars = 1;
  while (withName(nameChars + 1) + Buffer.byteLength(',"idempotencyKey":"k"') <= target) nameChars += 1;
  const key = 'k'.repeat(target - withName(nameChars) - Buffer.byteLength(',"idempotencyKey":""'));
  const fill = await server.request('/reports', {
    method: 'POST',
    json: reportBody('112', 'y'.repeat(nameChars)),
    headers: { 'Idempotency-Key': key },
  });
  assert.is(fill.status, 200);
  assert.is((await stat(log)).size, byte, 'the next batch starts at the resume byte');
  await createReports(server, 201, 203);
  await server.close();
}

for (const older of [true, false]) {
  restored(
    `starts when a batch of the restored log begins at the snapshot's resume byte, folding ${older ? 'from the older snapshot' : 'from the start'}, and verify agrees`,
    async ({ dir }) => {
      await restoredOnTheResumeByte(dir, older);
      const server = await startTestServer({}, { dataDir: dir });
      try {
        const warning = server
          .logLines()
          .find((line) => line['level'] === 40 && String(line['msg']).includes('another history'));
        assert.is(warning?.['reason'], 'the record at 0:11 is not the one it folded');
        assert.is(server.projector.progress().applied, older ? 5 : 15, 'records folded at start');
        for (const id of ['11', '12'])
          assert.is((await deleteReport(server, id)).status, 404, `${id}, of the other history`);
        for (const id of ['10', '111', '112', '202']) assert.is((await deleteReport(server, id)).status, 204, id);
      } finally {
        await server.close();
      }
      const verify = await reports(['verify'], { env: { REPORTS_DATA_DIR: dir } });
      assert.is(verify.code, 0, verify.stdout);
      assert.match(verify.stdout, /^OK: 19 records/);
      assert.ok((await replaySummary({ REPORTS_DATA_DIR: dir })).liveReports > 0);
    },
  );
}

restored.run();
