// `reports verify` beside a server that deletes reports: it folds the log, then reads the keys. A
// report deleted in between was live in its fold with its key already destroyed, and verify named
// it a lost key and exited 1, on every run under deletes. It now leaves out the reports the log
// changed after its fold (their deletes are in the log before their keys go).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { reports } from '../helpers/cli.js';
import { startTestServer } from '../helpers/server.js';
import { deleteReport, idSource, postReport } from '../http/requests.js';

const test = suite('reports verify beside a server deleting reports');
const REPORTS = 600;
const RUNS = 3;

test('says OK on every run while deletes go on, and each run saw deletes', async () => {
  const server = await startTestServer();
  try {
    const nextId = idSource();
    const ids = Array.from({ length: REPORTS }, () => nextId());
    for (const id of ids) assert.is((await postReport(server, id, `verified beside deletes ${id}`)).status, 200);
    let deleted = 0;
    let deleting = true;
    const deletes = (async () => {
      for (const id of ids) {
        if (!deleting) return;
        assert.is((await deleteReport(server, id)).status, 204);
        deleted += 1;
      }
    })();
    try {
      for (let run = 0; run < RUNS; run += 1) {
        const before = deleted;
        const { code, stdout, stderr } = await reports(['verify'], { env: { REPORTS_DATA_DIR: server.dataDir } });
        assert.ok(deleted > before, `deletes went on during run ${run + 1}`);
        assert.is(code, 0, `${stdout}${stderr}`);
        assert.match(stdout, /^OK: /);
        assert.is(stderr, '');
      }
      assert.ok(deleted < REPORTS, 'the deletes outlasted the runs');
    } finally {
      deleting = false;
      await deletes;
    }
    // Once the deletes stop, the count of live sealed reports is exact again.
    const quiet = await reports(['verify'], { env: { REPORTS_DATA_DIR: server.dataDir } });
    assert.match(quiet.stdout, new RegExp(`^OK: \\d+ records, 0 void events, ${REPORTS - deleted} live sealed report`));
  } finally {
    await server.dispose();
  }
});

test.run();
