// Bearer authentication on the report routes, and the order of the checks: 404/405 for the path and method, then 401, then 415, 413 and 400.
import { createHash } from 'node:crypto';
import * as assert from 'uvu/assert';
import { errorAnswer, openSocket, readUntilEnd } from '../../helpers/raw-http.js';
import { TEST_TOKEN, type TestServer } from '../../helpers/server.js';
import { deleteReport, postJson, reportBody, serverSuite, type StartServer } from '../requests.js';
import { expectChallenge, expectError, expectReport } from '../responses.js';

const SECOND_TOKEN = 'second-token-Zm9vYmFy';
const HASHED_TOKEN = 'hashed-token-only-its-digest-is-configured';
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

interface Route {
  readonly label: string;
  /** Sends a request that succeeds with a good token: 200 for POST, 404 for DELETE or GET of a fresh id. */
  send(server: TestServer, headers: Record<string, string>): Promise<Response>;
  readonly accepted: 200 | 404;
}

async function expectAccepted(route: Route, response: Response): Promise<void> {
  if (route.accepted === 200) await expectReport(response, { name: 'auth' });
  else await expectError(response, 404);
}

export function authContract(logName: string, start: StartServer, nextId: () => string): void {
  const routes: Route[] = [
    {
      label: 'POST /reports',
      send: (server, headers) =>
        server.request('/reports', { method: 'POST', token: null, json: reportBody(nextId(), 'auth'), headers }),
      accepted: 200,
    },
    {
      label: 'DELETE /reports/{id}',
      send: (server, headers) => server.request(`/reports/${nextId()}`, { method: 'DELETE', token: null, headers }),
      accepted: 404,
    },
    {
      label: 'GET /reports/{id}',
      send: (server, headers) => server.request(`/reports/${nextId()}`, { token: null, headers }),
      accepted: 404,
    },
  ];
  const env = { REPORTS_TOKENS: `${TEST_TOKEN}, ${SECOND_TOKEN},sha256:${sha256(HASHED_TOKEN)}` };
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

  for (const route of routes) {
    const auth = serverSuite(`${logName}: ${route.label} authentication`, start, env);

    auth(
      'returns 401 with WWW-Authenticate Bearer realm="reports" when the Authorization header is missing',
      async ({ server }) => {
        const response = await route.send(server, {});
        await expectError(response, 401, /Authorization/);
        expectChallenge(response, false);
      },
    );

    auth('returns 401 for the Basic scheme', async ({ server }) => {
      const response = await route.send(server, {
        Authorization: `Basic ${Buffer.from(`user:${TEST_TOKEN}`).toString('base64')}`,
      });
      await expectError(response, 401, /Authorization/);
      expectChallenge(response, false);
    });

    auth('returns 401 for "Bearer" without a token', async ({ server }) => {
      const response = await route.send(server, { Authorization: 'Bearer ' });
      await expectError(response, 401, /Authorization/);
    });

    auth('returns 401 with error="invalid_token" for an unknown token', async ({ server }) => {
      const response = await route.send(server, bearer('not-a-configured-token'));
      await expectError(response, 401, /token/);
      expectChallenge(response, true);
    });

    auth('returns 401 for the hex digest presented as if it were the token', async ({ server }) => {
      const response = await route.send(server, bearer(sha256(HASHED_TOKEN)));
      await expectError(response, 401);
      expectChallenge(response, true);
    });

    auth('accepts every one of several configured tokens', async ({ server }) => {
      for (const token of [TEST_TOKEN, SECOND_TOKEN])
        await expectAccepted(route, await route.send(server, bearer(token)));
    });

    auth('accepts the token whose digest is configured as sha256:<hex>', async ({ server }) => {
      await expectAccepted(route, await route.send(server, bearer(HASHED_TOKEN)));
    });

    auth.run();
  }

  const order = serverSuite(`${logName}: order of checks`, start, { ...env, REPORTS_BODY_LIMIT: '1kb' });

  order('returns 401, not 400, without a token and with a bad body', async ({ server }) => {
    await expectError(await postJson(server, '{"id": 1.5', { token: null }), 401);
  });

  order('returns 401, not 415, without a token and with a bad Content-Type', async ({ server }) => {
    await expectError(
      await postJson(server, reportBody(nextId(), 'n'), { token: null, headers: { 'Content-Type': 'text/plain' } }),
      401,
    );
  });

  order('returns 401, not 413, without a token and with a body over the limit', async ({ server }) => {
    const response = await postJson(server, reportBody(nextId(), 'n'.repeat(64 * 1024)), { token: null });
    await expectError(response, 401);
  });

  order('returns 401, not 400, to DELETE of a malformed id without a token', async ({ server }) => {
    await expectError(await deleteReport(server, 'abc', { token: null }), 401);
  });

  order('returns 415, not 400, for a bad Content-Type with a body that is not JSON', async ({ server }) => {
    await expectError(
      await postJson(server, 'not json', { headers: { 'Content-Type': 'text/plain' } }),
      415,
      /Content-Type/,
    );
  });

  order('returns 415, not 413, for a bad Content-Type with a body over the limit', async ({ server }) => {
    await expectError(await postJson(server, 'x'.repeat(4096), { headers: { 'Content-Type': 'text/plain' } }), 415);
  });

  order('returns 413, not 400, for a body over the limit that is not JSON', async ({ server }) => {
    await expectError(await postJson(server, `[${'1,'.repeat(2048)}`), 413);
  });

  order('returns 401 to an Authorization header sent twice, valid tokens both', async ({ server }) => {
    // fetch joins repeated headers into one; only a raw request sends two lines (a proxy may check the second).
    const socket = await openSocket(server.url);
    const answer = readUntilEnd(socket);
    socket.end(
      `GET /reports/${nextId()} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_TOKEN}\r\n` +
        `Authorization: Bearer ${SECOND_TOKEN}\r\nConnection: close\r\n\r\n`,
    );
    const { status, head, body } = errorAnswer(await answer);
    assert.is(status, 401);
    assert.match(body.message, /more than once/);
    assert.match(head, /WWW-Authenticate: Bearer realm="reports"/i);
  });

  order('returns 405 with Allow: POST, not 401, to GET /reports without a token', async ({ server }) => {
    const response = await server.request('/reports', { token: null });
    await expectError(response, 405, /GET/);
    assert.is(response.headers.get('allow'), 'POST');
  });

  order('returns 404, not 401, for an unknown path without a token', async ({ server }) => {
    await expectError(await server.request('/nothing-here', { method: 'POST', token: null, json: '{}' }), 404, /path/);
  });

  order.run();
}
