// A snapshot belongs to the history it folded. The scenario of a restore from a backup: the log
// file is put back to an older copy and written on, so its head passes the snapshot's position
// while the records there are others.
import { copyFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { reports } from '../helpers/cli.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';
import { deleteReport, postReport } from '../http/requests.js';

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
    const warning = server.logLines().find((line) => line['level'] === 40 && String(line['msg']).includes('another history'));
    assert.is(warning?.['reason'], 'the record at 0:24 is not the one it folded');
    assert.is((await deleteReport(server, '20')).status, 404);
    assert.is((await deleteReport(server, '205')).status, 204);
  } finally {
    await server.close();
  }
});

restored.run();
