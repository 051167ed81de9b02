// The /metrics rendering of src/http/metrics.ts, on stubs of the log and the projector.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { EventLog } from '../../src/log/event-log.js';
import type { KeyStore } from '../../src/keys/key-store.js';
import { createMetrics } from '../../src/http/metrics.js';
import type { ProjectionHealth } from '../../src/projector/health.js';
import type { Projector } from '../../src/projector/projector.js';

function stubbedMetrics() {
  const log = {
    head: () => Promise.resolve(new Map<number, number>()),
    stats: () => ({ appends: 0, flushes: 0 }),
  } as unknown as EventLog;
  const projector = {
    model: { cursor: new Map<number, number>(), reports: { size: 0 }, counts: { invalid: 0 } },
  } as unknown as Projector;
  const health = { observations: () => ({}), verdict: () => ({ stalled: false }) } as unknown as ProjectionHealth;
  const keys = { stats: () => ({ erasures: 0 }) } as unknown as KeyStore;
  const metrics = createMetrics({ log, keys, projector, health });
  const render = metrics.registry.metrics.bind(metrics.registry);
  let renderings = 0;
  metrics.registry.metrics = () => {
    renderings += 1;
    return render();
  };
  return { metrics, renderings: () => renderings };
}

const rendering = suite('createMetrics: render');

rendering('scrapes that arrive in the same turn of the event loop share one rendering', async () => {
  const { metrics, renderings } = stubbedMetrics();
  const texts = await Promise.all(Array.from({ length: 100 }, () => metrics.render()));
  assert.is(renderings(), 1);
  assert.ok(texts.every((text) => text === texts[0] && text.includes('# TYPE reports_read_model_reports gauge')));
});

rendering('a scrape that arrives once a rendering has started gets a rendering of its own', async () => {
  const { metrics, renderings } = stubbedMetrics();
  await metrics.render();
  await metrics.render();
  assert.is(renderings(), 2);
});

rendering("shows whether the start's sweep of keys.db is failing, and what erasure waits for", async () => {
  const { metrics } = stubbedMetrics();
  let failing = true;
  metrics.observeService({ erasuresPending: () => 3, contentUnopened: () => 0, keySweepFailing: () => failing });
  const line = (text: string, name: string) => text.split('\n').find((l) => l.startsWith(`${name} `));
  let text = await metrics.render();
  assert.is(line(text, 'reports_key_sweep_failing'), 'reports_key_sweep_failing 1');
  assert.is(line(text, 'reports_erasures_pending'), 'reports_erasures_pending 3');
  failing = false;
  text = await metrics.render();
  assert.is(line(text, 'reports_key_sweep_failing'), 'reports_key_sweep_failing 0');
});

rendering.run();
