// A tool refused a data directory names what holds it: the server, or the `reports` command. It
// named every holder "a server", also a `reports restore` in progress (an operator who took it for
// a stray server would kill the restore).
import { rm } from 'node:fs/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { describeHolder, holderOfArgs, lockHolder } from '../../src/data-dir/lock-owner.js';
import { startChildServer } from '../helpers/child-server.js';
import { reports } from '../helpers/cli.js';
import { tempDir } from '../helpers/server.js';

const test = suite('the holder of a data directory, named');

test('the server, a reports command, or neither, from a command line', () => {
  assert.equal(holderOfArgs(['node', '/srv/app/dist/src/main.js']), { kind: 'server' });
  assert.equal(holderOfArgs(['node', '/srv/app/dist/src/cli/main.js', 'serve']), { kind: 'server' });
  assert.equal(holderOfArgs(['node', '--max-old-space-size=512', '/usr/local/bin/reports', 'restore', '/bk']), {
    kind: 'tool',
    command: 'reports restore',
  });
  assert.equal(holderOfArgs(['node', 'dist/src/cli/main.js', '--json', 'seal-history']), {
    kind: 'tool',
    command: 'reports seal-history',
  });
  assert.is(holderOfArgs(['node', '/srv/app/dist/src/cli/main.js']), undefined);
  assert.is(holderOfArgs(['node', '/srv/app/test-worker.js']), undefined);
  assert.is(holderOfArgs(['/usr/bin/python3', '-c', 'pass']), undefined);
  assert.is(describeHolder(7, { kind: 'server' }), 'a server (process 7)');
  assert.is(describeHolder(7, { kind: 'tool', command: 'reports restore' }), '`reports restore` (process 7)');
  assert.is(describeHolder(7, undefined), 'process 7 (a server or a reports tool)');
});

test('a live process is told by its own command line; one that is gone by nothing', async () => {
  // This test's own process runs the test worker: neither the server nor a reports command.
  assert.is(await lockHolder(process.pid), undefined);
  assert.is(await lockHolder(2 ** 22 + 1), undefined);
});

test('restore and seal-history refused by a running server say "a server", with its pid', async () => {
  const dataDir = await tempDir();
  const server = await startChildServer({ REPORTS_DATA_DIR: dataDir });
  try {
    const env = { REPORTS_DATA_DIR: dataDir };
    const sealing = await reports(['seal-history'], { env });
    assert.is(sealing.code, 1);
    assert.match(sealing.stderr, `a server (process ${server.pid}) is running on it; stop it first`);
    const taken = await reports(['backup', `${dataDir}-backup`], { env });
    assert.is(taken.code, 0, taken.stderr);
    const restoring = await reports(['restore', `${dataDir}-backup`], { env });
    assert.is(restoring.code, 1);
    assert.match(restoring.stderr, `restore into ${dataDir}: a server (process ${server.pid}) is running on it`);
  } finally {
    server.kill('SIGKILL');
    await server.waitExit().catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
    await rm(`${dataDir}-backup`, { recursive: true, force: true });
  }
});

test.run();
