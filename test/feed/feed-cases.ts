// GET /events on either log: the same cases run on the file log (feed-file.test.ts) and on Kafka
// (feed-kafka.test.ts), each against a real server and its real log.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Env } from '../../src/config.js';
import { parseCursor } from '../../src/log/positions.js';
import { FeedClient, type FeedLine } from '../helpers/feed-client.js';
import { activeResources, untilNoMoreThan } from '../helpers/resources.js';
import type { TestServer } from '../helpers/server.js';
import { replaySummary } from '../helpers/cli.js';
import { serverDigest } from '../helpers/digest.js';
import { deleteReport, distinctive, idSource, postReport } from '../http/requests.js';
import { FeedFolder, followFeed } from '../examples/fold-feed.js';
import { TEST_TOKEN } from '../helpers/token.js';
import { until } from '../helpers/async.js';
import { SlowReader } from '../helpers/slow-reader.js';
import { kernelSendQueues } from '../../src/feed/send-queue.js';

export interface FeedLogSetup {
  readonly name: string;
  /** A server on a log of its own. */
  start(env?: Env): Promise<TestServer>;
  /** The env `reports replay` reads the server's log with. */
  toolEnv(server: TestServer): Env;
}

/** Where to resume after `lines`: the last position of each partition, as the feed's `after` writes it. */
export function resumeAfter(lines: readonly FeedLine[]): string {
  const last = new Map<number, number>();
  for (const { position } of lines) {
    if (position === undefined) continue;
    const [partition, offset] = position.includes(':') ? position.split(':').map(Number) : [0, Number(position)];
    last.set(partition as number, offset as number);
  }
  const kafka = lines.some(({ position }) => position?.includes(':'));
  return [...last]
    .sort(([a], [b]) => a - b)
    .map(([partition, offset]) => (kafka ? `${partition}:${offset}` : String(offset)))
    .join(',');
}

const positions = (lines: readonly FeedLine[]) => lines.map(({ position }) => position as string);

