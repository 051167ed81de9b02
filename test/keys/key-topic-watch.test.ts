// After a failed key write the topic list is read, at most once every interval and one check at a
// time; a missing key topic is logged as one error naming it until it is seen again.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KeyTopicWatch } from '../../src/keys/key-topic-watch.js';
import { memoryLogger } from '../helpers/server.js';

const watch = suite('KeyTopicWatch');

function watched(listed: () => boolean) {
  const { logger, lines } = memoryLogger();
  let now = 0;
  let checks = 0;
  const topicWatch = new KeyTopicWatch({
    topic: 'r.keys',
    exists: () => {
      checks += 1;
      return Promise.resolve(listed());
    },
    logger,
    everyMs: 1000,
    now: () => now,
  });
  const errors = () => lines().filter((line) => line['level'] === 50);
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return {
    topicWatch,
    errors,
    checks: () => checks,
    later: (ms: number) => (now += ms),
    /** A key write fails, and the check it starts (if any) has answered. */
    writeFails: async () => {
      topicWatch.failed();
      await settle();
    },
  };
}

watch('logs one error naming a missing key topic, however many writes fail', async () => {
  const { topicWatch, errors, later, writeFails } = watched(() => false);
  for (let i = 0; i < 3; i += 1) {
    await writeFails();
    later(1500);
  }
  assert.ok(topicWatch.missing);
  assert.is(errors().length, 1);
  assert.match(String(errors()[0]?.['msg']), 'the key topic r.keys no longer exists');
  await topicWatch.close();
});

watch('reads the topic list at most once an interval', async () => {
  const { topicWatch, checks, later, writeFails } = watched(() => true);
  topicWatch.failed();
  await writeFails();
  later(500);
  await writeFails();
  assert.is(checks(), 1);
  later(600);
  await writeFails();
  assert.is(checks(), 2);
  assert.not.ok(topicWatch.missing);
  await topicWatch.close();
});

watch('logs again once the topic came back and went again; a closed watch checks nothing', async () => {
  let listed = false;
  const { topicWatch, errors, checks, later, writeFails } = watched(() => listed);
  await writeFails();
  listed = true;
  later(1000);
  await writeFails();
  assert.not.ok(topicWatch.missing);
  listed = false;
  later(1000);
  await writeFails();
  assert.is(errors().length, 2);
  await topicWatch.close();
  later(1000);
  await writeFails();
  assert.is(checks(), 3);
});

watch(
  'a write acknowledged after the topic was missing says it exists again, and a later loss is logged again',
  async () => {
    let listed = false;
    const { topicWatch, errors, later, writeFails } = watched(() => listed);
    await writeFails();
    assert.ok(topicWatch.missing);
    // The topic is created again: writes go through, no write fails, so no check runs.
    listed = true;
    topicWatch.written();
    assert.not.ok(topicWatch.missing);
    listed = false;
    later(1000);
    await writeFails();
    assert.is(errors().length, 2);
    await topicWatch.close();
  },
);

watch('a check under way when a write is acknowledged does not call the topic missing', async () => {
  const { logger, lines } = memoryLogger();
  let answer: (listed: boolean) => void = () => undefined;
  const topicWatch = new KeyTopicWatch({
    topic: 'r.keys',
    // The topic list as a lagging broker gives it: the topic, created again, not in it yet.
    exists: () => new Promise<boolean>((resolve) => (answer = resolve)),
    logger,
    everyMs: 1000,
    now: () => 0,
  });
  topicWatch.failed();
  topicWatch.written();
  answer(false);
  await new Promise((resolve) => setImmediate(resolve));
  assert.not.ok(topicWatch.missing);
  assert.is(lines().filter((line) => line['level'] === 50).length, 0);
  await topicWatch.close();
});

watch.run();
