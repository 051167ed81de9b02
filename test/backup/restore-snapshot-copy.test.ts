// Once `reports restore` has put the backup's log in place the restore has happened: a snapshot
// that cannot be copied after it (a full disk, an interrupt) is left out with a warning, and the
// command succeeds with the digest the server starts with. It used to fail after the data was
// already replaced, and an operator who believed nothing had changed lost the newer reports.
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { restoreBackup } from '../../src/backup/restore-backup.js';
import type { ToolRun } from '../../src/tool-run.js';
import { reports, replaySummary } from '../helpers/cli.js';
import { memoryLogger, startTestServer, tempDir } from '../helpers/server.js';
import { serverWrote } from './server-wrote.js';

/** A run whose signal aborts when the snapshot's copy starts (its progress is the only one of 0 records). */
function abortingAtSnapshotCopy(): ToolRun {
  const controller = new AbortController();
  return {
    signal: controller.signal,
    progress(_label, total) {
      if (total === 0) controller.abort(new Error('no space left on device (as the test has it)'));
      return { update: () => undefined, stop: () => undefined };
    },
  };
}

const restore = suite<{ dir: string }>('reports restore, its snapshot not copied');
restore.before.each(async (context) => {
  context.dir = await tempDir('reports-restore-snapshot-');
});
restore.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

restore('succeeds without the snapshot, says so, and the server starts on the restored log', async ({ dir }) => {
  const dataDir = join(dir, 'data');
  const env = { env: { REPORTS_DATA_DIR: dataDir } };
  await serverWrote(dataDir, ['1', '2', '3']);
  assert.is((await reports(['snapshot'], env)).code, 0);
  const backup = join(dir, 'backup');
  assert.is((await reports(['backup', backup], env)).code, 0);
  assert.equal(await readdir(join(backup, 'snapshots')).then((names) => names.length), 1, 'the backup has a snapshot');
  await serverWrote(dataDir, ['4', '5']);
  const { logger, lines } = memoryLogger();
  const restored = await restoreBackup({
    src: backup,
    dataDir,
    eventSource: 'urn:test',
    run: abortingAtSnapshotCopy(),
    logger,
  });
  assert.is(restored.snapshot, null, 'no snapshot said to be in place');
  assert.ok(lines().some((line) => String(line['msg']).startsWith('the restore is done, but the backup')));
  assert.equal(await readdir(join(dataDir, 'snapshots')).catch(() => []), [], 'no snapshot, no temporary file');
  assert.is(`sha256:${(await replaySummary({ REPORTS_DATA_DIR: dataDir })).digest}`, restored.digest);
  const server = await startTestServer({}, { dataDir });
  try {
    assert.is((await server.request('/reports/3')).status, 200);
    assert.is((await server.request('/reports/4')).status, 404, 'written after the backup: not in it');
  } finally {
    await server.close();
  }
});

restore.run();
