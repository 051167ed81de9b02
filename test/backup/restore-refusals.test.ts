// What `reports restore` refuses, changing nothing, and what it will not keep: a backup whose
// keys.db does not match its manifest; a backup of format 1 (taken before backups held keys.db)
// whose log refers to keys the data directory's keys.db does not hold (where it does, it restores);
// a replaced log that cannot be read whole is not kept; a data directory whose keys.db is another store's.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { lstat, mkdir, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { reports } from '../helpers/cli.js';
import { logDigest, serverDigest } from '../helpers/digest.js';
import { eventsLogPath, flipByte, frameStarts } from '../helpers/file-history.js';
import { startTestServer, tempDir } from '../helpers/server.js';
import { serverWrote } from './server-wrote.js';

const env = (dataDir: string) => ({ env: { REPORTS_DATA_DIR: dataDir } });
const manifestPath = (dir: string) => join(dir, 'backup.json');

async function editManifest(dir: string, edit: (manifest: Record<string, unknown>) => void): Promise<void> {
  const manifest = JSON.parse(await readFile(manifestPath(dir), 'utf8')) as Record<string, unknown>;
  edit(manifest);
  await writeFile(manifestPath(dir), JSON.stringify(manifest));
}

const refusals = suite<{ dir: string }>('reports restore refuses');
refusals.before.each(async (context) => {
  context.dir = await tempDir('reports-restore-refusals-');
});
refusals.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

refusals(
  'a keys.db, events.log or snapshots that is a symbolic link (a rename would leave the old file at its target); so does seal-history',
  async ({ dir }) => {
    const dataDir = join(dir, 'data');
    await serverWrote(dataDir, ['1']);
    const backup = join(dir, 'backup');
    assert.is((await reports(['backup', backup], env(dataDir))).code, 0);
    const vault = join(dir, 'vault');
    await mkdir(vault);
    await reports(['snapshot'], env(dataDir));
    for (const name of ['keys.db', 'events.log', 'snapshots']) {
      await rename(join(dataDir, name), join(vault, name));
      await symlink(join(vault, name), join(dataDir, name));
      const refused = await reports(['restore', backup], env(dataDir));
      assert.is(refused.code, 1, name);
      assert.match(refused.stderr, `${join(dataDir, name)} is a symbolic link to ${join(vault, name)}`);
      assert.match(refused.stderr, 'nothing was changed');
      assert.ok((await lstat(join(dataDir, name))).isSymbolicLink(), `${name} is still the link`);
      if (name !== 'keys.db') {
        const sealing = await reports(['seal-history'], env(dataDir));
        assert.is(sealing.code, 1);
        assert.match(sealing.stderr, `refusing to seal the history: ${join(dataDir, name)} is a symbolic link`);
      }
      await rm(join(dataDir, name));
      await rename(join(vault, name), join(dataDir, name));
    }
    assert.is((await reports(['restore', backup], env(dataDir))).code, 0, 'with the files in place it restores');
  },
);

refusals('a backup whose keys.db does not match its manifest', async ({ dir }) => {
  const dataDir = join(dir, 'data');
  await serverWrote(dataDir, ['1']);
  const backup = join(dir, 'backup');
  assert.is((await reports(['backup', backup], env(dataDir))).code, 0);
  await editManifest(backup, (manifest) => void (manifest['keys'] = { slots: 5, held: 1 }));
  const refused = await reports(['restore', backup], env(join(dir, 'elsewhere')));
  assert.is(refused.code, 1);
  assert.match(refused.stderr, 'does not match its manifest: its keys.db holds 1 slots, the manifest says 5');
  assert.equal(
    await readdir(join(dir, 'elsewhere')).then((names) => names.filter((name) => !name.startsWith('LOCK'))),
    [],
  );
});

refusals(
  'a backup of format 1 whose log refers to keys no keys.db holds; where the data directory holds them it restores',
  async ({ dir }) => {
    const dataDir = join(dir, 'data');
    await serverWrote(dataDir, ['1', '2']);
    const backup = join(dir, 'backup');
    assert.is((await reports(['backup', backup], env(dataDir))).code, 0);
    // As a backup of format 1 was: no keys.db, its digest taken without keys.
    await rm(join(backup, 'keys.db'));
    const digest = await logDigest(backup);
    await editManifest(backup, (manifest) => {
      manifest['format'] = 1;
      manifest['digest'] = digest;
      delete manifest['keys'];
    });
    const refused = await reports(['restore', backup], env(join(dir, 'elsewhere')));
    assert.is(refused.code, 1);
    assert.match(
      refused.stderr,
      "which neither the backup (taken before backups held keys.db) nor the data directory's keys.db holds; nothing was changed",
    );
    assert.not.ok(
      (await readdir(join(dir, 'elsewhere'))).some((name) => name === 'events.log' || name.endsWith('.staging')),
    );
    const restored = await reports(['restore', backup], env(dataDir));
    assert.is(restored.code, 0, restored.stderr);
    const server = await startTestServer({}, { dataDir });
    try {
      assert.match(restored.stdout, `state digest:    ${await serverDigest(server)} (the backup printed ${digest})`);
    } finally {
      await server.close();
    }
  },
);

refusals('to keep a replaced log that cannot be read whole', async ({ dir }) => {
  const dataDir = join(dir, 'data');
  await serverWrote(dataDir, ['1']);
  const backup = join(dir, 'backup');
  assert.is((await reports(['backup', backup], env(dataDir))).code, 0);
  await serverWrote(dataDir, ['2']);
  await serverWrote(dataDir, ['3']);
  await flipByte(eventsLogPath(dataDir), ((await frameStarts(dataDir))[1] as number) + 12);
  const restored = await reports(['restore', backup], env(dataDir));
  assert.is(restored.code, 0, restored.stderr);
  assert.match(
    restored.stdout,
    /^previous log: {4}not kept: it could not be read whole to check it for content in the clear \(.*corrupt record #1/m,
  );
  assert.not.ok((await readdir(dataDir)).some((name) => name.startsWith('events.log.before-restore-')));
});

refusals(
  "a data directory whose keys.db is another store's (a slot live in both under other keys), changing nothing",
  async ({ dir }) => {
    const dataDir = join(dir, 'data');
    await serverWrote(dataDir, ['1', '2', '3']);
    const backup = join(dir, 'backup');
    assert.is((await reports(['backup', backup], env(dataDir))).code, 0);
    // Another store, say a new machine's smoke test, in the directory the backup is restored into.
    const other = join(dir, 'other');
    await serverWrote(other, ['999', '998']);
    const keysBefore = await readFile(join(other, 'keys.db'));
    const logBefore = await readFile(eventsLogPath(other));
    const { code, stderr } = await reports(['restore', backup], env(other));
    assert.is(code, 1);
    assert.match(
      stderr,
      `${join(other, 'keys.db')} belongs to another store than the backup (its key slot 0 holds another key`,
    );
    assert.equal(await readFile(join(other, 'keys.db')), keysBefore);
    assert.equal(await readFile(eventsLogPath(other)), logBefore);
    // Into a new directory the same backup restores, with the digest it printed.
    const fresh = join(dir, 'fresh');
    assert.is((await reports(['restore', backup], env(fresh))).code, 0);
    assert.is(await logDigest(fresh), await logDigest(dataDir));
  },
);

refusals.run();
