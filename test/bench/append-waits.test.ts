import { Histogram, Registry } from 'prom-client';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { appendWaitsBetween, parseAppendWaits, shareOver } from './append-waits.js';

const waits = suite('append waits from /metrics');

/** The histogram as the service registers it, rendered by prom-client. */
function appendHistogram(): { registry: Registry; histogram: Histogram } {
  const registry = new Registry();
  const histogram = new Histogram({
    name: 'reports_log_append_duration_seconds',
    help: 'Time until the event log acknowledged an append (durable)',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
    registers: [registry],
  });
  return { registry, histogram };
}

waits('counts the appends of the stretch between two readings that waited longer than a bound', async () => {
  const { registry, histogram } = appendHistogram();
  for (const seconds of [0.0004, 0.02, 0.3]) histogram.observe(seconds);
  const before = parseAppendWaits(await registry.metrics());
  for (const seconds of [0.0004, 0.0009, 0.002, 0.003, 0.004, 0.007, 0.012, 0.03]) histogram.observe(seconds);
  const stretch = appendWaitsBetween(before, parseAppendWaits(await registry.metrics()));
  assert.is(stretch.count, 8);
  assert.is(shareOver(stretch, 0.0025), 5 / 8);
  assert.is(shareOver(stretch, 0.005), 3 / 8);
  assert.is(shareOver(stretch, 0.025), 1 / 8);
  assert.is(shareOver(stretch, 0.25), 0);
});

waits('says so when the text has no append histogram, or the bound is not one of its buckets', async () => {
  assert.throws(() => parseAppendWaits('http_requests_total 3\n'), /no reports_log_append_duration_seconds/);
  const empty = parseAppendWaits(await appendHistogram().registry.metrics());
  assert.throws(() => shareOver(empty, 0.003), /no bucket at 0.003/);
  assert.is(shareOver(empty, 0.005), 0);
});

waits.run();
