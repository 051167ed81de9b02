import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  baselineReportLines,
  baselineRow,
  benchCommand,
  loadLine,
  startReportLines,
  type Figure,
} from './start-up-report.js';

const figures: readonly Figure[] = [
  {
    name: 'reports replay, events/s',
    unit: 'events/s',
    higherIsBetter: true,
    target: 500_000,
    budget: { ratio: 0.85 },
    values: { baseline: { value: 300_000, note: '3.30–3.40 s' }, checkout: { value: 270_000, note: '3.60–3.80 s' } },
  },
  {
    name: 'start to /readyz 200, no snapshot',
    unit: 's',
    target: 2,
    values: { baseline: { value: 3.5 }, checkout: { value: 4.2 } },
  },
  {
    name: 'start to /readyz 200, from a snapshot',
    unit: 's',
    target: 0.5,
    budget: { ratio: 1.15 },
    values: { baseline: { value: 1 }, checkout: { value: 1.2 } },
  },
  {
    name: 'heap per report after GC, no snapshot',
    unit: 'bytes',
    target: 120,
    budget: { bytesMore: 40 },
    values: { baseline: { value: 77 }, checkout: { value: 110.5 } },
  },
  {
    name: 'heap per report after GC, from a snapshot',
    unit: 'bytes',
    target: 120,
    budget: { bytesMore: 40 },
    values: { baseline: { value: 66 }, checkout: { value: 120 } },
  },
  { name: 'snapshot file', unit: 'MB', values: { baseline: { value: 62.2 }, checkout: { value: 58 } } },
];

const rows = suite('bench-start against a baseline: the rows');

rows('prints both values, this checkout ÷ the baseline and the spreads of both', () => {
  assert.equal(baselineRow(figures[0] as Figure), [
    'reports replay, events/s',
    '300,000 events/s',
    '270,000 events/s',
    '0.90×',
    '',
    '≥ 0.85× pass',
    '3.30–3.40 s | 3.60–3.80 s',
  ]);
});

rows('holds a rate to its budget from below and a time from above', () => {
  const slower = { ...(figures[0] as Figure), values: { baseline: { value: 300_000 }, checkout: { value: 240_000 } } };
  assert.is(baselineRow(slower)[5], '≥ 0.85× MISS');
  assert.is(baselineRow(figures[2] as Figure)[5], '≤ 1.15× MISS');
  assert.is(
    baselineRow({ ...(figures[2] as Figure), values: { baseline: { value: 1 }, checkout: { value: 1.1 } } })[5],
    '≤ 1.15× pass',
  );
});

rows('reports a figure without a budget only, its ratio included', () => {
  assert.equal(baselineRow(figures[1] as Figure).slice(1, 6), ['3.50 s', '4.20 s', '1.20×', '', '']);
});

rows('gives memory per report as bytes more than the baseline, held to the bytes allowed', () => {
  assert.equal(baselineRow(figures[3] as Figure).slice(3, 6), ['1.44×', '+33.5 bytes', '≤ +40 bytes pass']);
  assert.equal(baselineRow(figures[4] as Figure).slice(3, 6), ['1.82×', '+54.0 bytes', '≤ +40 bytes MISS']);
  assert.equal(baselineRow(figures[5] as Figure).slice(3, 6), ['0.93×', '', '']);
  assert.equal(
    baselineRow({ ...(figures[3] as Figure), values: { baseline: { value: 80 }, checkout: { value: 77.5 } } }).slice(
      4,
      6,
    ),
    ['−2.5 bytes', '≤ +40 bytes pass'],
  );
});

rows.run();

const report = suite('bench-start against a baseline: the report');

const run = {
  command: 'BENCH_BASELINE=main BENCH_EVENTS=200000 npm run bench:start',
  load: loadLine([1.5, 1.25, 1], [2, 1.5, 1.125], 2),
  baseline: { name: '2f927cf8b8', revision: 'main' },
  shape: 'small' as const,
  events: 200_000,
  liveReports: 200_000,
  logBytes: { baseline: 60_600_000, checkout: 72_000_000 },
  keysBytes: 14_000_000,
  writeSeconds: { baseline: 1.04, checkout: 9.5 },
  runs: 3,
  figures,
  notes: ['empty server (one run each): …'],
};

