// The data directory belongs to the user the service runs as, and what writes in it runs as that
// user: `reports snapshot` and `reports restore` as root on another user's data directory left root's
// files there (a 0700 snapshots/ directory, a 0600 log) and the service's next start failed on them.
// Now the server and both tools refuse to run as another user, naming both; run as that user they
// work; and a start past a snapshots directory another user made (as before this was fixed) skips
// it with a warning. The data directory here belongs to nobody, and the tests run as root.
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runServerProcess, startChildServer } from '../helpers/child-server.js';
import { reports, reportsProcess } from '../helpers/cli.js';
import { created } from '../helpers/events.js';
import { appendToFileLog, eventsLogPath } from '../helpers/file-history.js';
import { asRoot, OTHER_USER } from '../helpers/root.js';
import { tempDir } from '../helpers/server.js';

const owned = suite<{ dir: string; dataDir: string }>("another user's data directory");

owned.before.each(async (context) => {
  context.dir = await tempDir('reports-owner-');
  // nobody must reach the data directory inside it.
  await chmod(context.dir, 0o755);
  context.dataDir = join(context.dir, 'data');
  await appendToFileLog(context.dataDir, [created('1', 'one'), created('2', 'two')]);
  execFileSync('chown', ['-R', `${OTHER_USER.uid}:${OTHER_USER.gid}`, context.dataDir]);
});
owned.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

const refusal = (dataDir: string) =>
  `bad setting REPORTS_DATA_DIR: ${dataDir} is written by user ${OTHER_USER.uid} (the owner of ${eventsLogPath(dataDir)}) and this process runs as user 0`;

owned('reports snapshot as root exits 2 naming both users, and makes nothing there', async ({ dataDir }) => {
  const before = await readdir(dataDir);
  const { code, stderr } = await reports(['snapshot'], { env: { REPORTS_DATA_DIR: dataDir } });
  assert.is(code, 2, stderr);
  assert.match(stderr, refusal(dataDir));
  assert.equal(await readdir(dataDir), before);
});

owned("reports restore as root exits 2, and the log stays as it was, the user's", async ({ dir, dataDir }) => {
  const source = join(dir, 'source');
  await appendToFileLog(source, [created('3', 'three')]);
  const backup = await reports(['backup', join(dir, 'backup')], { env: { REPORTS_DATA_DIR: source } });
  assert.is(backup.code, 0, backup.stderr);
  const log = await stat(eventsLogPath(dataDir));
  const { code, stderr } = await reports(['restore', join(dir, 'backup')], { env: { REPORTS_DATA_DIR: dataDir } });
  assert.is(code, 2, stderr);
  assert.match(stderr, refusal(dataDir));
  const after = await stat(eventsLogPath(dataDir));
  assert.equal([after.uid, after.size, after.mtimeMs], [OTHER_USER.uid, log.size, log.mtimeMs]);
});

owned(
  "reports restore as the data directory's user, of a backup root took (0700), says it cannot read it and why",
  async ({ dir, dataDir }) => {
    const backup = await reports(['backup', join(dir, 'backup')], { env: { REPORTS_DATA_DIR: dataDir } });
    assert.is(backup.code, 0, backup.stderr);
    const { code, stderr } = await reportsProcess(['restore', join(dir, 'backup')], {
      env: { REPORTS_DATA_DIR: dataDir },
      user: OTHER_USER,
    });
    assert.is(code, 1, stderr);
    assert.match(
      stderr,
      `cannot read the backup ${join(dir, 'backup')} as user ${OTHER_USER.uid} (EACCES): a backup is readable by the user who took it alone`,
    );
  },
);

owned('the server as root exits 2 naming REPORTS_DATA_DIR, before it writes anything', async ({ dataDir }) => {
  const before = await readdir(dataDir);
  const { code, stderr } = await runServerProcess({ REPORTS_DATA_DIR: dataDir });
  assert.is(code, 2, stderr);
  assert.match(stderr, `report-store: ${refusal(dataDir)}`);
  assert.equal(await readdir(dataDir), before);
});

owned(
  "reports snapshot run as the directory's user works, and the server as that user starts from its snapshot",
  async ({ dataDir }) => {
    const snapshot = await reportsProcess(['snapshot'], { env: { REPORTS_DATA_DIR: dataDir }, user: OTHER_USER });
    assert.is(snapshot.code, 0, snapshot.stderr);
    const server = await startChildServer({ REPORTS_DATA_DIR: dataDir }, { user: OTHER_USER });
    try {
      await server.waitForLine(
        (line) => line['msg'] === 'loaded a snapshot; folding only the tail of the log',
        'the snapshot loaded',
      );
    } finally {
      server.kill('SIGTERM');
      await server.waitExit();
    }
    for (const name of await readdir(join(dataDir, 'snapshots')))
      assert.is((await stat(join(dataDir, 'snapshots', name))).uid, OTHER_USER.uid, name);
  },
);

owned(
  'a server started as the user skips, with a warning, a snapshots directory another user made, and serves',
  async ({ dataDir }) => {
    // What `reports snapshot` as root left before it refused to run so.
    await mkdir(join(dataDir, 'snapshots'), { mode: 0o700 });
    const server = await startChildServer({ REPORTS_DATA_DIR: dataDir }, { user: OTHER_USER });
    try {
      const warning = await server.waitForLine(
        (line) => line['msg'] === 'ignored the snapshots directory: it cannot be read',
        'the warning',
      );
      assert.match(String(warning['reason']), 'EACCES');
      await server.waitReady();
      const created = await server.request('/reports', { method: 'POST', json: '{"id": 7, "name": "seven"}' });
      assert.is(created.status, 200);
      await created.arrayBuffer();
    } finally {
      server.kill('SIGTERM');
      await server.waitExit();
    }
  },
);

owned(
  'a data directory open to others that this process may not change is reported, not made private',
  async ({ dir }) => {
    const open = join(dir, 'open');
    await mkdir(open, { mode: 0o755 });
    await chmod(open, 0o755);
    const module = JSON.stringify(fileURLToPath(new URL('../../src/data-dir/data-dir.js', import.meta.url)));
    const script = `import(${module}).then(async ({ makePrivate }) => console.log(JSON.stringify(await makePrivate(${JSON.stringify(open)}))))`;
    const output = execFileSync(process.execPath, ['-e', script], { ...OTHER_USER, encoding: 'utf8' });
    assert.equal(JSON.parse(output), { mode: 0o755, madePrivate: false });
    assert.is((await stat(open)).mode & 0o777, 0o755);
  },
);

if (asRoot("the data directory's user")) owned.run();
