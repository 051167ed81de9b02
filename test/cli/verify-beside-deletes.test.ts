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
const REPORTS = 300;
const RUNS = 3;

test('says OK on every run while deletes go on, counting what changed meanwhile', async () => {
  const server = await startTestServer();
  try {
    const nextId = idSource();
    const ids = Array.from({ length: REPORTS }, () => nextId());
    const create = async (id: string) =>
      assert.is((await postReport(server, id, `verified beside deletes ${id}`)).status, 200);
    for (const id of ids) await create(id);
    // Until told to stop: each report deleted, then written again (a new key): every fold holds
    // reports whose key goes while the tool runs, however fast either side is.
    let deleted = 0;
    let deleting = true;
    const deletes = (async () => {
      for (let i = 0; deleting; i += 1) {
        const id = ids[i % REPORTS] as string;
        assert.is((await deleteReport(server, id)).status, 204);
        deleted += 1;
        await create(id);
      }
    })();
    let changed = 0;
    let overlapped = 0;
    try {
      for (let run = 0; run < RUNS; run += 1) {
        const before = deleted;
        const { code, stdout, stderr } = await reports(['verify'], { env: { REPORTS_DATA_DIR: server.dataDir } });
        // A run may end before a delete does on a loaded machine (a CI run saw it): counted, not required of each.
        if (deleted > before) overlapped += 1;
        assert.is(code, 0, `${stdout}${stderr}`);
        assert.match(stdout, /^OK: /);
        assert.is(stderr, '');
        changed += Number(/the server changed while this ran/.test(stdout));
      }
    } finally {
      deleting = false;
      await deletes;
    }
    assert.ok(overlapped > 0, 'deletes went on during a run');
    assert.ok(changed > 0, 'a run said how many reports it left out');
    // Once the deletes stop, every live report is checked again, none left out.
    const quiet = await reports(['verify'], { env: { REPORTS_DATA_DIR: server.dataDir } });
    assert.match(
      quiet.stdout,
      new RegExp(`^OK: \\d+ records, 0 void events, ${REPORTS} live sealed reports opened with their keys\\n$`),
    );
  } finally {
    await server.dispose();
  }
});

test.run();
