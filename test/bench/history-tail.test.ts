import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { snapshotDue } from '../../src/snapshot/auto-snapshot.js';
import { snapshotDueAfter, snapshotLag } from './history-tail.js';

const layout = suite('the tail bench history layout');

layout('puts the next automatic snapshot of a million reports 100,000 writes after the start, inside the measured minute', () => {
  const lag = snapshotLag(1_000_000);
  assert.is(lag, 175_000);
  // Not due when the start has folded the lag (the start would write it at once), due 100,000 writes later.
  assert.not.ok(snapshotDue(lag, 10_000, 1_000_000));
  assert.is(snapshotDueAfter(1_000_000, lag), 99_999);
  assert.ok(snapshotDue(lag + 99_999, 10_000, 1_099_999));
  assert.not.ok(snapshotDue(lag + 99_998, 10_000, 1_099_998));
});

layout('needs no lag for a small history, whose snapshots come every 10,000 writes', () => {
  assert.is(snapshotLag(1000), 0);
  assert.is(snapshotDueAfter(1000, 0), 10_000);
  assert.is(snapshotLag(100_000), 0);
  assert.is(snapshotDueAfter(100_000, 0), 33_333);
});

layout.run();
