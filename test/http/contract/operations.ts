// Everything else the HTTP interface promises: unknown paths, wrong methods, /healthz, /readyz, /metrics.
import { register as globalRegistry } from 'prom-client';
import * as assert from 'uvu/assert';
import { TEST_TOKEN } from '../../helpers/server.js';
import { deleteReport, distinctive, postReport, serverSuite, type StartServer } from '../requests.js';
import { expectError, expectJson, expectReport, expectStatus } from '../responses.js';

export function operationsContract(logName: string, start: StartServer, nextId: () => string): void {
  const routing = serverSuite(`${logName}: routing`, start);

  const wrongMethods: ReadonlyArray<[method: string, path: string, allow: string]> = [
    ['PUT', '/reports/1', 'GET, HEAD, DELETE'],
    ['POST', '/reports/1', 'GET, HEAD, DELETE'],
    ['GET', '/reports', 'POST'],
    ['DELETE', '/reports', 'POST'],
    ['POST', '/healthz', 'GET, HEAD'],
    ['POST', '/readyz', 'GET, HEAD'],
    ['POST', '/metrics', 'GET, HEAD'],
    ['DELETE', '/openapi.json', 'GET, HEAD'],
    ['POST', '/asyncapi.json', 'GET, HEAD'],
  ];
  for (const [method, path, allow] of wrongMethods) {
    routing(`returns 405 with Allow: ${allow} for ${method} ${path}`, async ({ server }) => {
      const response = await server.request(path, { method });
      await expectError(response, 405, new RegExp(method));
      assert.is(response.headers.get('allow'), allow);
    });
  }

  for (const path of [
    '/',
    '/report',
    '/reportsx',
    '/reports/1/extra',
    '/REPORTS',
    '/reports/',
    '/reports/1/',
    '/Healthz',
  ]) {
    routing(`returns 404 naming the path for ${path}`, async ({ server }) => {
      await expectError(await server.request(path), 404, /path/);
    });
  }

  routing.run();

  const probes = serverSuite(`${logName}: GET /healthz and /readyz`, start);

  probes('answers /healthz with 200 without a token', async ({ server }) => {
    assert.equal(await expectJson(await server.request('/healthz', { token: null }), 200), { status: 'ok' });
  });

  probes('answers /readyz with 200 without a token once the read model has caught up', async ({ server }) => {
    assert.ok(server.projector.isCaughtUp());
    assert.equal(await expectJson(await server.request('/readyz', { token: null }), 200), { status: 'ready' });
  });

  probes.run();

  const metrics = serverSuite(`${logName}: GET /metrics`, start);

  const scrape = async (response: Response): Promise<string> => {
    const body = await expectStatus(response, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    assert.type(body, 'string');
    return String(body);
  };

  metrics('serves Prometheus text without a token', async ({ server }) => {
    const text = await scrape(await server.request('/metrics', { token: null }));
    assert.match(text, /^# HELP /m);
    assert.match(text, /^# TYPE http_requests_total counter$/m);
  });

  metrics('counts requests by route template and status', async ({ server }) => {
    const id = nextId();
    await expectReport(await postReport(server, id, 'metered'), { name: 'metered' });
    await expectError(await deleteReport(server, nextId()), 404);
    await expectReport(await server.request(`/reports/${id}`), { name: 'metered' });
    const notModified = await server.request(`/reports/${id}`, { headers: { 'If-None-Match': '"1"' } });
    assert.is(notModified.status, 304);
    await (await server.request(`/reports/${id}`, { method: 'HEAD' })).arrayBuffer();
    const text = await scrape(await server.request('/metrics'));
    assert.match(text, /^http_requests_total\{method="POST",route="\/reports",status="200"\} [1-9]/m);
    assert.match(text, /^http_requests_total\{method="DELETE",route="\/reports\/:id",status="404"\} [1-9]/m);
    assert.match(text, /^http_requests_total\{method="GET",route="\/reports\/:id",status="200"\} [1-9]/m);
    assert.match(text, /^http_requests_total\{method="GET",route="\/reports\/:id",status="304"\} [1-9]/m);
    assert.match(text, /^http_requests_total\{method="HEAD",route="\/reports\/:id",status="200"\} [1-9]/m);
    assert.match(
      text,
      /^http_request_duration_seconds_bucket\{le="[^"]+",method="POST",route="\/reports",status="200"\} /m,
    );
  });

  metrics('reports log append latency, projection lag and read-model size', async ({ server }) => {
    await expectReport(await postReport(server, nextId(), 'measured'), { name: 'measured' });
    const text = await scrape(await server.request('/metrics'));
    assert.match(text, /^reports_log_append_duration_seconds_count [1-9]/m);
    assert.match(text, /^reports_log_append_duration_seconds_bucket\{le="/m);
    assert.match(text, /^reports_projection_lag_events \d+$/m);
    assert.match(text, /^reports_read_model_reports [1-9]\d*$/m);
  });

  metrics(
    "carries the runtime's process_* and nodejs_* series: CPU, memory, heap, event-loop lag, GC",
    async ({ server }) => {
      const text = await scrape(await server.request('/metrics'));
      const runtime = [
        'process_cpu_seconds_total',
        'process_resident_memory_bytes',
        'process_open_fds',
        'nodejs_heap_size_used_bytes',
        'nodejs_eventloop_lag_p99_seconds',
        'nodejs_gc_duration_seconds',
      ];
      for (const name of runtime) assert.match(text, new RegExp(`^# TYPE ${name} `, 'm'), name);
      assert.match(text, /^process_resident_memory_bytes [1-9]\d*$/m);
    },
  );

  metrics(
    'names no version of the runtime while it needs no token (nodejs_version_info is left out)',
    async ({ server }) => {
      const text = await scrape(await server.request('/metrics', { token: null }));
      assert.not.match(text, 'nodejs_version_info');
      assert.not.match(text, process.version);
    },
  );

  metrics("keeps every series on the app's own registry, none on prom-client's global one", async ({ server }) => {
    await scrape(await server.request('/metrics'));
    assert.equal(
      globalRegistry.getMetricsAsArray().map((metric) => metric.name),
      [],
    );
  });

  metrics('contains no report id, name, tag, token or path that requests carried', async ({ server }) => {
    const id = nextId();
    const [name, tag, badToken, path] = [
      distinctive('name'),
      distinctive('tag'),
      distinctive('token'),
      distinctive('/path'),
    ];
    await expectReport(await postReport(server, id, name, tag), { name, tag });
    await expectReport(await server.request(`/reports/${id}`), { name, tag });
    await expectError(await deleteReport(server, nextId(), { token: badToken }), 401);
    await expectError(await server.request(path), 404);
    const text = await scrape(await server.request('/metrics'));
    for (const secret of [id, name, tag, badToken, TEST_TOKEN, path])
      assert.not.ok(text.includes(secret), `metrics contain ${secret}`);
  });

  metrics.run();
}
