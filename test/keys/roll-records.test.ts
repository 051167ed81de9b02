// The roll-record timer: it writes a roll record to each partition that is due, tries again (no
// sooner than a second later) while writing fails, saying so once per outage, and stops.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { RollRecords } from '../../src/keys/roll-records.js';
import { SegmentRolls } from '../../src/keys/segment-rolls.js';
import { memoryLogger } from '../helpers/server.js';

const rolls = suite('RollRecords');

/** A tracker with partition 1 due now (its tombstone long past). */
function due(): SegmentRolls {
  const tracker = new SegmentRolls(10, 10);
  tracker.seen(1, Date.now() - 1000, true);
  return tracker;
}

rolls('writes a roll record to the partition that is due', async () => {
  const written: (readonly number[])[] = [];
  const tracker = due();
  const records = new RollRecords(
    tracker,
    (partitions) => {
      written.push(partitions);
      tracker.seen(1, Date.now(), false);
      return Promise.resolve();
    },
    memoryLogger().logger,
  );
  records.schedule();
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(written, [[1]]);
  records.stop();
});

rolls('while writing fails it tries again a second later, warns once, and says when it wrote one again', async () => {
  const { logger, lines } = memoryLogger();
  const tracker = due();
  let tries = 0;
  const records = new RollRecords(
    tracker,
    () => {
      tries += 1;
      if (tries < 3) return Promise.reject(new Error('broker away'));
      tracker.seen(1, Date.now(), false);
      return Promise.resolve();
    },
    logger,
  );
  records.schedule();
  await new Promise((resolve) => setTimeout(resolve, 2500));
  assert.is(tries, 3);
  const messages = lines().map((line) => line['msg']);
  assert.equal(
    messages.filter((message) => typeof message === 'string' && message.startsWith('could not write a roll record'))
      .length,
    1,
  );
  assert.ok(messages.includes('wrote a roll record to the key topic again'));
  records.stop();
});

rolls('nothing is written once stopped', async () => {
  let tries = 0;
  const records = new RollRecords(
    due(),
    () => {
      tries += 1;
      return Promise.resolve();
    },
    memoryLogger().logger,
  );
  records.stop();
  records.schedule();
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.is(tries, 0);
});

rolls.run();
