// /readyz and /metrics on projection health: a projector that has stopped making progress while
// records wait turns /readyz to 503, not only a large lag.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeEvent } from '../../projections/codec.js';
import { created } from '../helpers/events.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
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
  await new Promise((resolve) => setTimeout(resolve, STALL_MS + 100));
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
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const lag = Number(/^reports_projection_lag_seconds (\S+)$/m.exec(await (await server.request('/metrics')).text())?.[1]);
  assert.ok(lag >= 1, `lag ${lag}`);
});

readiness.run();
