// A data directory whose file system fills while writes, snapshots and a backup run: the writes
// that find no room answer 503, /readyz says the log takes no writes, a snapshot is skipped, the
// backup fails saying why and leaves nothing that passes for a backup, nothing acknowledged is
// lost, and once an operator frees space the service takes writes again by itself, without a
// restart; a backup then succeeds, and a restart finds every acknowledged report.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, rm, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MANIFEST_NAME } from '../../src/backup/backup-manifest.js';
import { until } from '../helpers/async.js';
import { reports } from '../helpers/cli.js';
import { startTestServer, TEST_TOKEN, type TestServer } from '../helpers/server.js';
import { fillDisk, mountSmallDisk, withSmallDisks, type SmallDisk } from '../helpers/small-disk.js';
import { deleteReport, postReport } from '../http/requests.js';

const MiB = 1024 * 1024;
const nameOf = (id: number) => `${id} `.padEnd(1000, 'n');
// A snapshot is due every 20 writes: on this small disk each is skipped (test/snapshot/full-disk.test.ts).
const env = { REPORTS_SNAPSHOT_EVERY: '20' };

async function readyStatus(server: TestServer): Promise<number> {
  return (await fetch(`${server.url}/readyz`)).status;
}

async function nameStored(server: TestServer, id: number): Promise<string | undefined> {
  const response = await fetch(`${server.url}/reports/${id}`, { headers: { Authorization: `Bearer ${TEST_TOKEN}` } });
  return response.status === 200 ? ((await response.json()) as { name: string }).name : undefined;
}

/**
 * Fills `disk` to about 48 KB of room, then writes 1 KB reports ten at a time until the disk has
 * refused some (or 20): which were acknowledged (200) and which refused (503); nothing else.
 */
async function writeUntilRefused(
  server: TestServer,
  disk: SmallDisk,
): Promise<{ acknowledged: number[]; refused: number[] }> {
  const filler = join(disk.dir, 'filler');
  await truncate(filler, (await fillDisk(filler).catch(() => 0)) - 48 * 1024).catch(() => undefined);
  const acknowledged: number[] = [];
  const refused: number[] = [];
  for (let id = 1; id <= 400 && refused.length < 20; id += 10) {
    const ids = Array.from({ length: 10 }, (_, i) => id + i);
    const statuses = await Promise.all(
      ids.map(async (each) => (await postReport(server, String(each), nameOf(each))).status),
    );
    statuses.forEach((status, i) => {
      if (status === 200) acknowledged.push(ids[i] as number);
      else if (status === 503) refused.push(ids[i] as number);
      else assert.unreachable(`report ${ids[i]}: status ${status}`);
    });
  }
  return { acknowledged, refused };
}

/** Frees the room `writeUntilRefused` took, and waits until the server takes writes again. */
async function freeSpace(server: TestServer, disk: SmallDisk): Promise<void> {
  await rm(join(disk.dir, 'filler'));
  await until(async () => (await readyStatus(server)) === 200, '/readyz 200 after space was freed', {
    timeoutMs: 10_000,
    everyMs: 100,
  });
}

withSmallDisks('full data directory', () => {
  const full = suite<{ disk: SmallDisk }>('the embedded log on a data directory that fills up');
  full.before.each(async (context) => {
    // Room, once freed, for a backup (which keeps 64 MiB free for the log).
    context.disk = await mountSmallDisk(96 * MiB);
  });
  full.after.each(async ({ disk }) => {
    await disk.unmount();
  });

  full(
    'answers 503 while the disk is full, tells /readyz, resumes by itself once space is freed, and loses nothing acknowledged',
    async ({ disk }) => {
      const dataDir = join(disk.dir, 'data');
      let server = await startTestServer(env, { dataDir });
      const acknowledged: number[] = [];
      try {
        // Writes until the disk refuses some (about 48 KB of room: a few dozen 1 KB reports).
        const written = await writeUntilRefused(server, disk);
        const refused = written.refused;
        acknowledged.push(...written.acknowledged);
        assert.ok(refused.length > 0, 'the full disk refused writes');
        assert.ok(acknowledged.length > 0, 'writes were taken before the disk filled');
        assert.is(await readyStatus(server), 503, '/readyz while the disk is full');
        // One error line says so, not a line for each write refused (a full stack each, before).
        const said = (msg: string) => server.logLines().filter((line) => line['msg'] === msg).length;
        assert.is(said('the disk of the event log is full: writes answer 503 until space is freed'), 1);
        assert.is(said('the event log is unavailable'), 0, `${refused.length} writes refused`);
        assert.ok(
          server
            .logLines()
            .some((line) => line['msg'] === 'skipped a snapshot: it would leave the event log too little free space'),
        );
        // A backup onto the full disk fails, saying why, and leaves no backup behind.
        const backupDir = join(disk.dir, 'backup');
        const failedBackup = await reports(['backup', backupDir], { env: { REPORTS_DATA_DIR: dataDir } });
        assert.is.not(failedBackup.code, 0, 'a backup onto a full disk fails');
        assert.match(failedBackup.stderr, /ENOSPC|free space|full/i, `the backup's error: ${failedBackup.stderr}`);
        assert.is(
          existsSync(join(backupDir, MANIFEST_NAME)),
          false,
          'what the failed backup left does not pass for a backup',
        );

        // The operator frees space: the service takes writes again, no restart.
        await freeSpace(server, disk);
        for (const id of refused)
          assert.is(
            (await postReport(server, String(id), nameOf(id))).status,
            200,
            `report ${id} after space was freed`,
          );
        acknowledged.push(...refused);
        assert.ok(
          server.logLines().some((line) => line['msg'] === 'the event log takes writes again: space was freed'),
        );
        for (const id of acknowledged) assert.is(await nameStored(server, id), nameOf(id), `report ${id}`);
        const backup = await reports(['backup', backupDir], { env: { REPORTS_DATA_DIR: dataDir } });
        assert.is(backup.code, 0, `the backup once space was freed: ${backup.stderr}`);
      } finally {
        await server.close();
      }
      // A restart reads the log and keys.db as they were cut back: every acknowledged report, its content opened.
      server = await startTestServer(env, { dataDir });
      try {
        for (const id of acknowledged)
          assert.is(await nameStored(server, id), nameOf(id), `report ${id} after a restart`);
        assert.is((await postReport(server, '100000', nameOf(100000))).status, 200);
      } finally {
        await server.close();
      }
    },
  );

  full(
    "leaves no key of a create the full disk refused once writes resume: keys.db held its content's digest",
    async ({ disk }) => {
      const dataDir = join(disk.dir, 'data');
      const server = await startTestServer(env, { dataDir });
      try {
        const { refused } = await writeUntilRefused(server, disk);
        assert.ok(refused.length > 0, 'the full disk refused writes');
        await freeSpace(server, disk);
        // The client retries what was refused, then deletes it: nothing of its content may stay.
        for (const id of refused) assert.is((await postReport(server, String(id), nameOf(id))).status, 200);
        for (const id of refused) assert.is((await deleteReport(server, String(id))).status, 204);
        const keys = await readFile(join(dataDir, 'keys.db'));
        for (const id of refused) {
          const digest = createHash('sha256').update(nameOf(id), 'utf8').digest();
          assert.is(keys.indexOf(digest), -1, `the digest of report ${id}'s content is still in keys.db`);
        }
        assert.ok(
          server
            .logLines()
            .some((line) => line['msg'] === 'destroyed the keys of the creates refused while the disk was full'),
        );
      } finally {
        await server.close();
      }
    },
  );

  full.run();
});
