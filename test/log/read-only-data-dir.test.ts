// A data directory whose file system goes read-only under the service, as a failing disk's does
// (ext4 with errors=remount-ro; test/helpers/ext4-disk.ts): writes answer 503, /readyz says so, the
// server lets go of every file there so that an operator can unmount, check and mount the file
// system again (which the kernel refuses while a process holds one), nothing acknowledged is lost,
// and once the directory is writable again the server opens it again by itself: no restart.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { until } from '../helpers/async.js';
import { mountExt4Disk, withExt4Disks, type Ext4Disk } from '../helpers/ext4-disk.js';
import { FeedClient } from '../helpers/feed-client.js';
import { startTestServer, TEST_TOKEN, type TestServer } from '../helpers/server.js';
import { postReport } from '../http/requests.js';

const MiB = 1024 * 1024;
const LET_GO =
  'let go of the read-only data directory: every request but /healthz answers 503 until it is writable again (unmount, check and mount it now if a disk error made it read-only)';
const REOPENED = 'the data directory is writable again: opened it again, and requests are served';

async function nameStored(server: TestServer, id: number): Promise<string | undefined> {
  const response = await fetch(`${server.url}/reports/${id}`, { headers: { Authorization: `Bearer ${TEST_TOKEN}` } });
  return response.status === 200 ? ((await response.json()) as { name: string }).name : undefined;
}

const statusOf = async (server: TestServer, path: string) => (await fetch(`${server.url}${path}`)).status;

withExt4Disks('read-only data directory', () => {
  const readOnly = suite<{ disk: Ext4Disk }>('the embedded log on a data directory that goes read-only');
  readOnly.before.each(async (context) => {
    context.disk = await mountExt4Disk(64 * MiB);
  });
  readOnly.after.each(async ({ disk }) => {
    await disk.unmount();
  });

  readOnly(
    'answers 503 while read-only, lets go of its files for the repair, loses nothing acknowledged, and opens the directory again by itself',
    async ({ disk }) => {
      const dataDir = join(disk.dir, 'data');
      let server = await startTestServer({}, { dataDir });
      try {
        for (let id = 1; id <= 20; id += 1)
          assert.is((await postReport(server, String(id), `report ${id}`)).status, 200);
        await disk.fail();
        const refused = [21, 22, 23, 24, 25];
        const statuses = await Promise.all(
          refused.map(async (id) => (await postReport(server, String(id), `report ${id}`)).status),
        );
        assert.equal(statuses, [503, 503, 503, 503, 503], 'writes on a read-only file system');
        await until(
          () => server.logLines().some((line) => line['msg'] === LET_GO),
          'the server to let go of the data directory',
          { timeoutMs: 10_000 },
        );
        assert.is(await statusOf(server, '/readyz'), 503, '/readyz while read-only');
        assert.is(await statusOf(server, '/healthz'), 200, '/healthz: the process is alive');
        const refusedWrite = await postReport(server, '26', 'report 26');
        assert.is(refusedWrite.status, 503);
        assert.match(((await refusedWrite.json()) as { message: string }).message, /read-only/);

        // The operator's repair: possible only because the server holds no file there now.
        await disk.repair();
        await until(
          async () => (await statusOf(server, '/readyz')) === 200,
          '/readyz 200 once the directory is writable again',
          { timeoutMs: 15_000, everyMs: 200 },
        );
        assert.ok(server.logLines().some((line) => line['msg'] === REOPENED));
        for (let id = 1; id <= 20; id += 1)
          assert.is(await nameStored(server, id), `report ${id}`, `acknowledged report ${id}`);
        for (const id of refused)
          assert.is(
            (await postReport(server, String(id), `report ${id}`)).status,
            200,
            `report ${id} once writable again`,
          );

        // A start afterwards finds everything acknowledged.
        await server.dispose();
        server = await startTestServer({}, { dataDir });
        for (const id of [1, 20, ...refused])
          assert.is(await nameStored(server, id), `report ${id}`, `report ${id} after a restart`);
      } finally {
        await server.dispose();
      }
    },
  );

  readOnly(
    'on a mount point: the unmounted, empty directory is not taken for it; a feed is ended; a second failure is survived; a close while read-only ends',
    async ({ disk }) => {
      // The data directory is the mount point itself: unmounted, it is an empty directory, writable.
      const dataDir = disk.dir;
      let server = await startTestServer({}, { dataDir });
      try {
        for (let id = 1; id <= 5; id += 1)
          assert.is((await postReport(server, String(id), `report ${id}`)).status, 200);
        const feed = await FeedClient.open(server.url);
        await feed.waitFor((client) => client.lines.length >= 5, 'the feed to show the five creates');
        await disk.fail();
        // A write in flight as the file system fails, and one after.
        assert.is((await postReport(server, '6', 'report 6')).status, 503);
        await until(
          () => server.logLines().some((line) => line['msg'] === LET_GO),
          'the server to let go of the data directory',
          { timeoutMs: 10_000 },
        );
        await feed.waitFor((client) => client.ended, 'the feed to be ended at the let-go');

        await disk.unmountForRepair();
        await new Promise((resolve) => setTimeout(resolve, 2500));
        assert.is(await statusOf(server, '/readyz'), 503, 'an empty mount point is not taken for the data directory');
        assert.equal(await readdir(dataDir), [], 'nothing was created in the empty mount point');
        await disk.checkAndMount();
        await until(async () => (await statusOf(server, '/readyz')) === 200, '/readyz 200 once mounted again', {
          timeoutMs: 15_000,
          everyMs: 200,
        });
        for (let id = 1; id <= 5; id += 1) assert.is(await nameStored(server, id), `report ${id}`);
        assert.is((await postReport(server, '6', 'report 6')).status, 200);

        // A second failure after the first repair, and a close while read-only.
        await disk.fail();
        assert.is((await postReport(server, '7', 'report 7')).status, 503);
        await until(
          () => server.logLines().filter((line) => line['msg'] === LET_GO).length === 2,
          'the second let-go',
          { timeoutMs: 10_000 },
        );
        await server.dispose();
        await disk.repair();
        server = await startTestServer({}, { dataDir });
        for (let id = 1; id <= 6; id += 1)
          assert.is(await nameStored(server, id), `report ${id}`, `report ${id} after a restart`);
      } finally {
        await server.dispose();
      }
    },
  );

  readOnly.run();
});
