// What a feed does when a key it opened content with is destroyed (feed.ts `erased`), with a fake
// source, a fake kernel and a stream for the connection: the real connection's case (a slow client
// whose kernel queue holds the frame) is in feed-cases.ts, against a server.
import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FeedHub } from '../../src/feed/feed-hub.js';
import type { FeedOptions } from '../../src/feed/feed-options.js';
import type { FeedKernel } from '../../src/feed/send-queue.js';
import type { ShownLine } from '../../src/feed/shown-line.js';
import type { LogRecord } from '../../src/log/event-log.js';
import { parseKeyId } from '../../src/keys/key-store.js';
import { until } from '../helpers/async.js';

const KEY = 'AAAAAAAq';
const record: LogRecord = { key: '7', value: Buffer.from('{}'), position: { partition: 0, offset: 0 }, timestampMs: 0 };

/** A kernel that says `queued` bytes wait unacknowledged on every connection (undefined: it cannot tell). */
const kernel = (queued: number | undefined): FeedKernel => ({
  most: 4 * 1024 * 1024,
  sendQueues: () => ({ queued: () => queued }),
});

function options(show: (record: LogRecord) => Promise<ShownLine>): FeedOptions {
  return {
    source: {
      log: {
        // eslint-disable-next-line @typescript-eslint/require-await
        async *readBatches() {
          yield [record];
        },
      },
      cursor: () => new Map([[0, 1]]),
      onApplied: () => () => undefined,
    },
    from: new Map(),
    format: 'ndjson',
    kind: 'file',
    show,
    bufferBytes: 1024 * 1024,
    heartbeatMs: 60_000,
  };
}

const opened: ShownLine = { text: '{"opened":"SECRET"}', type: 'ReportCreated', opened: KEY };
const erased: ShownLine = { text: '{"erased":true}', type: 'ReportCreated' };

const test = suite('a feed when a key it opened content with is destroyed');

test('a record opened while its key is being destroyed is shown again, without it', async () => {
  const hub = new FeedHub(10, kernel(0));
  const out = new PassThrough();
  let text = '';
  out.on('data', (chunk: Buffer) => (text += chunk.toString()));
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let shows = 0;
  const running = hub.run(
    out,
    options(async () => {
      shows += 1;
      if (shows > 1) return erased;
      await gate;
      return opened;
    }),
  );
  await until(() => shows === 1, 'the record being shown');
  hub.erased([parseKeyId(KEY)]);
  release();
  await until(() => text.includes('\n'), 'a line');
  assert.not.ok(text.includes('SECRET'), 'content opened with a destroyed key was sent');
  assert.ok(text.includes('"erased":true'));
  hub.close();
  await running;
});

/** A stream for the response, with a fake connection whose reset destroys it. */
function connection(): PassThrough {
  const out = new PassThrough({ highWaterMark: 1 });
  const socket = Object.assign(new EventEmitter(), {
    localPort: 8080,
    remotePort: 51234,
    writableLength: 0,
    destroyed: false,
    resetAndDestroy() {
      socket.destroyed = true;
      out.destroy();
    },
  });
  return Object.assign(out, { socket });
}

for (const [how, queued, reading] of [
  ['still in the kernel queue of a client that reads nothing', 64 * 1024, false],
  ['in a kernel that cannot tell, for a client that reads nothing', undefined, false],
  ['acknowledged by a client that read them', 0, true],
] as const)
  test(`a feed the server ended: frames ${how}: ${reading ? 'left alone' : 'reset'} when their key is destroyed`, async () => {
    const hub = new FeedHub(10, kernel(queued));
    const out = connection();
    let text = '';
    if (reading) out.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const running = hub.run(out, { ...options(() => Promise.resolve(opened)), endGraceMs: 60_000 });
    await until(() => out.readableLength > 0 || text.includes('SECRET'), 'the frame written');
    hub.close();
    assert.is((await running).by, 'server');
    if (reading) await until(() => text.includes('"end"'), 'the last line');
    hub.erased([parseKeyId(KEY)]);
    assert.is(out.destroyed, !reading, reading ? 'reset though the client had it' : 'not reset');
    out.destroy();
  });

test.run();
