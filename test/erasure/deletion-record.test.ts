// The service keeps the record of deletions in keys.db: every delete that takes effect is recorded
// by report id and the version it took the report to, before the 204: a sealed report's in its
// key's slot (the key destroyed in place), one written in the clear (a history older than erasure)
// in a slot of its own. A delete that changes nothing records nothing.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { rm } from 'node:fs/promises';
import { readKeyTable } from '../../src/keys/key-tables.js';
import { created } from '../helpers/events.js';
import { appendToFileLog } from '../helpers/file-history.js';
import { startTestServer, tempDir } from '../helpers/server.js';
import { deleteReport, postReport } from '../http/requests.js';

const record = suite<{ dir: string }>('the record of deletions');
record.before.each(async (context) => {
  context.dir = await tempDir('reports-deletion-record-');
});
record.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

record(
  "records each delete that took effect by id and version, sealed in its key's slot, in the clear in a new slot",
  async ({ dir }) => {
    await appendToFileLog(dir, [created('5', 'written before erasure')]);
    const server = await startTestServer({}, { dataDir: dir });
    try {
      assert.is((await postReport(server, '7', 'sealed')).status, 200);
      assert.is((await deleteReport(server, '7')).status, 204);
      assert.is((await postReport(server, '7', 'again')).status, 200);
      assert.is((await deleteReport(server, '7')).status, 204);
      assert.is((await deleteReport(server, '5')).status, 204);
      assert.is((await deleteReport(server, '5')).status, 404);
      assert.is((await deleteReport(server, '6')).status, 404);
    } finally {
      await server.close();
    }
    const table = await readKeyTable(dir);
    const views = Array.from({ length: table?.slots ?? 0 }, (_, slot) => table?.view(slot));
    assert.equal(views, [
      { kind: 'deletion', reportId: '7', version: 2 },
      { kind: 'deletion', reportId: '7', version: 4 },
      { kind: 'deletion', reportId: '5', version: 2 },
    ]);
  },
);

record.run();