report('heads the table with the command, the load, the baseline and both histories', () => {
  const lines = baselineReportLines(run);
  assert.is(lines[1], '$ BENCH_BASELINE=main BENCH_EVENTS=200000 npm run bench:start');
  assert.is(
    lines[2],
    'load average (1 / 5 / 15 min): 1.50 / 1.25 / 1.00 before the measurements, 2.00 / 1.50 / 1.13 after; 2 cores.',
  );
  const text = lines.join('\n');
  assert.ok(
    text.includes('against the baseline 2f927cf8b8 (BENCH_BASELINE=main) on N = 200,000 ReportCreated events'),
    text,
  );
  assert.ok(text.includes('(200,000 live reports, ids from 1,000;'), text);
  assert.ok(
    text.includes(
      'baseline (events.log 60.6 MB, written in 1.0 s) and sealed for this checkout (events.log 72.0 MB, keys.db 14.0 MB,',
    ),
    text,
  );
  assert.ok(text.includes('Medians of 3 run(s), the two builds taking turns run by run.'), text);
});

report('prints one row per figure under a header naming the baseline, then the notes', () => {
  const lines = baselineReportLines(run);
  const header = lines.findIndex((line) => line.startsWith('figure'));
  assert.ok(
    /^figure +baseline 2f927cf8b8 +this checkout +this ÷ baseline +this − baseline +budget +runs/.test(
      lines[header] ?? '',
    ),
    lines[header],
  );
  const table = (lines[header] ?? '').split('\n');
  assert.is(table.length, 2 + figures.length);
  assert.ok(
    table.some((line) =>
      /^heap per report after GC, from a snapshot +66 bytes +120 bytes +1\.82× +\+54\.0 bytes +≤ \+40 bytes MISS/.test(
        line,
      ),
    ),
    table.join('\n'),
  );
  assert.ok(lines.includes('empty server (one run each): …'));
});

report.run();

const shapes = suite('bench-start across id shapes (no baseline)');

shapes('still compares snowflake ids with small ones, headed by the command', () => {
  const shapeFigures: Figure[] = [
    {
      name: 'start to /readyz 200, from a snapshot',
      unit: 's',
      target: 0.5,
      values: { small: { value: 0.4 }, snowflake: { value: 0.5 } },
    },
  ];
  const lines = startReportLines({
    command: 'make bench-start',
    load: 'load',
    events: 1000,
    liveReports: 1000,
    shapes: ['small', 'snowflake'],
    logBytes: 303_000_000,
    writeSeconds: 2,
    runs: 1,
    figures: shapeFigures,
    notes: [],
  });
  assert.is(lines[1], '$ make bench-start');
  const row = lines
    .join('\n')
    .split('\n')
    .find((line) => line.startsWith('start to /readyz 200, from a snapshot'));
  assert.ok(row !== undefined && /0\.40 s +≤ 0\.50 s pass +0\.50 s +1\.25× +MISS/.test(row), row);
});

shapes.run();

const command = suite('the command in the header');

command('names the bench settings that are set, in a fixed order, and how the bench was started', () => {
  assert.is(
    benchCommand({ BENCH_RUNS: '1', BENCH_BASELINE: 'main', PATH: '/bin', npm_lifecycle_event: 'bench:start' }),
    'BENCH_BASELINE=main BENCH_RUNS=1 npm run bench:start',
  );
  assert.is(
    benchCommand({ BENCH_EVENTS: '1000', MAKELEVEL: '1', npm_lifecycle_event: 'bench:start' }),
    'BENCH_EVENTS=1000 make bench-start',
  );
  assert.is(benchCommand({}), 'node dist/test/bench/start-up.js');
});

command('quotes a value the shell would split', () => {
  assert.is(
    benchCommand({ BENCH_BASELINE: "HEAD~1 it's" }),
    `BENCH_BASELINE='HEAD~1 it'\\''s' node dist/test/bench/start-up.js`,
  );
  assert.is(benchCommand({ BENCH_BASELINE: 'HEAD~1' }), `BENCH_BASELINE='HEAD~1' node dist/test/bench/start-up.js`);
});

command.run();
