// /readyz and /metrics on projection health: a projector that has stopped making progress while
// records wait turns /readyz to 503, not only a large lag.
import { rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeEvent } from '../../projections/codec.js';
import { created } from '../helpers/events.js';
import { loadConfig } from '../../src/config.js';
import { openFileLog } from '../../src/log/file/file-log.js';
import { createWiredApp } from '../../src/server.js';
import { openKeyStore } from '../../src/keys/open-key-store.js';
import { Projector } from '../../src/projector/projector.js';
import { memoryLogger, startTestServer, tempDir, TEST_TOKEN, type TestServer } from '../helpers/server.js';
import { testTokens } from '../helpers/token.js';
import { until } from '../helpers/async.js';
import { expectError } from './responses.js';

const STALL_MS = 200;
const readiness = suite<{ server: TestServer }>('GET /readyz on projection health');

readiness.before.each(async (context) => {
  context.server = await startTestServer({ REPORTS_PROJECTION_STALL_MS: String(STALL_MS) });
});
readiness.after.each(async ({ server }) => {
  await server.dispose();
});

readiness('stays ready while nothing waits, however long the projector is idle', async ({ server }) => {
  await new Promise((resolve) => setTimeout(resolve, STALL_MS * 2));
  assert.is((await server.request('/readyz')).status, 200);
  assert.match(await (await server.request('/metrics')).text(), /^reports_projection_stalled 0$/m);
});

readiness('turns 503 once records have waited longer than the stall limit without progress', async ({ server }) => {
  await server.projector.stop();
  const event = created('77', 'waiting');
  await server.log.append([{ key: event.subject, value: encodeEvent(event) }]);
  assert.is((await server.request('/readyz')).status, 200, 'the first look only starts the clock');
  // The stall limit is measured from when the head probe first saw the record waiting; on a busy
  // machine the probe's timer runs late, so /readyz is asked until it turns, within a bound.
  await until(
    async () =>
      (await server.request('/readyz').then(async (response) => (await response.arrayBuffer(), response.status))) ===
      503,
    '/readyz to answer 503',
  );
  await expectError(await server.request('/readyz'), 503, /stopped making progress with 1 events waiting/);
  const metrics = await (await server.request('/metrics')).text();
  assert.match(metrics, /^reports_projection_stalled 1$/m);
  assert.match(metrics, /^reports_projection_lag_events 1$/m);
  assert.match(metrics, /^reports_log_head_offset 1$/m);
  assert.match(metrics, /^reports_projected_offset 0$/m);
});

readiness('reports lag in seconds while records wait', async ({ server }) => {
  const first = created('78', 'applied');
  await server.log.append([{ key: first.subject, value: encodeEvent(first) }]);
  await server.projector.waitFor({ partition: 0, offset: 0 }, 5000);
  await server.projector.stop();
  const second = created('79', 'waiting');
  await server.log.append([{ key: second.subject, value: encodeEvent(second) }]);
  const lag = async () =>
    Number(/^reports_projection_lag_seconds (\S+)$/m.exec(await (await server.request('/metrics')).text())?.[1]);
  await until(async () => (await lag()) >= 1, 'a lag of a second or more', { everyMs: 100 });
});

readiness.run();

// Before the projector has caught up with the log: an app whose projector has not started yet.
const catchingUp = suite<{ url: string; close: () => Promise<void> }>(
  'GET /readyz before the read model has caught up',
);

catchingUp.before(async (context) => {
  const dir = await tempDir();
  const { logger } = memoryLogger();
  const log = await openFileLog({ dir, logger });
  const projector = new Projector({ log, logger });
  const config = loadConfig({ REPORTS_DATA_DIR: dir, REPORTS_WRITE_TIMEOUT_MS: '1000' });
  const keys = await openKeyStore(log, config, logger);
  const { app } = createWiredApp(config, { log, keys, projector, logger, tokens: testTokens() });
  const handle = app.callback();
  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  context.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  context.close = async () => {
    await new Promise((resolve) => server.close(resolve));
    await keys.close();
    await log.close();
    await rm(dir, { recursive: true, force: true });
  };
});
catchingUp.after(async ({ close }) => {
  await close();
});

catchingUp('answers 503 on /readyz and 200 on /healthz', async ({ url }) => {
  await expectError(await fetch(`${url}/readyz`), 503, /catching up/);
  assert.is((await fetch(`${url}/healthz`)).status, 200);
});

catchingUp('answers writes with 503 and Retry-After rather than deciding on a stale read model', async ({ url }) => {
  const response = await fetch(`${url}/reports`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TEST_TOKEN}`, 'Content-Type': 'application/json' },
    body: '{"id": 1, "name": "early"}',
  });
  await expectError(response, 503, /catching up/);
  assert.match(response.headers.get('retry-after') ?? '', /^\d+$/);
});

catchingUp.run();
