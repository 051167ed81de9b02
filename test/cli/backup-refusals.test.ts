// What `reports backup` and `reports restore` refuse before they change anything: a backup inside
// the data directory (a restore from data/snapshots/ replaced the log, then removed its own backup),
// and files of a backup or a data directory that are not regular files (a FIFO made restore hang for
// ever holding the directory's lock). The commands run as processes of their own, so a hang is one
// the test can kill.
import { execFileSync } from 'node:child_process';
import { mkdir, readdir, rename, rm, stat, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { reports, reportsProcess } from '../helpers/cli.js';
import { created } from '../helpers/events.js';
import { appendToFileLog, eventsLogPath } from '../helpers/file-history.js';
import { startTestServer, tempDir } from '../helpers/server.js';
import { postReport } from '../http/requests.js';

const refusals = suite<{ dir: string; dataDir: string; backup: string }>(
  'reports backup and restore: what they refuse',
);

refusals.before.each(async (context) => {
  context.dir = await tempDir('reports-refusals-');
  context.dataDir = join(context.dir, 'data');
  context.backup = join(context.dir, 'backup');
  await appendToFileLog(context.dataDir, [created('1', 'one'), created('2', 'two')]);
  const taken = await reports(['backup', context.backup], { env: { REPORTS_DATA_DIR: context.dataDir } });
  assert.is(taken.code, 0, taken.stderr);
});
refusals.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

/** Size and modification time: a log nobody touched has the same. */
const logState = async (dataDir: string) => stat(eventsLogPath(dataDir)).then(({ size, mtimeMs }) => [size, mtimeMs]);

/** A FIFO in place of `path`. */
async function fifoInstead(path: string): Promise<void> {
  await rm(path, { force: true });
  execFileSync('mkfifo', [path]);
}

/** Starts and stops a server on `dataDir`: the restore left the directory's lock free. */
async function startsAfterwards(dataDir: string): Promise<void> {
  const server = await startTestServer({}, { dataDir });
  await server.close();
}

refusals(
  'backup refuses a log with sealed content whose keys.db is missing (it could never be restored), and makes nothing',
  async ({ dir }) => {
    const dataDir = join(dir, 'sealed');
    const server = await startTestServer({}, { dataDir });
    try {
      // Two batches: a last batch whose keys keys.db lacks is left out of a backup as not acknowledged.
      for (const id of ['1', '2']) assert.is((await postReport(server, id, `sealed ${id}`)).status, 200);
    } finally {
      await server.close();
    }
    await rm(join(dataDir, 'keys.db'));
    const dest = join(dir, 'keyless');
    const { code, stderr } = await reports(['backup', dest], { env: { REPORTS_DATA_DIR: dataDir } });
    assert.is(code, 1, stderr);
    assert.match(stderr, `the log holds sealed content of live reports (one of their keys: `);
    assert.match(stderr, `${join(dataDir, 'keys.db')} is missing: a backup without it could not be restored`);
    assert.is(
      await stat(dest).then(
        () => true,
        () => false,
      ),
      false,
    );
  },
);

refusals(
  'backup refuses a DEST that is a dangling symbolic link at once, not after copying',
  async ({ dir, dataDir }) => {
    const dest = join(dir, 'dangling');
    await symlink(join(dir, 'nowhere'), dest);
    const { code, stderr } = await reports(['backup', dest], { env: { REPORTS_DATA_DIR: dataDir } });
    assert.is(code, 1, stderr);
    assert.match(stderr, `${dest} exists: a backup goes into a new directory, never over another`);
    assert.equal(
      (await readdir(dir)).filter((name) => name.startsWith('dangling.partial')),
      [],
    );
  },
);

refusals(
  'backup refuses a DEST inside the data directory, also through a symbolic link, and makes nothing',
  async ({ dir, dataDir }) => {
    await symlink(dataDir, join(dir, 'link'));
    for (const dest of [join(dataDir, 'snapshots', 'backup'), join(dataDir, 'backup'), join(dir, 'link', 'backup')]) {
      const { code, stderr } = await reportsProcess(['backup', dest], { env: { REPORTS_DATA_DIR: dataDir } });
      assert.is(code, 1, stderr);
      assert.match(stderr, `refusing to back up into ${dest}: it is inside the data directory ${dataDir}`);
      assert.is(
        await stat(dest).then(
          () => true,
          () => false,
        ),
        false,
        `${dest} was made`,
      );
    }
  },
);

refusals(
  'restore refuses a backup inside the data directory before changing anything, and the backup stays',
  async ({ dataDir, backup }) => {
    const inside = join(dataDir, 'snapshots', 'backup');
    await mkdir(join(dataDir, 'snapshots'));
    await rename(backup, inside);
    const before = await logState(dataDir);
    const { code, stderr } = await reportsProcess(['restore', inside], { env: { REPORTS_DATA_DIR: dataDir } });
    assert.is(code, 1, stderr);
    assert.match(stderr, `refusing to restore from ${inside}: it is inside the data directory ${dataDir}`);
    assert.equal(await logState(dataDir), before);
    assert.ok((await stat(join(inside, 'backup.json'))).isFile(), 'the backup is still there');
  },
);

refusals(
  'restore refuses a backup whose events.log is a FIFO, at once and naming it, and leaves the lock free',
  async ({ dataDir, backup }) => {
    await fifoInstead(join(backup, 'events.log'));
    const before = await logState(dataDir);
    const { code, stderr } = await reportsProcess(['restore', backup], { env: { REPORTS_DATA_DIR: dataDir } });
    assert.is(code, 1, stderr);
    assert.match(stderr, `${join(backup, 'events.log')} is a FIFO (named pipe), not a regular file`);
    assert.equal(await logState(dataDir), before);
    await startsAfterwards(dataDir);
  },
);

refusals('restore refuses a backup whose manifest is a FIFO', async ({ dataDir, backup }) => {
  await fifoInstead(join(backup, 'backup.json'));
  const { code, stderr } = await reportsProcess(['restore', backup], { env: { REPORTS_DATA_DIR: dataDir } });
  assert.is(code, 1, stderr);
  assert.match(stderr, `${join(backup, 'backup.json')} is a FIFO (named pipe), not a regular file`);
});

refusals('restore refuses a backup whose snapshot is a FIFO: it does not match its manifest', async ({ dir }) => {
  const withSnapshot = join(dir, 'with-snapshot');
  const server = await startTestServer({ REPORTS_SNAPSHOT_EVERY: '1' }, { dataDir: join(dir, 'busy') });
  try {
    assert.is((await server.request('/reports', { method: 'POST', json: '{"id": 5, "name": "five"}' })).status, 200);
  } finally {
    await server.close();
  }
  const taken = await reports(['backup', withSnapshot], { env: { REPORTS_DATA_DIR: join(dir, 'busy') } });
  assert.match(taken.stdout, /^snapshot:\s+snapshot-\d{16}\.snap$/m);
  const snapshot = /^snapshot:\s+(\S+)$/m.exec(taken.stdout)?.[1] ?? '';
  await fifoInstead(join(withSnapshot, 'snapshots', snapshot));
  const { code, stderr } = await reportsProcess(['restore', withSnapshot], {
    env: { REPORTS_DATA_DIR: join(dir, 'elsewhere') },
  });
  assert.is(code, 1, stderr);
  assert.match(stderr, 'is a FIFO (named pipe), not a regular file');
  assert.match(stderr, 'does not match its manifest: snapshot is null');
});

refusals(
  'backup refuses a data directory whose events.log is a FIFO, at once and naming it',
  async ({ dir, dataDir }) => {
    await fifoInstead(eventsLogPath(dataDir));
    const { code, stderr } = await reportsProcess(['backup', join(dir, 'another')], {
      env: { REPORTS_DATA_DIR: dataDir },
    });
    assert.is(code, 1, stderr);
    assert.match(stderr, `${eventsLogPath(dataDir)} is a FIFO (named pipe), not a regular file`);
  },
);

refusals.run();
