// Online backups while clients delete without pause: every backup succeeds (it failed after five
// copies, each raced by a delete landing between the log's prefix and the read of keys.db), none
// holds the key of a report whose DELETE was answered before the time its manifest gives (keys.db's
// last read; before, a delete answered while the backup was still being written left its key in
// it), and a restore of one into an empty directory leaves every such report absent.
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { isSealedReport } from '../../projections/reports.js';
import { parseKeyId } from '../../src/keys/key-store.js';
import { reports, reportsProcess } from '../helpers/cli.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';
import { deleteReport, postReport } from '../http/requests.js';

const REPORTS = 3000;
const DELETERS = 8;

async function secretOf(server: TestServer, id: string): Promise<Buffer> {
  const report = server.projector.model.reports.get(id);
  assert.ok(report !== undefined && isSealedReport(report), `report ${id} is sealed`);
  const key = await server.keys.get(parseKeyId(report.sealed.key));
  assert.ok(key, `the key of report ${id}`);
  return Buffer.from(key.secret);
}

const test = suite<{ dir: string }>('online backups under a steady stream of deletes');
test.before.each(async (context) => {
  context.dir = await tempDir('reports-backup-deletes-');
});
test.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

test('every backup succeeds, holds no key of a report deleted before it ended, and restores without them', async ({
  dir,
}) => {
  const dataDir = join(dir, 'data');
  const server = await startTestServer({ LOG_LEVEL: 'warn' }, { dataDir });
  const deleted: { id: string; secret: Buffer; answeredMs: number }[] = [];
  let stop = false;
  const backups: { dir: string; endedMs: number; stdout: string }[] = [];
  try {
    const ids = Array.from({ length: REPORTS }, (_, i) => String(i + 1));
    for (let i = 0; i < ids.length; i += 50)
      await Promise.all(
        ids.slice(i, i + 50).map(async (id) => assert.is((await postReport(server, id, `report ${id}`)).status, 200)),
      );
    const queue = [...ids];
    const deleters = Array.from({ length: DELETERS }, async () => {
      for (let id = queue.shift(); id !== undefined && !stop; id = queue.shift()) {
        const secret = await secretOf(server, id);
        assert.is((await deleteReport(server, id)).status, 204);
        deleted.push({ id, secret, answeredMs: Date.now() });
      }
    });
    for (let n = 0; n < 3; n += 1) {
      const target = join(dir, `backup-${n}`);
      const taken = await reportsProcess(['backup', target], { env: { REPORTS_DATA_DIR: dataDir } });
      assert.is(taken.code, 0, taken.stderr);
      const manifest = JSON.parse(await readFile(join(target, 'backup.json'), 'utf8')) as { createdAt: string };
      backups.push({ dir: target, endedMs: Date.parse(manifest.createdAt), stdout: taken.stdout });
    }
    stop = true;
    await Promise.all(deleters);
    // The case this is about: reports of a copy deleted while it was taken (else nothing raced).
    assert.ok(
      backups.some(({ stdout }) => /^deleted meanwhile: \d+ of them/m.test(stdout)),
      'a backup had reports deleted while it was taken',
    );
    assert.ok(deleted.length > 100, `deletes ran beside the backups (${deleted.length})`);
  } finally {
    stop = true;
    await server.close();
  }
  for (const backup of backups) {
    const keys = await readFile(join(backup.dir, 'keys.db'));
    const before = deleted.filter(({ answeredMs }) => answeredMs < backup.endedMs);
    const held = before.filter(({ secret }) => keys.includes(secret)).map(({ id }) => id);
    assert.equal(held, [], `${backup.dir} holds keys of reports deleted before its createdAt`);
  }
  const last = backups.at(-1);
  assert.ok(last);
  const elsewhere = join(dir, 'elsewhere');
  const restored = await reports(['restore', last.dir], { env: { REPORTS_DATA_DIR: elsewhere } });
  assert.is(restored.code, 0, restored.stderr);
  const check = await startTestServer({}, { dataDir: elsewhere });
  try {
    for (const { id } of deleted.filter(({ answeredMs }) => answeredMs < last.endedMs))
      assert.is(
        (await check.request(`/reports/${id}`)).status,
        404,
        `report ${id}, deleted before the backup's createdAt`,
      );
  } finally {
    await check.close();
  }
});

test.run();
