// When a roll record is due: the roll time plus this instance's delay after the newest tombstone
// whose segment may not have rolled; a record appended later than the roll time after it rolled it.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SegmentRolls } from '../../src/keys/segment-rolls.js';

const ROLL_MS = 3000;
const DELAY_MS = 1500;
const rolls = suite('SegmentRolls');

rolls('nothing is due before a tombstone', () => {
  const tracker = new SegmentRolls(ROLL_MS, DELAY_MS);
  tracker.seen(0, 1000, false);
  assert.is(tracker.nextDueMs(), undefined);
  assert.equal(tracker.due(1e12), []);
});

rolls('a tombstone makes its partition due the roll time and the delay after it', () => {
  const tracker = new SegmentRolls(ROLL_MS, DELAY_MS);
  tracker.seen(2, 10_000, true);
  assert.is(tracker.nextDueMs(), 10_000 + ROLL_MS + DELAY_MS);
  assert.equal(tracker.due(14_499), []);
  assert.equal(tracker.due(14_500), [2]);
});

rolls('the newest tombstone of a partition counts, and the earliest partition comes next', () => {
  const tracker = new SegmentRolls(ROLL_MS, DELAY_MS);
  tracker.seen(0, 10_000, true);
  tracker.seen(0, 11_000, true);
  tracker.seen(1, 10_500, true);
  assert.is(tracker.nextDueMs(), 10_500 + ROLL_MS + DELAY_MS);
  assert.equal(tracker.due(15_000), [1]);
  assert.equal(tracker.due(15_500).sort(), [0, 1]);
});

rolls('a record appended more than the roll time after the newest tombstone rolled its segment', () => {
  const tracker = new SegmentRolls(ROLL_MS, DELAY_MS);
  tracker.seen(0, 10_000, true);
  tracker.seen(0, 13_000, false);
  assert.equal(tracker.due(1e12), [0], 'exactly the roll time later does not roll (the broker compares with >)');
  tracker.seen(0, 13_001, false);
  assert.equal(tracker.due(1e12), []);
  assert.is(tracker.nextDueMs(), undefined);
});

rolls('a tombstone in the record that rolled the segment is pending again', () => {
  const tracker = new SegmentRolls(ROLL_MS, DELAY_MS);
  tracker.seen(0, 10_000, true);
  tracker.seen(0, 20_000, true);
  assert.is(tracker.nextDueMs(), 20_000 + ROLL_MS + DELAY_MS);
});

rolls.run();
