// The /metrics rendering of src/http/metrics.ts, on stubs of the log and the projector.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { EventLog } from '../../src/log/event-log.js';
import type { KeyStore } from '../../src/keys/key-store.js';
import { createMetrics } from '../../src/http/metrics.js';
import { HEAD_WAIT_MS, scrapeHead } from '../../src/http/scrape-head.js';
import type { ProjectionHealth } from '../../src/projector/health.js';
import type { Projector } from '../../src/projector/projector.js';

function stubbedMetrics(head: () => Promise<ReadonlyMap<number, number>> = () => Promise.resolve(new Map())) {
  const log = {
    head,
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
  let text = await metrics.render();
  assert.is(line(text, 'reports_key_sweep_failing'), 'reports_key_sweep_failing 1');
  assert.is(line(text, 'reports_erasures_pending'), 'reports_erasures_pending 3');
  failing = false;
  text = await metrics.render();
  assert.is(line(text, 'reports_key_sweep_failing'), 'reports_key_sweep_failing 0');
});

rendering('labels a request of a method no route serves `other`: no series per method a client may send', async () => {
  const { metrics } = stubbedMetrics();
  for (const method of ['PROPFIND', 'MKCOL', 'LOCK', 'PURGE', 'GET'])
    metrics.observeRequest({ method, route: 'unmatched', status: 404 }, 0.001);
  const text = await metrics.render();
  const series = text.split('\n').filter((entry) => entry.startsWith('http_requests_total{'));
  assert.equal(series.map((entry) => /method="([^"]+)"/.exec(entry)?.[1]).sort(), ['GET', 'other']);
  assert.ok(series.some((entry) => entry.includes('method="other"') && entry.endsWith(' 4')));
});

const line = (text: string, name: string) => text.split('\n').find((l) => l.startsWith(`${name} `));

// prom-client writes NaN as "Nan"; Prometheus reads either spelling.
rendering('a log head that does not come leaves the head gauges without a value, and the scrape answers', async () => {
  const { metrics } = stubbedMetrics(() => new Promise(() => undefined));
  const started = performance.now();
  const text = await metrics.render();
  const tookMs = performance.now() - started;
  assert.ok(tookMs >= HEAD_WAIT_MS - 50 && tookMs < HEAD_WAIT_MS + 2000, `the scrape took ${tookMs.toFixed(0)} ms`);
  assert.is(line(text, 'reports_log_head_offset')?.toLowerCase(), 'reports_log_head_offset nan');
  assert.is(line(text, 'reports_projection_lag_events')?.toLowerCase(), 'reports_projection_lag_events nan');
  assert.is(line(text, 'reports_projection_lag_seconds')?.toLowerCase(), 'reports_projection_lag_seconds nan');
  assert.is(line(text, 'reports_read_model_reports'), 'reports_read_model_reports 0');
});

rendering('a log head that fails leaves the head gauges without a value; the next scrape reads it again', async () => {
  let heads = 0;
  const { metrics } = stubbedMetrics(() => {
    heads += 1;
    return heads === 1 ? Promise.reject(new Error('Kafka is unreachable')) : Promise.resolve(new Map([[0, 7]]));
  });
  assert.is(line(await metrics.render(), 'reports_log_head_offset')?.toLowerCase(), 'reports_log_head_offset nan');
  await new Promise((resolve) => setTimeout(resolve, 300));
  const text = await metrics.render();
  assert.is(line(text, 'reports_log_head_offset'), 'reports_log_head_offset 7');
  assert.is(line(text, 'reports_projection_lag_events'), 'reports_projection_lag_events 7');
  assert.is(heads, 2);
});

rendering.run();

const heads = suite('scrapeHead');

heads('a late head is read once: scrapes meanwhile wait for the same read, then the next asks again', async () => {
  let asked = 0;
  let answer: (head: ReadonlyMap<number, number>) => void = () => undefined;
  const head = scrapeHead(
    {
      head: () => {
        asked += 1;
        return new Promise((resolve) => (answer = resolve));
      },
    },
    100,
  );
  assert.is(await head(), undefined);
  await new Promise((resolve) => setTimeout(resolve, 300));
  const second = head();
  assert.is(asked, 1);
  answer(new Map([[0, 3]]));
  assert.equal(await second, new Map([[0, 3]]));
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(await head(), undefined);
  assert.is(asked, 2);
});

heads.run();
