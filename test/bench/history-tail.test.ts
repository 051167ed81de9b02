import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { snapshotDue } from '../../src/snapshot/auto-snapshot.js';
import type { LoadResult } from './load.js';
import { snapshotDueAfter, snapshotLag, tailLines, type TailResult } from './history-tail.js';

const layout = suite('the tail bench history layout');

layout(
  'puts the next automatic snapshot of a million reports 100,000 writes after the start, inside the measured minute',
  () => {
    const lag = snapshotLag(1_000_000);
    assert.is(lag, 175_000);
    // Not due when the start has folded the lag (the start would write it at once), due 100,000 writes later.
    assert.not.ok(snapshotDue(lag, 10_000, 1_000_000));
    assert.is(snapshotDueAfter(1_000_000, lag), 99_999);
    assert.ok(snapshotDue(lag + 99_999, 10_000, 1_099_999));
    assert.not.ok(snapshotDue(lag + 99_998, 10_000, 1_099_998));
  },
);

layout('needs no lag for a small history, whose snapshots come every 10,000 writes', () => {
  assert.is(snapshotLag(1000), 0);
  assert.is(snapshotDueAfter(1000, 0), 10_000);
  assert.is(snapshotLag(100_000), 0);
  assert.is(snapshotDueAfter(100_000, 0), 33_333);
});

layout.run();

const report = suite('the tail bench report');

const run = (p99Ms: number, p999Ms: number): LoadResult => ({
  requestsPerSecondMean: 2500,
  completed: 150_000,
  p50Ms: 2,
  p99Ms,
  p999Ms,
  non2xx: 0,
  errors: 0,
  statusCounts: { 200: 150_000 },
  durationS: 60,
});
const someWaits = {
  count: 100,
  atMost: new Map([
    [0.0025, 98],
    [0.005, 99],
    [0.025, 100],
  ]),
};
const result = (serverCores: TailResult['serverCores']): TailResult => ({
  saturation: 5000,
  rate: 2500,
  service: run(9, 30),
  fresh: run(8, 28),
  bare: run(2.5, 15),
  appendWaits: { large: someWaits, fresh: someWaits },
  serverCores,
  snapshots: 1,
  lag: 175_000,
  dueAfter: 99_999,
});

report('prints the ratios to the bare handler and to the empty history', () => {
  const lines = tailLines(result({ large: 0.84, fresh: 0.8, bare: 0.53 }), 60);
  assert.ok(
    lines.some((line) => line.includes('service ÷ bare: p99 3.60× (target ≤ 2×), p99.9 2.00× (target ≤ 3×)')),
    lines.join('\n'),
  );
  assert.ok(
    lines.some((line) => line.includes('large ÷ empty history: p99 1.13×, p99.9 1.07×')),
    lines.join('\n'),
  );
});

report("prints each server's CPU during its measured run, as cores and per request at the rate", () => {
  const line = tailLines(result({ large: 0.84, fresh: 0.8, bare: 0.53 }), 60).find((text) =>
    text.includes('server CPU'),
  );
  assert.ok(
    line?.includes(
      '0.84 cores, 336 µs a request (large history), 0.80 cores, 320 µs a request (empty), 0.53 cores, 212 µs a request (bare Koa)',
    ),
    line,
  );
  const unknown = tailLines(result({ large: undefined, fresh: undefined, bare: undefined }), 60).find((text) =>
    text.includes('server CPU'),
  );
  assert.ok(unknown?.includes('unknown (no /proc) (large history)'), unknown);
});

report.run();
