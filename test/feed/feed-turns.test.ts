// Feeds catching up on a long history whose every write is taken at once (as a socket's are while
// the kernel has room: megabytes on loopback) send in turns, giving the event loop a turn between
// two: before, each sent its whole history in one turn, and a hundred such feeds held every other
// request for seconds.
import { Writable } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Feed } from '../../src/feed/feed.js';
import type { FeedSource } from '../../src/feed/feed-options.js';
import type { ShownLine } from '../../src/feed/shown-line.js';
import { FeedTurns } from '../../src/feed/feed-turns.js';
import type { LogRecord } from '../../src/log/event-log.js';
import { until } from '../helpers/async.js';

const RECORDS = 20_000;
const records: LogRecord[] = Array.from({ length: RECORDS }, (_, offset) => ({
  key: String(offset),
  value: Buffer.from(`record ${offset}`),
  timestampMs: 0,
  position: { partition: 0, offset },
}));

const shown = (record: LogRecord): ShownLine => ({ text: `{"o":${record.position.offset}}`, type: 'ReportCreated' });

/** A feed of the whole history to a client that takes every write at once; `onSent` told each record's offset. */
function catchingUp(
  onSent: (offset: number) => void,
  turns?: FeedTurns,
  show: (record: LogRecord) => Promise<ShownLine> = (record) => Promise.resolve(shown(record)),
): Feed {
  const out = new Writable({
    highWaterMark: 1 << 30,
    write(chunk: Buffer, _encoding, done) {
      const offset = /"o":(\d+)/.exec(chunk.toString())?.[1];
      if (offset !== undefined) onSent(Number(offset));
      done();
    },
  });
  const source: FeedSource = {
    log: {
      async *readBatches() {
        yield await Promise.resolve(records);
      },
    },
    cursor: () => new Map([[0, RECORDS]]),
    onApplied: () => () => undefined,
  };
  return new Feed(
    out,
    {
      source,
      from: new Map(),
      format: 'ndjson',
      kind: 'file',
      show,
      bufferBytes: 1 << 20,
      heartbeatMs: 60_000,
    },
    { most: 0, sendQueues: () => ({ queued: () => undefined }) },
    turns,
  );
}

const test = suite('feeds catching up');

test('a feed gives the event loop a turn while it sends, and still sends every record in order', async () => {
  const sent: number[] = [];
  const feed = catchingUp((offset) => sent.push(offset));
  const running = feed.run();
  // A turn asked for as the feed starts: it comes while the feed still has records to send.
  const sentAtTheTurn = await new Promise<number>((resolve) => setImmediate(() => resolve(sent.length)));
  await until(() => sent.length === RECORDS, 'every record sent');
  feed.end('the test is done');
  await running;
  assert.ok(sentAtTheTurn < RECORDS, `${sentAtTheTurn} of ${RECORDS} records sent before the event loop had a turn`);
  assert.equal(
    sent,
    Array.from({ length: RECORDS }, (_, offset) => offset),
  );
});

test('a feed whose record takes long to open (a key read) holds up no other feed meanwhile', async () => {
  const turns = new FeedTurns();
  let openSlowRecord: () => void = () => undefined;
  const slow = new Promise<void>((resolve) => (openSlowRecord = resolve));
  const counts = [0, 0];
  const feeds = [
    // Feed 0's second record waits until the test lets it open.
    catchingUp(
      () => (counts[0] = (counts[0] as number) + 1),
      turns,
      async (record) => {
        if (record.position.offset === 1) await slow;
        return shown(record);
      },
    ),
    catchingUp(() => (counts[1] = (counts[1] as number) + 1), turns),
  ];
  const running = feeds.map((feed) => feed.run());
  await until(() => counts[1] === RECORDS, 'every record of the other feed sent');
  assert.is(counts[0], 1, 'the slow feed sent its first record only');
  openSlowRecord();
  await until(() => counts[0] === RECORDS, 'every record of the slow feed sent');
  for (const feed of feeds) feed.end('the test is done');
  await Promise.all(running);
});

test('a turn passed goes to the feed waiting longest, in a later turn of the event loop', async () => {
  const turns = new FeedTurns();
  const events: string[] = [];
  await turns.take();
  const waiters = ['second', 'third'].map((name) => turns.take().then(() => events.push(name)));
  await Promise.resolve();
  assert.equal(events, [], 'both wait while the turn is held');
  const otherWork = new Promise<void>((resolve) => setImmediate(() => resolve(void events.push('other work'))));
  turns.pass();
  await waiters[0];
  turns.pass();
  await Promise.all([...waiters, otherWork]);
  assert.equal(events, ['other work', 'second', 'third']);
  turns.pass();
  let taken = false;
  void turns.take().then(() => (taken = true));
  await Promise.resolve();
  assert.not.ok(taken, 'a turn just given up is not taken again in the same turn of the event loop');
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  assert.ok(taken, 'then it is');
  turns.pass();
  await new Promise((resolve) => setImmediate(resolve));
  let free = false;
  void turns.take().then(() => (free = true));
  await Promise.resolve();
  assert.ok(free, 'a turn no one holds is taken at once');
});

test.run();
