import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { chmod, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { openFileLog } from '../../src/log/file/file-log.js';
import { testSnapshot } from '../helpers/snapshots.js';
import { ensurePrivateDir, makePrivate } from '../../src/data-dir/data-dir.js';
import { snapshotDir, writeSnapshot } from '../../src/snapshot/snapshot-store.js';
import { memoryLogger, startTestServer, tempDir } from '../helpers/server.js';

const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

const files = suite<{ dir: string }>('files of the data directory');
files.before.each(async (context) => {
  context.dir = await tempDir('reports-dir-');
});
files.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

files('creates the data directory 0700 and the log and lock files 0600', async ({ dir }) => {
  const dataDir = join(dir, 'a', 'data');
  const log = await openFileLog({ dir: dataDir, logger: memoryLogger().logger });
  await log.append([{ key: '1', value: Buffer.from('{}') }]);
  assert.is(await modeOf(dataDir), 0o700);
  assert.is(await modeOf(join(dir, 'a')), 0o700);
  const names = await readdir(dataDir);
  assert.ok(names.includes('events.log') && names.some((name) => name.startsWith('LOCK.')), names.join(','));
  for (const name of names) assert.is(await modeOf(join(dataDir, name)), 0o600, name);
  await log.close();
  for (const name of await readdir(dataDir)) assert.is(await modeOf(join(dataDir, name)), 0o600, `${name} after close`);
});

files('creates the snapshots directory 0700 and its snapshots 0600', async ({ dir }) => {
  const snapshots = snapshotDir(dir);
  const path = await writeSnapshot(
    snapshots,
    testSnapshot({
      log: 'file:x',
      cursor: new Map(),
      events: 0,
      createdAt: new Date(0).toISOString(),
      reports: new Map(),
      keys: new Map(),
      anchors: new Map(),
    }),
  );
  assert.is(await modeOf(snapshots), 0o700);
  assert.is(await modeOf(path), 0o600);
});

files('leaves an existing directory as it is', async ({ dir }) => {
  await ensurePrivateDir(dir);
  assert.is(await modeOf(dir), 0o700);
});

files('makePrivate makes a directory open to group or others 0700 and says the mode it had', async ({ dir }) => {
  await chmod(dir, 0o755);
  assert.equal(await makePrivate(dir), { mode: 0o755, madePrivate: true });
  assert.is(await modeOf(dir), 0o700);
  assert.is(await makePrivate(dir), undefined, 'a private directory is left alone');
});

files('the server makes an existing data directory of mode 0755 private at start, with a warning', async ({ dir }) => {
  await chmod(dir, 0o755);
  const server = await startTestServer({}, { dataDir: dir });
  try {
    assert.is(await modeOf(dir), 0o700);
    const warning = server.logLines().find((line) => line['level'] === 40 && line['dataDir'] === dir);
    assert.equal(
      [warning?.['msg'], warning?.['mode']],
      ['the data directory was open to group or others; made it 0700', '0755'],
    );
  } finally {
    await server.close();
  }
});

files.run();
