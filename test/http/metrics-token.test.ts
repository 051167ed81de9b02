// /metrics behind a token of its own (REPORTS_METRICS_TOKEN), as a Prometheus scrape job sends it
// (`authorization: {credentials: ...}`): refused without it, and with the API's token; served, with
// the runtime's version, with it; and said so in /openapi.json.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { startTestServer, TEST_TOKEN, type TestServer } from '../helpers/server.js';
import { expectError, expectStatus } from './responses.js';

const METRICS_TOKEN = 'metrics-token-0123456789-abcdef';
const ROTATED = 'metrics-token-rotated-0123456789';

const guarded = suite<{ server: TestServer }>('GET /metrics with REPORTS_METRICS_TOKEN');

guarded.before(async (context) => {
  const digest = createHash('sha256').update(ROTATED).digest('hex');
  context.server = await startTestServer({ REPORTS_METRICS_TOKEN: `${METRICS_TOKEN},sha256:${digest}` });
});
guarded.after(async ({ server }) => server.dispose());

guarded('refuses a scrape without a token with 401 and a challenge for the metrics realm', async ({ server }) => {
  const response = await server.request('/metrics', { token: null });
  assert.is(response.headers.get('www-authenticate'), 'Bearer realm="metrics"');
  await expectError(response, 401, /Authorization header is missing/);
});

guarded("refuses the API's token: it is not a metrics token", async ({ server }) => {
  const response = await server.request('/metrics', { token: TEST_TOKEN });
  assert.is(response.headers.get('www-authenticate'), 'Bearer realm="metrics", error="invalid_token"');
  await expectError(response, 401, /not valid/);
});

guarded(
  'serves the scrape with a metrics token, plain or given as its sha256, with the runtime version',
  async ({ server }) => {
    for (const token of [METRICS_TOKEN, ROTATED]) {
      const text = String(await expectStatus(await server.request('/metrics', { token }), 200));
      assert.match(text, /^nodejs_version_info\{/m);
      assert.match(text, /^# TYPE http_requests_total counter$/m);
    }
  },
);

guarded('leaves the API, /healthz and the documents as they were', async ({ server }) => {
  await expectStatus(await server.request('/healthz', { token: null }), 200);
  await expectStatus(await server.request('/openapi.json', { token: null }), 200);
  await expectError(
    await server.request('/reports', { method: 'POST', json: '{"id":1,"name":"x"}', token: METRICS_TOKEN }),
    401,
  );
});

guarded('/openapi.json gives /metrics a security scheme of its own and its 401', async ({ server }) => {
  const document = (await (await server.request('/openapi.json', { token: null })).json()) as {
    paths: Record<string, { get: { security: unknown; responses: Record<string, unknown> } }>;
    components: { securitySchemes: Record<string, unknown> };
  };
  const metrics = document.paths['/metrics']?.get;
  assert.equal(metrics?.security, [{ metricsAuth: [] }]);
  assert.ok(metrics?.responses['401'], 'a 401 answer');
  assert.ok(document.components.securitySchemes['metricsAuth'], 'the metricsAuth scheme');
  assert.equal(document.paths['/healthz']?.get.security, []);
});

guarded.run();
