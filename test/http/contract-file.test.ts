// The HTTP contract on the embedded file log, plus the 503 rows, which need log faults that only
// the file log can produce here (a stopped projector, a closed log, a restart on the same directory).
import { rm } from 'node:fs/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';
import { httpContract } from './contract.js';
import { deleteReport, idSource, logHead, postReport } from './requests.js';
import { expectError, expectNoContent, expectReport } from './responses.js';

httpContract('file', (env) => startTestServer(env));

const WRITE_TIMEOUT_MS = 300;
const env = { REPORTS_WRITE_TIMEOUT_MS: String(WRITE_TIMEOUT_MS) };
const nextId = idSource();
/** Fails the request if the server has not answered within its own write timeout (plus slack for the client). */
const inTime = () => ({ signal: AbortSignal.timeout(WRITE_TIMEOUT_MS + 1000) });

async function expectUnavailable(response: Response): Promise<void> {
  await expectError(response, 503, /log|retry/);
  assert.match(response.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/);
}

/** Runs `scenario` on a server, then `after` on a second server started on the same data directory. */
async function withRestart(
  scenario: (server: TestServer) => Promise<void>,
  after: (server: TestServer) => Promise<void>,
): Promise<void> {
  const dataDir = await tempDir();
  try {
    const first = await startTestServer(env, { dataDir });
    try {
      await scenario(first);
    } finally {
      await first.dispose();
    }
    const second = await startTestServer(env, { dataDir });
    try {
      await after(second);
    } finally {
      await second.dispose();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

const unavailable = suite('file: 503 when the log fails');

unavailable(
  'answers 503 with Retry-After when the write is not confirmed in time, and the same create is safe to retry',
  async () => {
    const id = nextId();
    await withRestart(
      async (server) => {
        // The append succeeds but is never projected: the write times out after it reached the log.
        await server.projector.stop();
        await expectUnavailable(
          await server.request('/reports', { method: 'POST', json: `{"id":${id},"name":"late"}`, ...inTime() }),
        );
      },
      async (server) => {
        const before = await logHead(server);
        await expectReport(await postReport(server, id, 'late'), { name: 'late' });
        assert.is(await logHead(server), before, 'the retry must not append a second record');
        await expectError(await postReport(server, id, 'other'), 409);
      },
    );
  },
);

unavailable(
  'answers 503 to creates and deletes and to /readyz while the log is closed, and the retries succeed after a restart',
  async () => {
    const [kept, fresh] = [nextId(), nextId()];
    await withRestart(
      async (server) => {
        await expectReport(await postReport(server, kept, 'kept'), { name: 'kept' });
        // Stop the projector first: on a closed file log its follow loop would retry in a tight loop.
        await server.projector.stop();
        await server.log.close();
        await expectUnavailable(
          await server.request('/reports', { method: 'POST', json: `{"id":${fresh},"name":"fresh"}`, ...inTime() }),
        );
        await expectUnavailable(await server.request(`/reports/${kept}`, { method: 'DELETE', ...inTime() }));
        await expectError(await server.request('/readyz', { token: null }), 503, /log/);
        const health = await server.request('/healthz', { token: null });
        assert.is(health.status, 200);
        await health.arrayBuffer();
      },
      async (server) => {
        await expectReport(await postReport(server, fresh, 'fresh'), { name: 'fresh' });
        await expectNoContent(await deleteReport(server, kept));
      },
    );
  },
);

unavailable.run();
