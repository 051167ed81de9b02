import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeEvent } from '../../projections/codec.js';
import { applyRecord, createReadModel } from '../../src/read-model/read-model.js';
import { modelSize, snapshotDue } from '../../src/snapshot/auto-snapshot.js';
import { created, deleted } from '../helpers/events.js';

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

due('counts the deleted ids a snapshot writes, not only the live reports', () => {
  const model = createReadModel();
  let offset = 0;
  const apply = (event: Parameters<typeof encodeEvent>[0]) =>
    applyRecord(model, {
      key: '',
      value: encodeEvent(event),
      timestampMs: 0,
      position: { partition: 0, offset: offset++ },
    });
  for (let id = 1; id <= 1_000; id += 1) apply(created(String(id), `report ${id}`));
  for (let id = 1; id <= 900; id += 1) apply(deleted(String(id)));
  assert.is(model.reports.size, 100);
  assert.is(modelSize(model), 1_000, '100 live reports and 900 deleted ids');
});

due.run();