export function feedCases(setup: FeedLogSetup): void {
  const nextId = idSource();
  const test = suite(`GET /events (${setup.name})`);

  test("sends the history and then every new event; a live report's content opened, a deleted one's never", async () => {
    const server = await setup.start();
    try {
      const [a, b, c] = [nextId(), nextId(), nextId()];
      const names = new Map([
        [a, distinctive('a')],
        [b, distinctive('b')],
        [c, distinctive('c')],
      ]);
      for (const [id, name] of names) assert.is((await postReport(server, id, name, 'tag')).status, 200);
      assert.is((await deleteReport(server, b)).status, 204);
      const feed = await FeedClient.open(server.url);
      assert.is(feed.status, 200);
      assert.is(feed.header('content-type'), 'application/x-ndjson');
      await feed.waitFor((f) => f.events().length === 4, 'the history');
      const createOf = (id: string) =>
        feed.events().find((line) => line.event?.type === 'ReportCreated' && line.event.data.id === id) as FeedLine;
      assert.equal(createOf(a).event?.data, { id: a, name: names.get(a), tag: 'tag' });
      assert.ok(createOf(a).opened);
      assert.is(createOf(b).erased, true);
      assert.equal(
        Object.keys(createOf(b).event?.data.sealed as object),
        ['key'],
        'the box of erased content is never sent',
      );
      assert.not.ok(feed.text.includes(names.get(b) as string), "a deleted report's name was sent");
      assert.ok(feed.events().some((line) => line.event?.type === 'ReportDeleted' && line.event.data.id === b));
      for (const line of feed.events())
        assert.is(
          typeof (line.event as unknown as Record<string, unknown>)['specversion'],
          'string',
          'a CloudEvent in structured mode',
        );
      const d = nextId();
      const live = distinctive('d');
      assert.is((await postReport(server, d, live)).status, 200);
      await feed.waitFor((f) => f.events().length === 5, 'the new event');
      assert.equal(feed.events()[4]?.event?.data, { id: d, name: live });
      await feed.close();
    } finally {
      await server.dispose();
    }
  });

  test("a report deleted while its opened content still waits in the server's buffers for a slow client: the connection is reset, the content never delivered", async () => {
    const server = await setup.start();
    let reader: SlowReader | undefined;
    try {
      // Connected first, so that every frame comes live in the order the writes took effect (on
      // Kafka, a history is read partition by partition): more than the client's receive buffer
      // (about 2 KB) before the report, so that its frame stays in the server's send queue,
      // unacknowledged, while the client reads nothing.
      reader = await SlowReader.open(server.url, '/events', TEST_TOKEN);
      for (let i = 0; i < 3; i += 1)
        assert.is((await postReport(server, nextId(), `${distinctive('filler')} ${'f'.repeat(4000)}`)).status, 200);
      const id = nextId();
      const secret = distinctive('secret');
      assert.is((await postReport(server, id, secret, 'private')).status, 200);
      const ends = { localPort: Number(new URL(server.url).port), remotePort: reader.localPort };
      let last = -1;
      await until(
        () => {
          const queued = kernelSendQueues().queued(ends) ?? 0;
          const settled = queued === last && queued > 8000;
          last = queued;
          return settled;
        },
        "the feed's frames waiting in the server's send queue",
        { everyMs: 100 },
      );
      assert.is((await deleteReport(server, id)).status, 204);
      const received = await reader.readAll();
      assert.ok(received.includes('filler'), 'the client received the frames before it, as it read');
      assert.not.ok(received.includes(secret), "a deleted report's name reached the client after the delete's 204");
      await until(
        () =>
          server
            .logLines()
            .some((line) => line['reason'] === 'a report whose content it had not yet delivered was deleted'),
        'the reset logged',
        { timeoutMs: 5000 },
      );
    } finally {
      reader?.kill();
      await server.dispose();
    }
  });

  test('a client that keeps up is not cut off when a report it was shown is deleted', async () => {
    const server = await setup.start();
    try {
      const feed = await FeedClient.open(server.url);
      const [id, after] = [nextId(), nextId()];
      assert.is((await postReport(server, id, distinctive('shown'))).status, 200);
      await feed.waitFor((f) => f.events().some((line) => line.opened !== undefined), 'the opened create');
      assert.is((await deleteReport(server, id)).status, 204);
      assert.is((await postReport(server, after, distinctive('after'))).status, 200);
      await feed.waitFor((f) => f.events().length === 3, 'the delete and the next create, on the same feed');
      assert.not.ok(feed.ended, 'the feed was ended');
      await feed.close();
    } finally {
      await server.dispose();
    }
  });

  test('?after=POS resumes exactly after it; Last-Event-ID does for SSE; a malformed one is 400; one past the log end is 400', async () => {
    const server = await setup.start({ REPORTS_FEED_HEARTBEAT_MS: '50' });
    try {
      for (let i = 0; i < 12; i += 1) assert.is((await postReport(server, nextId(), distinctive('r'))).status, 200);
      const whole = await FeedClient.open(server.url);
      await whole.waitFor((f) => f.events().length === 12, 'the history');
      const all = whole.events();
      const after = resumeAfter(all.slice(0, 5));
      const resumed = await FeedClient.open(server.url, { query: `?after=${after}` });
      await resumed.waitFor((f) => f.events().length >= 7, 'the rest');
      assert.equal(new Set(positions(resumed.events())), new Set(positions(all.slice(5))));

      const sse = await FeedClient.open(server.url, { headers: { Accept: 'text/event-stream' } });
      assert.is(sse.header('content-type'), 'text/event-stream');
      await sse.waitFor(
        (f) => f.events().length === 12 && f.frames.some((frame) => frame.comment === 'heartbeat'),
        'the history and a heartbeat',
      );
      const frames = sse.frames.filter((frame) => frame.data !== undefined);
      for (const [index, frame] of frames.entries())
        assert.is(frame.id, resumeAfter(sse.events().slice(0, index + 1)), 'id: where to resume after this event');
      const again = await FeedClient.open(server.url, {
        query: '?after=0',
        headers: { Accept: 'text/event-stream', 'Last-Event-ID': frames[7]?.id as string },
      });
      await again.waitFor((f) => f.events().length >= 4, 'the rest after Last-Event-ID');
      assert.equal(new Set(positions(again.events())), new Set(positions(sse.events().slice(8))));

      // A partition twice; on the file log, a partition it does not have (read as "from the start"
      // once, with positions handed back that it then refused).
      const misplaced = setup.name === 'file log' ? ['5:3', '1:0', '0:1,1:1'] : [];
      for (const bad of ['x', '-1', '1:', '99999999999999999999', '', '0:4,0:2', ...misplaced]) {
        const response = await server.request(`/events?after=${encodeURIComponent(bad)}`);
        assert.is(response.status, 400, bad);
        const body = (await response.json()) as { error: number; message: string };
        assert.is(body.error, 400);
        assert.match(body.message, /after must be/);
      }
      // Past the log's end (from another log, or from before a backup was restored): taken as it
      // was, the feed skipped every event written up to it, silently.
      const head = await server.log.head();
      const at = (partition: number, offset: number) =>
        setup.name === 'file log' ? String(offset) : `${partition}:${offset}`;
      // A partition without events yet has no last position (`p:-1` is no cursor): leaving it out
      // reads it from its start. With 12 reports on three partitions, one stays empty in 2 % of runs.
      const last = [...head]
        .filter(([, offset]) => offset > 0)
        .map(([partition, offset]) => at(partition, offset - 1))
        .join(',');
      const beyond = [...head].map(([partition, offset]) => at(partition, offset + 1000)).join(',');
      assert.ok(parseCursor(beyond));
      for (const [query, headers] of [
        [`?after=${beyond}`, {}],
        ['', { Accept: 'text/event-stream', 'Last-Event-ID': beyond }],
      ] as const) {
        const refused = await server.request(`/events${query}`, { headers });
        assert.is(refused.status, 400, `${query} ${JSON.stringify(headers)}`);
        const body = (await refused.json()) as { error: number; message: string };
        assert.match(
          body.message,
          query === '' ? /^Last-Event-ID is past the end of the log/ : /^after is past the end/,
        );
        assert.match(body.message, /before a backup was restored/);
      }
      // The log's last position itself is where a caught-up client stands: nothing yet, then what comes.
      const waiting = await FeedClient.open(server.url, { query: `?after=${last}` });
      assert.is(waiting.status, 200, `?after=${last}`);
      const later = nextId();
      assert.is((await postReport(server, later, distinctive('later'))).status, 200);
      await waiting.waitFor((f) => f.events().length === 1, 'the one event written after it');
      assert.ok(JSON.stringify(waiting.events()[0]).includes(later));
      assert.is(waiting.ended, false);
      for (const feed of [whole, resumed, sse, again, waiting]) await feed.close();
    } finally {
      await server.dispose();
    }
  });

  if (setup.name === 'Kafka') {
    test('a position past the end of one partition, or of a partition the topic lacks, is 400 naming it', async () => {
      const server = await setup.start();
      try {
        for (let i = 0; i < 12; i += 1) assert.is((await postReport(server, nextId(), distinctive('r'))).status, 200);
        const head = await server.log.head();
        const [busiest, records] = [...head].sort(([, a], [, b]) => b - a)[0] as [number, number];
        const past = await server.request(`/events?after=${busiest}:${records + 1000}`);
        assert.is(past.status, 400);
        assert.match(
          ((await past.json()) as { message: string }).message,
          new RegExp(`last position is ${busiest}:${records - 1}\\b`),
        );
        const missing = await server.request(`/events?after=${head.size + 5}:0`);
        assert.is(missing.status, 400);
        assert.match(
          ((await missing.json()) as { message: string }).message,
          new RegExp(
            `partition ${head.size + 5}, which the log does not have \\(it has partitions 0-${head.size - 1}\\)`,
          ),
        );
        // Within the end on the busiest partition, from the start on the others: the others' events come.
        const feed = await FeedClient.open(server.url, { query: `?after=${busiest}:${records - 1}` });
        const others = [...head.values()].reduce((sum, offset) => sum + offset, 0) - records;
        await feed.waitFor((f) => f.events().length === others, "the other partitions' events");
        assert.ok(feed.events().every((line) => !line.position?.startsWith(`${busiest}:`)));
        await feed.close();
      } finally {
        await server.dispose();
      }
    });
  }

  test('401 without a token, 405 for other methods, 503 with the Error body beyond REPORTS_MAX_FEEDS', async () => {
    const server = await setup.start({ REPORTS_MAX_FEEDS: '2' });
    try {
      const unauthorized = await server.request('/events', { token: null });
      assert.is(unauthorized.status, 401);
      assert.is(((await unauthorized.json()) as { error: number }).error, 401);
      const head = await server.request('/events', { method: 'HEAD', headers: { Accept: 'text/event-stream' } });
      assert.is(head.status, 200);
      assert.is(head.headers.get('content-type'), 'text/event-stream');
      assert.is(await head.text(), '');
      const post = await server.request('/events', { method: 'POST' });
      assert.is(post.status, 405);
      await post.arrayBuffer();
      const feeds = [await FeedClient.open(server.url), await FeedClient.open(server.url)];
      const refused = await server.request('/events');
      assert.is(refused.status, 503);
      const body = (await refused.json()) as { error: number; message: string };
      assert.is(body.error, 503);
      assert.match(body.message, /REPORTS_MAX_FEEDS/);
      assert.ok(refused.headers.get('retry-after'));
      await feeds[0]?.close();
      // The slot is free once the server saw the client go.
      let admitted: FeedClient | undefined;
      await until(async () => {
        const feed = await FeedClient.open(server.url);
        if (feed.status === 200) admitted = feed;
        else await feed.close();
        return admitted !== undefined;
      }, 'a feed admitted again');
      await admitted?.close();
      await feeds[1]?.close();
    } finally {
      await server.dispose();
    }
  });

  test('a shutdown ends the feed with a last line saying why and where to resume', async () => {
    const server = await setup.start();
    let disposed = false;
    try {
      for (let i = 0; i < 3; i += 1) assert.is((await postReport(server, nextId(), distinctive('r'))).status, 200);
      const feed = await FeedClient.open(server.url);
      await feed.waitFor((f) => f.events().length === 3, 'the history');
      await server.dispose();
      disposed = true;
      await feed.waitFor((f) => f.ended, 'the feed to end');
      const last = feed.lines.at(-1) as FeedLine;
      assert.is(last.end, 'the server is shutting down');
      assert.is(last.after, resumeAfter(feed.events()));
    } finally {
      if (!disposed) await server.dispose();
    }
  });

  test('a consumer folding the feed with projections/ reaches the digest reports replay prints', async () => {
    const server = await setup.start();
    try {
      for (let i = 1; i <= 30; i += 1) {
        const id = String(i);
        assert.is((await postReport(server, id, distinctive(`r${i}`), i % 3 === 0 ? 't' : undefined)).status, 200);
        if (i % 4 === 1) assert.is((await deleteReport(server, id)).status, 204);
      }
      const folder = new FeedFolder();
      const stop = new AbortController();
      const following = followFeed(server.url, TEST_TOKEN, folder, stop.signal);
      const head = await server.log.head();
      const total = [...head.values()].reduce((sum, offset) => sum + offset, 0);
      await until(() => resumeAfterCount(folder.after) === total, 'the consumer to fold the whole log');
      stop.abort();
      await following;
      assert.is(folder.reports.size, server.projector.model.reports.size);
      assert.is(folder.digest(), await serverDigest(server));
      assert.is(folder.digest(), `sha256:${(await replaySummary(setup.toolEnv(server))).digest}`);
    } finally {
      await server.dispose();
    }
  });

  test('1,000 feeds opened and closed leave no socket, timer or fetch loop behind', async () => {
    const server = await setup.start();
    try {
      for (let i = 0; i < 5; i += 1) assert.is((await postReport(server, nextId(), distinctive('r'))).status, 200);
      const once = async (query: string) => {
        const feed = await FeedClient.open(server.url, { query });
        assert.is(feed.status, 200);
        if (query === '') await feed.waitFor((f) => f.events().length >= 5, 'the history');
        await feed.close();
      };
      await once('');
      await until(
        async () => (await server.request('/healthz').then((r) => r.arrayBuffer())) !== undefined,
        'the server',
      );
      // untilNoMoreThan waits under a guard timer of its own: one is counted in `before` too.
      const guard = setTimeout(() => undefined, 60_000);
      const before = activeResources();
      clearTimeout(guard);
      // Half read the history from the log (a read of the log each), half only wait for new events.
      for (let round = 0; round < 50; round += 1)
        await Promise.all(
          Array.from({ length: 20 }, (_, i) => once(i % 2 === 0 ? '' : `?after=${resumeAfterHead(server)}`)),
        );
      await untilNoMoreThan(before, 15_000);
    } finally {
      await server.dispose();
    }
  });

  test.run();
}

/** Records an `after` covers (each partition's last offset + 1, summed). */
function resumeAfterCount(after: string | undefined): number {
  if (after === undefined) return 0;
  const cursor = parseCursor(after);
  return cursor === undefined ? 0 : [...cursor.values()].reduce((sum, offset) => sum + offset + 1, 0);
}

/** `after` at the projected head: each partition's last applied offset. */
function resumeAfterHead(server: TestServer): string {
  const cursor = server.projector.model.cursor;
  const kafka = server.log.description.startsWith('kafka');
  return [...cursor]
    .filter(([, next]) => next > 0)
    .map(([partition, next]) => (kafka ? `${partition}:${next - 1}` : String(next - 1)))
    .join(',');
}
