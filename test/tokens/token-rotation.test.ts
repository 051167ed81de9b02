// Rotation without a restart in a real server process: SIGHUP reloads the tokens file, and under
// load (many concurrent requests with two tokens, one removed by rewriting the file and a SIGHUP) no
// request sent after the removal was reported is answered with the removed token, and none with the
// kept token is refused.
import { rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { TOKEN_WITHDRAWN } from '../../src/feed/feed-options.js';
import { startChildServer, type ChildServer } from '../helpers/child-server.js';
import { FeedClient } from '../helpers/feed-client.js';
import { tempDir } from '../helpers/server.js';

const KEPT = 'kept-token-0123456789abcdefgh';
const REMOVED = 'removed-token-0123456789abcd';
const NARROWED = 'narrowed-token-0123456789abc';
const WORKERS = 32;

interface Context {
  dir: string;
  file: string;
  server: ChildServer;
}

const rotation = suite<Context>('token rotation in a server process');

rotation.before.each(async (context) => {
  context.dir = await tempDir('reports-rotation-');
  context.file = join(context.dir, 'tokens');
  await writeFile(context.file, `kept write,read ${KEPT}\nremoved write,read ${REMOVED}\n`, { mode: 0o600 });
  context.server = await startChildServer({
    REPORTS_TOKENS: '',
    REPORTS_TOKENS_FILE: context.file,
    REPORTS_DATA_DIR: join(context.dir, 'data'),
  });
  await context.server.waitReady();
});

rotation.after.each(async ({ server, dir }) => {
  server.kill('SIGTERM');
  await server.waitExit();
  await rm(dir, { recursive: true, force: true });
});

rotation('reloads the tokens file on SIGHUP, and goes on running', async ({ server }) => {
  server.kill('SIGHUP');
  const line = await server.waitForLine(
    (entry) => entry['msg'] === 'tokens reloaded: nothing changed' && entry['trigger'] === 'SIGHUP',
    'the reload on SIGHUP',
  );
  assert.is(line['tokens'], 2);
  const response = await server.request('/reports', {
    method: 'POST',
    json: { id: 1, name: 'after the hang-up' },
    token: KEPT,
  });
  assert.is(response.status, 200);
  assert.not.ok(server.exited());
});

/** Puts `lines` in place as an operator does (a new file renamed over the old one), then SIGHUP; waits for the reload's line. */
async function rotate(
  server: ChildServer,
  dir: string,
  file: string,
  lines: string,
  reloaded: (entry: Record<string, unknown>) => boolean,
) {
  const next = join(dir, 'tokens.next');
  await writeFile(next, lines, { mode: 0o600 });
  await rename(next, file);
  server.kill('SIGHUP');
  await server.waitForLine((entry) => entry['msg'] === 'tokens reloaded' && reloaded(entry), 'the reload');
}

rotation(
  'an open feed whose token a reload removes or narrows to write gets nothing written after it, and ends saying why',
  async ({ server, dir, file }) => {
    await rotate(
      server,
      dir,
      file,
      `kept write,read ${KEPT}\nremoved read ${REMOVED}\nnarrowed read ${NARROWED}\n`,
      (entry) => Array.isArray(entry['added']) && entry['added'].includes('narrowed'),
    );
    const create = async (id: number, name: string) =>
      assert.is(
        (await server.request('/reports', { method: 'POST', json: { id, name, tag: `${name} tag` }, token: KEPT }))
          .status,
        200,
      );
    await create(1, 'before the reload');
    const [kept, removed, narrowed] = await Promise.all([
      FeedClient.open(server.url, { token: KEPT }),
      FeedClient.open(server.url, { token: REMOVED }),
      FeedClient.open(server.url, { token: NARROWED }),
    ]);
    for (const feed of [kept, removed, narrowed]) {
      assert.is(feed.status, 200);
      await feed.waitFor((client) => client.events().length === 1, 'the first report on every feed');
    }
    try {
      await rotate(
        server,
        dir,
        file,
        `kept write,read ${KEPT}\nnarrowed write ${NARROWED}\n`,
        (entry) => Array.isArray(entry['removed']) && entry['removed'].includes('removed'),
      );
      await create(2, 'after the reload');
      await kept.waitFor((client) => client.events().length === 2, "the second report on the kept token's feed");
      for (const feed of [removed, narrowed]) {
        await feed.waitFor((client) => client.ended, 'the feed to end');
        assert.equal(
          feed.events().map((line) => line.event?.data.id),
          ['1'],
          'nothing after the reload',
        );
        assert.not.match(feed.text, 'after the reload');
        assert.is(feed.lines.at(-1)?.end, TOKEN_WITHDRAWN);
      }
      assert.not.ok(kept.ended);
      assert.is((await FeedClient.open(server.url, { token: REMOVED })).status, 401);
      assert.is((await FeedClient.open(server.url, { token: NARROWED })).status, 403);
    } finally {
      await Promise.all([kept, removed, narrowed].map((feed) => feed.close()));
    }
  },
);

interface Sent {
  readonly token: 'kept' | 'removed';
  readonly startedMs: number;
  readonly status: number;
}

rotation(
  'under load, refuses the removed token from the moment its removal is reported, and never the kept one',
  async ({ server, dir, file }) => {
    const sent: Sent[] = [];
    let nextId = 1;
    let reportedMs = Number.POSITIVE_INFINITY;
    let stop = false;
    const worker = async (index: number) => {
      for (let turn = index; !stop; turn += 1) {
        const token = turn % 2 === 0 ? 'kept' : 'removed';
        const startedMs = performance.now();
        const response = await server.request('/reports', {
          method: 'POST',
          json: { id: nextId++, name: 'rotating' },
          token: token === 'kept' ? KEPT : REMOVED,
        });
        await response.arrayBuffer();
        sent.push({ token, startedMs, status: response.status });
      }
    };
    const afterReport = () =>
      sent.filter((request) => request.token === 'removed' && request.startedMs > reportedMs).length;
    const load = Array.from({ length: WORKERS }, (_, index) => worker(index));
    try {
      while (sent.length < 500) await new Promise((resolve) => setTimeout(resolve, 10));
      // As an operator rotates: a new file put in place, then SIGHUP.
      const next = join(dir, 'tokens.next');
      await writeFile(next, `kept write,read ${KEPT}\n`, { mode: 0o600 });
      await rename(next, file);
      const rewrittenMs = performance.now();
      server.kill('SIGHUP');
      const reported = await server.waitForLine(
        (entry) =>
          entry['msg'] === 'tokens reloaded' && Array.isArray(entry['removed']) && entry['removed'].includes('removed'),
        'the reload that removed the token',
      );
      reportedMs = performance.now();
      assert.is(reported['tokens'], 1);
      while (afterReport() < 300) await new Promise((resolve) => setTimeout(resolve, 10));
      stop = true;
      await Promise.all(load);
      const removed = sent.filter((request) => request.token === 'removed');
      const kept = sent.filter((request) => request.token === 'kept');
      assert.equal(
        kept.filter((request) => request.status !== 200).map((request) => request.status),
        [],
        'every request with the kept token answered 200',
      );
      assert.ok(
        removed.some((request) => request.startedMs < rewrittenMs && request.status === 200),
        'the removed token worked before',
      );
      const late = removed.filter((request) => request.startedMs > reportedMs);
      assert.ok(late.length >= 300);
      assert.equal(
        late.filter((request) => request.status !== 401).map((request) => request.status),
        [],
        'no request sent after the report was answered other than 401',
      );
      assert.equal(
        removed.filter((request) => request.status !== 200 && request.status !== 401),
        [],
      );
    } finally {
      stop = true;
      await Promise.allSettled(load);
    }
  },
);

rotation.run();
