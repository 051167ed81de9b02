// A feed client that stops reading is cut off, with a last line saying why and where to resume,
// while writes go on at full speed and another feed keeps up; resuming there loses nothing.
import { request, type IncomingMessage } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FeedClient, type FeedLine } from '../helpers/feed-client.js';
import type { Env } from '../../src/config.js';
import { startKafkaServer, withKafka } from '../helpers/kafka.js';
import { startTestServer, TEST_TOKEN, type TestServer } from '../helpers/server.js';
import { distinctive, postReport } from '../http/requests.js';

/** The offset of a position on one partition (`N`, or `0:N` on a topic of one partition). */
const offsetOf = (position: string | undefined | null) => Number(position?.split(':').at(-1));

/** A feed whose client reads nothing until `resume()` is called (the socket is not read: its receive window fills). */
async function stalledFeed(url: string): Promise<{ resume(): Promise<string> }> {
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const sent = request(
      `${url}/events`,
      { headers: { Authorization: `Bearer ${TEST_TOKEN}` }, agent: false },
      resolve,
    );
    sent.once('error', reject);
    sent.end();
  });
  response.pause();
  return {
    resume: () =>
      new Promise((resolve) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        const done = () => resolve(Buffer.concat(chunks).toString('utf8'));
        response.once('end', done);
        response.once('close', done);
        response.once('error', done);
        response.resume();
      }),
  };
}

function slowConsumer(name: string, start: (env: Env) => Promise<TestServer>): void {
  const test = suite(`GET /events: a slow consumer (${name})`);
  test('is cut off with a last line saying where to resume; writes and another feed go on; resuming there loses nothing', async () => {
    // A small buffer, and heartbeats rare enough that only the buffer decides (and the last line waits that long for the client).
    const server = await start({ REPORTS_FEED_BUFFER: '64kb', REPORTS_FEED_HEARTBEAT_MS: '20000' });
    try {
      const keeping = await FeedClient.open(server.url);
      const stalled = await stalledFeed(server.url);
      const big = 'x'.repeat(3500);
      let written = 0;
      const cutOff = () => server.logLines().some((line) => line['msg'] === 'feed ended by the server');
      // Writes at full speed (8 at a time) until the stalled client is cut off, and a while after.
      let after = Infinity;
      const writers = Array.from({ length: 8 }, async () => {
        while (written < after) {
          written += 1;
          const response = await postReport(server, String(written), `${distinctive('r')}-${big}`);
          assert.is(response.status, 200);
          if (after === Infinity && cutOff()) after = written + 200;
          if (written > 20_000) throw new Error('the stalled feed was never cut off');
        }
      });
      await Promise.all(writers);
      const text = await stalled.resume();
      const lines = text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as FeedLine);
      const last = lines.at(-1) as FeedLine;
      assert.match(last.end ?? '', /read too slowly/);
      const events = lines.filter((line) => line.event);
      assert.ok(events.length > 0);
      assert.equal(
        events.map((line) => offsetOf(line.position)),
        events.map((_, index) => index),
        'every event up to the cut, in order',
      );
      assert.is(offsetOf(last.after), events.length - 1);
      // The other feed kept up with every write.
      await keeping.waitFor((feed) => feed.events().length === written, 'the keeping feed to have every event');
      assert.equal(
        keeping.events().map((line) => offsetOf(line.position)),
        Array.from({ length: written }, (_, index) => index),
      );
      // Resuming after the last line's position gives the rest, without a gap.
      const resumed = await FeedClient.open(server.url, { query: `?after=${last.after ?? ''}` });
      await resumed.waitFor((feed) => feed.events().length === written - events.length, 'the rest');
      assert.is(offsetOf(resumed.events()[0]?.position), events.length);
      await Promise.all([keeping.close(), resumed.close()]);
    } finally {
      await server.dispose();
    }
  });

  test.run();
}

slowConsumer('file log', (env) => startTestServer(env));
// One partition, so the positions count the events in order as on the file log.
withKafka('a slow feed consumer', (brokers) =>
  slowConsumer('Kafka', (env) => startKafkaServer(brokers, { REPORTS_TOPIC_PARTITIONS: '1', ...env })),
);
