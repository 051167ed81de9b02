// A restore never brings a deleted report back: `reports restore` applies again every deletion
// made since the backup was taken (keys.db of the data directory records them, by key, or by id and
// version for content written in the clear), so the report is absent after it (404 to DELETE, a
// new create of its id 200), no file under the data directory holds its key or its name, and the
// digest the restore prints is the state's. A backup restores anywhere with the digest it printed,
// every live report opening; a key minted after a restore has an id never used before.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { copyFile, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isSealedReport } from '../../projections/reports.js';
import { HEADER_BYTES, SLOT_BYTES, slotOfKeyId } from '../../src/keys/key-slots.js';
import { parseKeyId, type ContentKey } from '../../src/keys/key-store.js';
import { readKeyTable } from '../../src/keys/key-tables.js';
import { until } from '../helpers/async.js';
import { reports } from '../helpers/cli.js';
import { serverDigest } from '../helpers/digest.js';
import { created } from '../helpers/events.js';
import { appendToFileLog } from '../helpers/file-history.js';
import { openedReport } from '../helpers/opened.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';
import { deleteReport, postReport } from '../http/requests.js';

async function keyOf(server: TestServer, id: string): Promise<ContentKey> {
  const report = server.projector.model.reports.get(id);
  assert.ok(report !== undefined && isSealedReport(report), `report ${id} is sealed`);
  const key = await server.keys.get(parseKeyId(report.sealed.key));
  assert.ok(key, `the key of report ${id}`);
  return { id: Buffer.from(key.id), secret: Buffer.from(key.secret), contentDigest: Buffer.from(key.contentDigest) };
}

/** The files under `dir` holding any of `needles`. */
async function filesHolding(dir: string, needles: readonly Buffer[]): Promise<string[]> {
  const hits: string[] = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    if ((await stat(path)).isFile()) {
      const bytes = await readFile(path);
      if (needles.some((needle) => bytes.includes(needle))) hits.push(path);
    }
  }
  return hits;
}

async function run(command: 'backup' | 'restore', dataDir: string, target: string): Promise<string> {
  const { code, stdout, stderr } = await reports([command, target], { env: { REPORTS_DATA_DIR: dataDir } });
  assert.is(code, 0, stderr);
  return stdout;
}

const field = (stdout: string, name: string) => new RegExp(`^${name}:\\s+(.*)$`, 'm').exec(stdout)?.[1] ?? '';
const digestOf = (stdout: string) => field(stdout, 'state digest').split(' ')[0] ?? '';

const restore = suite<{ dir: string }>('a restore never brings a deleted report back');
restore.before.each(async (context) => {
  context.dir = await tempDir('reports-restore-erasure-');
});
restore.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

restore(
  "a backup taken before a delete, restored: the report is absent, its key in no file, and the digest printed is the state's",
  async ({ dir }) => {
    const dataDir = join(dir, 'data');
    let server = await startTestServer({ REPORTS_SNAPSHOT_EVERY: '1' }, { dataDir });
    let doomed: ContentKey;
    try {
      assert.is((await postReport(server, '7', 'Performance review J Smith', 'hr')).status, 200);
      assert.is((await postReport(server, '8', 'kept report', 'finance')).status, 200);
      doomed = await keyOf(server, '7');
      await run('backup', dataDir, join(dir, 'backup'));
      assert.is((await deleteReport(server, '7')).status, 204);
    } finally {
      await server.close();
    }
    const printed = await run('restore', dataDir, join(dir, 'backup'));
    assert.is(field(printed, 'deleted again'), '1 report deleted since the backup was taken: 7');
    assert.match(
      field(printed, 'previous log'),
      /events\.log\.before-restore-.*\(delete it once the restored service is checked\)$/,
    );
    assert.equal(
      await filesHolding(dataDir, [doomed.secret, doomed.contentDigest, Buffer.from('J Smith')]),
      [],
      'no file under the data directory holds its key or its name',
    );
    server = await startTestServer({}, { dataDir });
    try {
      assert.is(await serverDigest(server), digestOf(printed), 'the digest the restore printed');
      assert.is((await deleteReport(server, '7')).status, 404);
      assert.equal(await openedReport(server.projector.model.reports, server.keys, '8'), {
        name: 'kept report',
        tag: 'finance',
      });
      assert.is((await postReport(server, '7', 'a new incarnation')).status, 200);
      assert.not.equal((await keyOf(server, '7')).id, doomed.id);
    } finally {
      await server.close();
    }
    assert.equal(
      await filesHolding(dataDir, [doomed.secret, doomed.contentDigest]),
      [],
      'nor after the server ran on it',
    );
  },
);

