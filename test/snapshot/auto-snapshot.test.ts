import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { snapshotDue } from '../../src/snapshot/auto-snapshot.js';

const due = suite('automatic snapshots: when one is due');

due('every REPORTS_SNAPSHOT_EVERY records while the model is small', () => {
  assert.not.ok(snapshotDue(9_999, 10_000, 1_000));
  assert.ok(snapshotDue(10_000, 10_000, 1_000));
  assert.ok(snapshotDue(10_000, 10_000, 40_000));
});

due('every quarter of the model in records once that is more, so a big model is not rewritten every few writes', () => {
  assert.not.ok(snapshotDue(10_000, 10_000, 1_000_000));
  assert.not.ok(snapshotDue(249_999, 10_000, 1_000_000));
  assert.ok(snapshotDue(250_000, 10_000, 1_000_000));
});

due('never when REPORTS_SNAPSHOT_EVERY is 0', () => {
  assert.not.ok(snapshotDue(1_000_000, 0, 10));
});

due.run();
