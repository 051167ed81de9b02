// The erasure property on the embedded log: once DELETE has answered 204, the report's name and tag
// cannot be recovered from anything under the data directory (the log holds them sealed, keys.db
// held their key, destroyed in place before the answer), and nothing the server logs, at any level,
// ever carried them.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isSealedReport } from '../../projections/reports.js';
import { parseKeyId, type ContentKey } from '../../src/keys/key-store.js';
import { deleteReport, postReport } from '../http/requests.js';
import { openedReport } from '../helpers/opened.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';

interface Context {
  dir: string;
  server: TestServer;
}

/** Every file under `dir`, recursively, with its bytes. */
async function filesUnder(dir: string): Promise<Map<string, Buffer>> {
  // The server writes snapshots in the background: a temporary file listed may be renamed before
  // it is read. Then the whole directory is read again, so that no file is missed under its new name.
  for (;;) {
    const found = new Map<string, Buffer>();
    let vanished = false;
    for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
      const path = join(entry.parentPath, entry.name);
      const bytes = await stat(path)
        .then((stats) => (stats.isFile() ? readFile(path) : undefined))
        .catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'ENOENT') throw error;
          vanished = true;
          return undefined;
        });
      if (bytes !== undefined) found.set(path, bytes);
    }
    if (!vanished) return found;
  }
}

/** The files under `dir` holding any of `needles`, with which. */
async function holding(dir: string, needles: Readonly<Record<string, Buffer>>): Promise<string[]> {
  const hits: string[] = [];
  for (const [path, bytes] of await filesUnder(dir)) {
    for (const [what, needle] of Object.entries(needles)) if (bytes.includes(needle)) hits.push(`${path}: ${what}`);
  }
  return hits;
}

async function keyOf(server: TestServer, id: string): Promise<ContentKey> {
  const report = server.projector.model.reports.get(id);
  assert.ok(report !== undefined && isSealedReport(report), `report ${id} is sealed in the read model`);
  const key = await server.keys.get(parseKeyId(report.sealed.key));
  assert.ok(key !== undefined, `the key of report ${id} is in the key store`);
  return key;
}

const erasure = suite<Context>('erasure on the embedded log');
erasure.before.each(async (context) => {
  context.dir = await tempDir('reports-erasure-');
  // Snapshots after every write, so that they too are searched.
  context.server = await startTestServer({ REPORTS_SNAPSHOT_EVERY: '1', LOG_LEVEL: 'trace' }, { dataDir: context.dir });
});
erasure.after.each(async ({ dir, server }) => {
  // Some tests close the server themselves to search what it left.
  await server.close().catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
});

erasure(
  "a live report's name and tag are sealed everywhere on disk, and open with its key",
  async ({ dir, server }) => {
    assert.is((await postReport(server, '42', 'Performance review J Smith', 'confidential-hr')).status, 200);
    assert.equal(await openedReport(server.projector.model.reports, server.keys, '42'), {
      name: 'Performance review J Smith',
      tag: 'confidential-hr',
    });
    await server.close();
    assert.equal(await holding(dir, { name: Buffer.from('J Smith'), tag: Buffer.from('confidential-hr') }), []);
  },
);

erasure(
  'after the 204, the key captured before the delete is in no file under the data directory, and the report cannot be opened',
  async ({ dir, server }) => {
    assert.is((await postReport(server, '7', 'Performance review J Smith', 'hr')).status, 200);
    assert.is((await postReport(server, '8', 'kept report', 'finance')).status, 200);
    const doomed = await keyOf(server, '7');
    const kept = await keyOf(server, '8');
    assert.equal(
      await holding(dir, { secret: doomed.secret, digest: doomed.contentDigest }).then((hits) => hits.length > 0),
      true,
      'the key is on disk before the delete',
    );
    assert.is((await deleteReport(server, '7')).status, 204);
    assert.equal(
      await holding(dir, { secret: doomed.secret, digest: doomed.contentDigest }),
      [],
      'right after the 204',
    );
    assert.is(await server.keys.get(doomed.id), undefined);
    assert.equal(await server.keys.get(kept.id), kept, "another report's key is untouched");
    assert.is((await postReport(server, '7', 'a new incarnation')).status, 200);
    const reborn = await keyOf(server, '7');
    assert.not.equal(reborn.id, doomed.id, 'a create after a delete has a key of its own');
    await server.close();
    assert.equal(
      await holding(dir, { secret: doomed.secret, digest: doomed.contentDigest }),
      [],
      'after the snapshots and the close',
    );
    const restarted = await startTestServer({}, { dataDir: dir });
    try {
      assert.equal(await openedReport(restarted.projector.model.reports, restarted.keys, '8'), {
        name: 'kept report',
        tag: 'finance',
      });
      assert.equal(await openedReport(restarted.projector.model.reports, restarted.keys, '7'), {
        name: 'a new incarnation',
      });
    } finally {
      await restarted.close();
    }
  },
);

erasure('no log line at any level carries a name or a tag', async ({ server }) => {
  assert.is((await postReport(server, '1', 'secret-name-marker', 'secret-tag-marker')).status, 200);
  assert.is((await postReport(server, '1', 'secret-name-marker', 'secret-tag-marker')).status, 200);
  assert.is((await postReport(server, '1', 'other-name-marker')).status, 409);
  assert.is((await deleteReport(server, '1')).status, 204);
  const text = server
    .logLines()
    .map((line) => JSON.stringify(line))
    .join('\n');
  assert.ok(server.logLines().length > 5, 'the server logged');
  for (const marker of ['secret-name-marker', 'secret-tag-marker', 'other-name-marker'])
    assert.not.ok(text.includes(marker), marker);
});

erasure.run();