restore(
  'a backup restores into an empty data directory with the digest it printed, every live report opening with its key',
  async ({ dir }) => {
    const dataDir = join(dir, 'data');
    let server = await startTestServer({ REPORTS_SNAPSHOT_EVERY: '1' }, { dataDir });
    let printed: string;
    try {
      for (const id of ['1', '2', '3']) assert.is((await postReport(server, id, `report ${id}`, 'tag')).status, 200);
      assert.is((await deleteReport(server, '2')).status, 204);
      await until(
        async () =>
          (await readdir(join(dataDir, 'snapshots')).catch(() => [] as string[])).some((name) =>
            name.endsWith('.snap'),
          ),
        'a snapshot',
      );
      printed = await run('backup', dataDir, join(dir, 'backup'));
    } finally {
      await server.close();
    }
    const elsewhere = join(dir, 'elsewhere');
    const restored = await run('restore', elsewhere, join(dir, 'backup'));
    assert.is(digestOf(restored), digestOf(printed));
    assert.match(field(restored, 'deleted again'), /^none known \(this data directory held no keys\.db and no log/);
    assert.match(
      field(restored, 'snapshot'),
      /^snapshot-\d{16}\.snap$/,
      "the backup's snapshot, which holds nothing in the clear",
    );
    server = await startTestServer({}, { dataDir: elsewhere });
    try {
      assert.ok(
        server.logLines().some((line) => line['msg'] === 'loaded a snapshot; folding only the tail of the log'),
        'the server starts from it',
      );
      assert.is(await serverDigest(server), digestOf(printed));
      assert.equal(await openedReport(server.projector.model.reports, server.keys, '1'), {
        name: 'report 1',
        tag: 'tag',
      });
      assert.equal(await openedReport(server.projector.model.reports, server.keys, '3'), {
        name: 'report 3',
        tag: 'tag',
      });
      assert.is((await deleteReport(server, '2')).status, 404);
    } finally {
      await server.close();
    }
  },
);

restore(
  'keeps ids unique: a key minted after a restore has an id the store never used, and keys of reports the restore left out are swept',
  async ({ dir }) => {
    const dataDir = join(dir, 'data');
    let server = await startTestServer({}, { dataDir });
    try {
      assert.is((await postReport(server, '1', 'one')).status, 200);
      await run('backup', dataDir, join(dir, 'backup'));
      assert.is((await postReport(server, '2', 'two')).status, 200);
      assert.is((await postReport(server, '3', 'three')).status, 200);
    } finally {
      await server.close();
    }
    await run('restore', dataDir, join(dir, 'backup'));
    server = await startTestServer({}, { dataDir });
    try {
      assert.is((await postReport(server, '4', 'four')).status, 200);
      assert.is(
        slotOfKeyId((await keyOf(server, '4')).id),
        3,
        'after the three ids the store gave out before the restore',
      );
      assert.is(server.projector.model.reports.has('2'), false);
    } finally {
      await server.close();
    }
    const table = await readKeyTable(dataDir);
    assert.equal(
      [0, 1, 2, 3].map((slot) => table?.view(slot).kind),
      ['live', 'destroyed', 'destroyed', 'live'],
    );
  },
);

restore(
  'a backup of a history written in the clear is sealed as it is restored; a report deleted since is absent and its name in no file',
  async ({ dir }) => {
    const dataDir = join(dir, 'data');
    await appendToFileLog(dataDir, [created('1', 'Alpha secret name', 'alpha-tag'), created('2', 'Beta kept name')]);
    await run('backup', dataDir, join(dir, 'backup'));
    let server = await startTestServer({}, { dataDir });
    try {
      assert.is((await deleteReport(server, '1')).status, 204);
    } finally {
      await server.close();
    }
    const printed = await run('restore', dataDir, join(dir, 'backup'));
    assert.is(field(printed, 'deleted again'), '1 report deleted since the backup was taken: 1');
    assert.is(field(printed, 'sealed'), '2 creates written in the clear (before erasure)');
    assert.match(field(printed, 'previous log'), /^not kept: it holds creates written in the clear/);
    assert.equal(
      await filesHolding(dataDir, [Buffer.from('Alpha secret'), Buffer.from('alpha-tag'), Buffer.from('Beta kept')]),
      [],
      'no name or tag in the clear',
    );
    server = await startTestServer({}, { dataDir });
    try {
      assert.is(await serverDigest(server), digestOf(printed));
      assert.is((await deleteReport(server, '1')).status, 404);
      assert.equal(await openedReport(server.projector.model.reports, server.keys, '2'), { name: 'Beta kept name' });
    } finally {
      await server.close();
    }
  },
);

restore(
  "the log a restore keeps opens only with the data directory's keys: a report deleted after the restore opens from nothing",
  async ({ dir }) => {
    const dataDir = join(dir, 'data');
    let server = await startTestServer({}, { dataDir });
    let key: ContentKey;
    try {
      assert.is((await postReport(server, '1', 'kept across the restore')).status, 200);
      key = await keyOf(server, '1');
      await run('backup', dataDir, join(dir, 'backup'));
    } finally {
      await server.close();
    }
    await run('restore', dataDir, join(dir, 'backup'));
    assert.ok(
      (await readdir(dataDir)).some((name) => name.startsWith('events.log.before-restore-')),
      'the replaced log is kept',
    );
    server = await startTestServer({}, { dataDir });
    try {
      assert.is((await deleteReport(server, '1')).status, 204);
    } finally {
      await server.close();
    }
    assert.equal(await filesHolding(dataDir, [key.secret, key.contentDigest]), []);
  },
);

restore(
  'a delete in the log whose erasure keys.db lacks (a crash tore or lost it, or keys.db is gone) is applied again all the same',
  async ({ dir }) => {
    // Each way keys.db can fail to record a delete the log holds; before, the restore printed
    // "deleted again: none" and the report came back, readable.
    const damages: Record<string, (dataDir: string, beforeDelete: string, slot: number) => Promise<void>> = {
      'keys.db as it was before the delete (a crash between the two group commits)': (dataDir, beforeDelete) =>
        copyFile(beforeDelete, join(dataDir, 'keys.db')),
      'keys.db gone': (dataDir) => rm(join(dataDir, 'keys.db')),
      "the delete's slot damaged (a destruction torn by a crash)": async (dataDir, _, slot) => {
        const bytes = await readFile(join(dataDir, 'keys.db'));
        const at = HEADER_BYTES + slot * SLOT_BYTES + 40;
        bytes[at] = (bytes[at] as number) ^ 0xff;
        await writeFile(join(dataDir, 'keys.db'), bytes);
      },
    };
    for (const [damage, apply] of Object.entries(damages)) {
      const dataDir = join(dir, damage.replace(/\W+/g, '-'));
      const backup = `${dataDir}-backup`;
      let server = await startTestServer({}, { dataDir });
      let doomed: ContentKey;
      try {
        assert.is((await postReport(server, '7', 'Performance review J Smith', 'hr')).status, 200);
        assert.is((await postReport(server, '8', 'kept report', 'finance')).status, 200);
        doomed = await keyOf(server, '7');
        await run('backup', dataDir, backup);
        await copyFile(join(dataDir, 'keys.db'), `${dataDir}-keys-before-delete`);
        assert.is((await deleteReport(server, '7')).status, 204);
      } finally {
        await server.close();
      }
      await apply(dataDir, `${dataDir}-keys-before-delete`, slotOfKeyId(doomed.id) as number);
      const printed = await run('restore', dataDir, backup);
      assert.is(field(printed, 'deleted again'), '1 report deleted since the backup was taken: 7', damage);
      assert.equal(await filesHolding(dataDir, [doomed.secret, doomed.contentDigest]), [], damage);
      server = await startTestServer({}, { dataDir });
      try {
        assert.is(await serverDigest(server), digestOf(printed), damage);
        assert.is((await server.request('/reports/7')).status, 404, damage);
        assert.equal(
          await openedReport(server.projector.model.reports, server.keys, '8'),
          { name: 'kept report', tag: 'finance' },
          damage,
        );
      } finally {
        await server.close();
      }
    }
  },
);

restore(
  "a damaged slot of a report the directory's log holds live takes the backup's key; a history sealed by a restore still continues it",
  async ({ dir }) => {
    const dataDir = join(dir, 'data');
    const backup = join(dir, 'backup');
    // A history in the clear: the restore seals it in place (other bytes, the same events).
    await appendToFileLog(dataDir, [created('1', 'one'), created('2', 'two'), created('3', 'three')]);
    await run('backup', dataDir, backup);
    await run('restore', dataDir, backup);
    let server = await startTestServer({}, { dataDir });
    let kept: ContentKey;
    try {
      assert.is((await deleteReport(server, '2')).status, 204);
      kept = await keyOf(server, '3');
    } finally {
      await server.close();
    }
    // keys.db lost: the log, sealed since the backup, still tells that 2 was deleted.
    await rm(join(dataDir, 'keys.db'));
    let printed = await run('restore', dataDir, backup);
    assert.is(field(printed, 'deleted again'), '1 report deleted since the backup was taken: 2');
    // Now report 3's slot damaged (corruption: the log holds it live): the backup's key is the cure.
    const sealedBackup = join(dir, 'sealed-backup');
    await run('backup', dataDir, sealedBackup);
    const bytes = await readFile(join(dataDir, 'keys.db'));
    server = await startTestServer({}, { dataDir });
    try {
      kept = await keyOf(server, '3');
    } finally {
      await server.close();
    }
    const damaged = await readFile(join(dataDir, 'keys.db'));
    const at = HEADER_BYTES + (slotOfKeyId(kept.id) as number) * SLOT_BYTES + 40;
    damaged[at] = (damaged[at] as number) ^ 0xff;
    await writeFile(join(dataDir, 'keys.db'), damaged);
    assert.ok(bytes.length > 0);
    printed = await run('restore', dataDir, sealedBackup);
    assert.match(field(printed, 'deleted again'), /^none /);
    server = await startTestServer({}, { dataDir });
    try {
      assert.equal(await openedReport(server.projector.model.reports, server.keys, '3'), { name: 'three' });
      assert.is((await server.request('/reports/2')).status, 404);
    } finally {
      await server.close();
    }
  },
);

restore.run();
