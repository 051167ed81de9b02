// What `reports backup` holds of keys.db: the keys of the reports live in its log and nothing else
// (never a key destroyed before it was copied, nor one of a report deleted within the copied
// prefix), the record of deletions, and a digest taken with those keys.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isSealedReport } from '../../projections/reports.js';
import { openFileKeyStore } from '../../src/keys/file-key-store.js';
import { parseKeyId, type ContentKey } from '../../src/keys/key-store.js';
import { readKeyTable } from '../../src/keys/key-tables.js';
import { reports } from '../helpers/cli.js';
import { logDigest, serverDigest } from '../helpers/digest.js';
import { created } from '../helpers/events.js';
import { appendToFileLog } from '../helpers/file-history.js';
import { memoryLogger, startTestServer, tempDir, type TestServer } from '../helpers/server.js';
import { deleteReport, postReport } from '../http/requests.js';

async function keyOf(server: TestServer, id: string): Promise<ContentKey> {
  const report = server.projector.model.reports.get(id);
  assert.ok(report !== undefined && isSealedReport(report));
  const key = await server.keys.get(parseKeyId(report.sealed.key));
  assert.ok(key);
  return { id: Buffer.from(key.id), secret: Buffer.from(key.secret), contentDigest: Buffer.from(key.contentDigest) };
}

/** Every file under `dir` that holds any of `needles`. */
async function filesHolding(dir: string, needles: readonly Buffer[]): Promise<string[]> {
  const hits: string[] = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    if (!(await stat(path)).isFile()) continue;
    const bytes = await readFile(path);
    if (needles.some((needle) => bytes.includes(needle))) hits.push(path);
  }
  return hits;
}

async function backup(dataDir: string, dest: string): Promise<string> {
  const { code, stdout, stderr } = await reports(['backup', dest], { env: { REPORTS_DATA_DIR: dataDir } });
  assert.is(code, 0, stderr);
  return /^state digest:\s+(\S+)$/m.exec(stdout)?.[1] ?? '';
}

const manifestOf = async (dir: string) =>
  JSON.parse(await readFile(join(dir, 'backup.json'), 'utf8')) as {
    format: number;
    keys: { slots: number; held: number } | null;
  };

const keysOfBackup = suite<{ dir: string }>('the keys a backup holds');
keysOfBackup.before.each(async (context) => {
  context.dir = await tempDir('reports-backup-keys-');
});
keysOfBackup.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

keysOfBackup(
  "holds the keys of the reports live in its log and no other, and its digest is the state's",
  async ({ dir }) => {
    const dataDir = join(dir, 'data');
    const server = await startTestServer({}, { dataDir });
    let digest: string;
    let expected: string;
    let kept: ContentKey[];
    let doomed: ContentKey;
    try {
      for (const id of ['1', '2', '3']) assert.is((await postReport(server, id, `report ${id}`)).status, 200);
      kept = [await keyOf(server, '1'), await keyOf(server, '3')];
      doomed = await keyOf(server, '2');
      assert.is((await deleteReport(server, '2')).status, 204);
      digest = await backup(dataDir, join(dir, 'backup'));
      expected = await serverDigest(server);
    } finally {
      await server.close();
    }
    assert.is(digest, expected);
    const table = await readKeyTable(join(dir, 'backup'));
    for (const key of kept) assert.ok(table?.get(key.id)?.secret.equals(key.secret), "a live report's key");
    assert.equal(table?.view(1), { kind: 'deletion', reportId: '2', version: 2 }, 'the record of the deletion');
    assert.equal(
      await filesHolding(join(dir, 'backup'), [doomed.secret, doomed.contentDigest]),
      [],
      "the deleted report's key is in no file of the backup",
    );
    assert.equal(await manifestOf(join(dir, 'backup')).then(({ format, keys }) => [format, keys]), [
      2,
      { slots: 3, held: 2 },
    ]);
  },
);

keysOfBackup(
  'a live report whose key keys.db says is destroyed with no delete on the log is taken again once, then kept as it is',
  async ({ dir }) => {
    const dataDir = join(dir, 'data');
    const server = await startTestServer({}, { dataDir });
    let key: ContentKey;
    try {
      assert.is((await postReport(server, '1', 'one')).status, 200);
      assert.is((await postReport(server, '2', 'two')).status, 200);
      key = await keyOf(server, '1');
    } finally {
      await server.close();
    }
    const keys = await openFileKeyStore({ dir: dataDir, logger: memoryLogger().logger });
    await keys.destroy([key.id]);
    await keys.close();
    assert.is(await backup(dataDir, join(dir, 'backup')), await logDigest(dataDir));
    assert.equal(await manifestOf(join(dir, 'backup')).then(({ keys }) => keys), { slots: 2, held: 1 });
  },
);

keysOfBackup('a history all in the clear with no keys.db gives a backup without one', async ({ dir }) => {
  const dataDir = join(dir, 'data');
  await appendToFileLog(dataDir, [created('1', 'one'), created('2', 'two')]);
  // A data directory of a version before erasure (today's log opens keys.db beside it, empty).
  await rm(join(dataDir, 'keys.db'));
  assert.is(await backup(dataDir, join(dir, 'backup')), await logDigest(dataDir));
  assert.is((await manifestOf(join(dir, 'backup'))).keys, null);
  assert.not.ok((await readdir(join(dir, 'backup'))).includes('keys.db'));
});

keysOfBackup.run();
