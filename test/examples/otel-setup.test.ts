// The way to turn trace export on (docs/operations.md, Tracing): the service started with
// `node --import` of test/examples/otel-setup.js (quoted there) exports its spans by OTLP/HTTP, and
// the event of a traced request names the exported append span.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startChildServer, type ChildServer } from '../helpers/child-server.js';
import { reports } from '../helpers/cli.js';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.js';
import { tempDir } from '../helpers/server.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const SETUP = fileURLToPath(new URL('./otel-setup.js', import.meta.url));
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';

const readme = suite('docs/operations.md trace export set-up');
readme('quotes test/examples/otel-setup.ts verbatim', async () => {
  const [text, source] = await Promise.all([
    readFile(`${root}docs/operations.md`, 'utf8'),
    readFile(`${root}test/examples/otel-setup.ts`, 'utf8'),
  ]);
  assert.ok(
    text.includes(source.trim()),
    'docs/operations.md does not contain the current test/examples/otel-setup.ts',
  );
});
readme.run();

interface Context {
  receiver?: OtlpReceiver;
  server?: ChildServer;
  dataDir?: string;
}

const exported = suite<Context>('node --import otel-setup.js', {});

exported.before(async (context) => {
  context.receiver = await startOtlpReceiver();
  context.dataDir = await tempDir();
  context.server = await startChildServer(
    {
      REPORTS_DATA_DIR: context.dataDir,
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: context.receiver.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: '20',
      OTEL_SERVICE_NAME: 'report-store-test',
    },
    { nodeArgs: ['--import', SETUP] },
  );
  await context.server.waitReady();
});

exported.after(async ({ server, receiver }) => {
  server?.kill('SIGTERM');
  await server?.waitExit();
  await receiver?.close();
});

/** The event of report `id` as `reports events` prints it (read beside the running server). */
async function eventOf(dataDir: string, id: string): Promise<Record<string, unknown> | undefined> {
  const { code, stdout, stderr } = await reports(['events'], { env: { REPORTS_DATA_DIR: dataDir } });
  assert.is(code, 0, stderr);
  const events = stdout
    .trim()
    .split('\n')
    .map((line) => (JSON.parse(line) as { event: Record<string, unknown> }).event);
  return events.find((event) => event['subject'] === id);
}

exported(
  'exports the append span of a traced request, and the event names it',
  async ({ server, receiver, dataDir }) => {
    assert.ok(server && receiver && dataDir);
    const response = await server.request('/reports', {
      method: 'POST',
      json: '{"id": 31, "name": "exported"}',
      headers: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` },
    });
    assert.is(response.status, 200);
    const append = await receiver.waitFor((span) => span.name === 'reports append' && span.traceId === TRACE_ID);
    assert.is(append.parentSpanId, PARENT_ID);
    assert.is(append.serviceName, 'report-store-test');
    await receiver.waitFor(
      (span) =>
        span.name === 'reports wait for projection' && span.traceId === TRACE_ID && span.parentSpanId === PARENT_ID,
    );
    assert.is((await eventOf(dataDir, '31'))?.['traceparent'], `00-${TRACE_ID}-${append.spanId}-01`);
  },
);

exported('starts a new trace for a request without a traceparent', async ({ server, receiver, dataDir }) => {
  assert.ok(server && receiver && dataDir);
  assert.is((await server.request('/reports', { method: 'POST', json: '{"id": 32, "name": "root"}' })).status, 200);
  const traceparent = String((await eventOf(dataDir, '32'))?.['traceparent']);
  const [, traceId, spanId] = traceparent.split('-');
  const append = await receiver.waitFor((span) => span.name === 'reports append' && span.traceId === traceId);
  assert.is(append.spanId, spanId);
  assert.ok(!append.parentSpanId, `the append span has a parent: ${append.parentSpanId}`);
});

exported.run();
