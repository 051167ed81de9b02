// The server on the embedded log while its wall clock is stepped an hour forward, then two back
// (libfaketime; the monotonic clock runs on, as when NTP or an operator steps a host's clock):
// every write is taken, /readyz stays 200 (no stall is seen in a jump), write time-outs still go
// by the monotonic clock, snapshots are still taken and loaded, and events carry the wall clock
// as given.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startChildServer, type ChildServer } from './helpers/child-server.js';
import { jumpingClock, type JumpingClock } from './helpers/faketime.js';
import { FeedClient } from './helpers/feed-client.js';
import { tempDir } from './helpers/server.js';

const HOUR_MS = 3_600_000;
const MARGIN_MS = 10 * 60_000;

type Context = { clock: JumpingClock; dataDir: string };

const jumps = suite<Context>('the server while its wall clock jumps');

jumps.before(async (context) => {
  context.clock = await jumpingClock();
  context.dataDir = await tempDir('reports-clock-');
});
jumps.after(async ({ clock }) => {
  await clock?.dispose();
});

/** Writes reports from `from` on, a few at a time, polling /readyz between them, for `ms`; returns the next id. */
async function writeFor(
  server: ChildServer,
  from: number,
  ms: number,
  seen: { statuses: number[]; ready: number[] },
): Promise<number> {
  let id = from;
  const until = performance.now() + ms;
  while (performance.now() < until) {
    const ids = [id, id + 1, id + 2];
    id += ids.length;
    const statuses = await Promise.all(
      ids.map(
        async (each) =>
          (
            await server.request('/reports', {
              method: 'POST',
              json: JSON.stringify({ id: each, name: `report ${each}` }),
            })
          ).status,
      ),
    );
    seen.statuses.push(...statuses);
    seen.ready.push((await server.request('/readyz', { token: null })).status);
  }
  return id;
}

jumps(
  'takes every write and stays ready through a jump of +1 h and one of -2 h, stamping events with the wall clock given',
  async ({ clock, dataDir }) => {
    const env = {
      REPORTS_DATA_DIR: dataDir,
      REPORTS_SNAPSHOT_EVERY: '100',
      REPORTS_PROJECTION_STALL_MS: '2000',
      ...clock.env,
    };
    let server = await startChildServer(env);
    const seen = { statuses: [] as number[], ready: [] as number[] };
    try {
      await server.waitReady();
      let id = await writeFor(server, 1, 1500, seen);
      await clock.set('+1h');
      id = await writeFor(server, id, 3000, seen);
      await clock.set('-1h');
      id = await writeFor(server, id, 3000, seen);
      await clock.set('+0');
      await writeFor(server, id, 1500, seen);
      assert.equal([...new Set(seen.statuses)], [200], 'every write was taken');
      assert.equal([...new Set(seen.ready)], [200], '/readyz stayed 200');
      assert.ok(
        server.lines().filter((line) => line['msg'] === 'wrote a snapshot of the read model').length > 0,
        'snapshots were taken',
      );
      // Events carry the wall clock the process was given: some an hour ahead, some an hour behind.
      const feed = await FeedClient.open(server.url);
      const written = seen.statuses.length;
      await feed.waitFor(
        (client) => client.lines.filter((line) => line.event !== undefined).length >= written,
        `the feed to show ${written} events`,
      );
      await feed.close();
      const offsets = feed.lines.flatMap(({ event }) =>
        event === undefined ? [] : [Date.parse((event as unknown as { time: string }).time) - Date.now()],
      );
      assert.ok(
        offsets.some((offset) => offset > HOUR_MS - MARGIN_MS),
        'an event stamped an hour ahead',
      );
      assert.ok(
        offsets.some((offset) => offset < -HOUR_MS + MARGIN_MS),
        'an event stamped an hour behind',
      );
      assert.ok(
        offsets.some((offset) => Math.abs(offset) < MARGIN_MS),
        'events stamped with the real clock',
      );
    } finally {
      server.kill('SIGTERM');
      await server.waitExit();
    }
    // A restart loads the newest snapshot (snapshots are named by position, not by time) and folds the rest.
    server = await startChildServer(env);
    try {
      await server.waitReady();
      assert.ok(server.lines().some((line) => line['msg'] === 'loaded a snapshot; folding only the tail of the log'));
      assert.is((await server.request('/reports/1')).status, 200);
    } finally {
      server.kill('SIGTERM');
      await server.waitExit();
    }
  },
);

jumps.run();
