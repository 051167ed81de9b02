import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { baselineRatios, printRoundRatios, type BaselineRatio, type Measured } from './bench-report.js';
import type { LoadResult } from './load.js';

const load = (requestsPerSecondMean: number, p99Ms = 10): LoadResult => ({
  requestsPerSecondMean,
  completed: requestsPerSecondMean * 10,
  p50Ms: 1,
  p99Ms,
  p999Ms: p99Ms,
  non2xx: 0,
  errors: 0,
  statusCounts: { '200': requestsPerSecondMean * 10 },
  durationS: 10,
});

const service = (name: string, creates: number, serverCores: number, deletes: number): Measured => ({
  name,
  kind: 'service',
  load: load(creates),
  logStats: undefined,
  cores: { server: serverCores, loadgen: 0.5, other: 0 },
  retries: load(creates * 1.2),
  deletes: load(deletes),
});

const report = suite('bench report');

report("gives each target's ratios to its baseline twin, CPU per create the baseline's over this one's", () => {
  const ratios = baselineRatios(
    [
      service('file log (baseline abc)', 5000, 1.0, 8000),
      service('file log', 4000, 1.0, 6000),
      service('alone', 1, 1, 1),
    ],
    'abc',
  );
  assert.is(ratios.length, 1, 'only targets with a twin');
  const [ratio] = ratios as [BaselineRatio];
  assert.is(ratio.name, 'file log');
  assert.is(ratio.creates, 0.8);
  // 200 µs a create for the baseline, 250 µs for this one.
  assert.is(ratio.cpuPerCreate, 0.8);
  assert.is(ratio.retries, 0.8);
  assert.is(ratio.deletes, 0.75);
  assert.is(ratio.p99AtFixedRate, undefined, 'no fixed-rate phase measured');
});

report('prints the median of the rounds with the lowest and highest', () => {
  const round = (creates: number, deletes: number): BaselineRatio[] => [
    { name: 'file log', creates, cpuPerCreate: undefined, retries: 1, deletes, p99AtFixedRate: undefined },
  ];
  const printed: string[] = [];
  const log = console.log;
  console.log = (line: string) => printed.push(line);
  try {
    printRoundRatios([round(0.72, 0.84), round(0.91, 0.6), round(0.8, 0.7)], 'abc');
  } finally {
    console.log = log;
  }
  const text = printed.join('\n');
  assert.match(text, 'over 3 rounds');
  assert.match(text, '0.80 (0.72–0.91)');
  assert.match(text, '0.70 (0.60–0.84)');
  assert.match(text, '1.00 (1.00–1.00)');
  assert.match(text, /—/);
});

report.run();
