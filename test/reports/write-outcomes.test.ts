import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WriteOutcomes } from '../../src/reports/write-outcomes.js';

const outcomes = suite('WriteOutcomes.failing');
outcomes('is not failing before any write', () => {
  assert.is(new WriteOutcomes(2000).failing(0), false);
});
outcomes('is failing once a write went unconfirmed and none was confirmed within the window', () => {
  const writes = new WriteOutcomes(2000);
  writes.confirmed(1000);
  writes.unconfirmed(3500);
  assert.is(writes.failing(3500), true);
  assert.is(writes.failing(5500), true);
});
outcomes('is not failing while some writes are confirmed (a stuck partition beside healthy ones)', () => {
  const writes = new WriteOutcomes(2000);
  for (let t = 0; t < 10_000; t += 100) {
    writes.confirmed(t);
    if (t % 1000 === 0) writes.unconfirmed(t + 50);
  }
  assert.is(writes.failing(9_990), false);
});
outcomes('stops failing when the window has passed without writes (the log\'s own health decides then)', () => {
  const writes = new WriteOutcomes(2000);
  writes.unconfirmed(1000);
  assert.is(writes.failing(3000), true);
  assert.is(writes.failing(3001), false);
});
outcomes('stops failing at the next confirmed write', () => {
  const writes = new WriteOutcomes(2000);
  writes.unconfirmed(1000);
  writes.confirmed(1200);
  assert.is(writes.failing(1200), false);
});
outcomes.run();

const waiting = suite('WriteOutcomes.failing with writes under way');
waiting('is failing once a write has waited longer than the window with none confirmed (before its 503)', () => {
  const writes = new WriteOutcomes(2000);
  writes.confirmed(0);
  writes.started(1000);
  assert.is(writes.failing(3000), false);
  assert.is(writes.failing(3001), true);
});
waiting('is not failing for a long wait while other writes are confirmed', () => {
  const writes = new WriteOutcomes(2000);
  writes.started(0);
  writes.confirmed(4000);
  assert.is(writes.failing(5000), false);
});
waiting('judges by the oldest write still under way', () => {
  const writes = new WriteOutcomes(2000);
  const first = writes.started(0);
  writes.started(1500);
  writes.finished(first);
  assert.is(writes.failing(3000), false);
  assert.is(writes.failing(3501), true);
});
waiting('a finished write no longer counts', () => {
  const writes = new WriteOutcomes(2000);
  writes.finished(writes.started(0));
  assert.is(writes.failing(10_000), false);
});
waiting.run();
