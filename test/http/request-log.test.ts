// Operations: one structured log line per request (method, route, status, duration), and no token
// — configured, presented or generated — ever in the logs.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config.js';
import { startServer } from '../../src/server.js';
import type { GeneratedToken } from '../../src/tokens/sources.js';
import { memoryLogger, startTestServer, tempDir, TEST_TOKEN, type TestServer } from '../helpers/server.js';

const requestLog = suite<{ server: TestServer }>('request log');

requestLog.before(async (context) => {
  context.server = await startTestServer();
});
requestLog.after(async ({ server }) => {
  await server.dispose();
});

const requestLines = (server: TestServer) => server.logLines().filter((line) => line['msg'] === 'request');

requestLog('writes one line per request with method, route template, status and duration', async ({ server }) => {
  const before = requestLines(server).length;
  await (await server.request('/reports', { method: 'POST', json: '{"id": 4242, "name": "logged"}' })).arrayBuffer();
  await (await server.request('/reports/4343', { method: 'DELETE' })).arrayBuffer();
  await (await server.request('/nowhere')).arrayBuffer();
  const lines = requestLines(server).slice(before);
  assert.equal(
    lines.map(({ method, route, status }) => ({ method, route, status })),
    [
      { method: 'POST', route: '/reports', status: 200 },
      { method: 'DELETE', route: '/reports/:id', status: 404 },
      { method: 'GET', route: 'unmatched', status: 404 },
    ],
  );
  for (const line of lines) assert.type(line['durationMs'], 'number');
});

requestLog('logs a GET of a report by route template, never its id, name or tag', async ({ server }) => {
  const [name, tag] = ['name-that-must-not-be-logged', 'tag-that-must-not-be-logged'];
  await (
    await server.request('/reports', { method: 'POST', json: `{"id": 4646464646, "name": "${name}", "tag": "${tag}"}` })
  ).arrayBuffer();
  const before = requestLines(server).length;
  const got = await server.request('/reports/4646464646');
  assert.equal(await got.json(), { name, tag });
  await (await server.request('/reports/4646464646', { method: 'HEAD' })).arrayBuffer();
  const lines = requestLines(server).slice(before);
  assert.equal(
    lines.map(({ method, route, status }) => ({ method, route, status })),
    [
      { method: 'GET', route: '/reports/:id', status: 200 },
      { method: 'HEAD', route: '/reports/:id', status: 200 },
    ],
  );
  const text = JSON.stringify(server.logLines());
  for (const secret of [name, tag, '4646464646']) assert.not.match(text, secret);
});

requestLog('never logs a configured or presented token', async ({ server }) => {
  const wrong = 'wrong-token-that-must-not-be-logged';
  await (
    await server.request('/reports', { method: 'POST', json: '{"id": 4444, "name": "x"}', token: wrong })
  ).arrayBuffer();
  await (await server.request('/reports', { method: 'POST', json: '{"id": 4445, "name": "x"}' })).arrayBuffer();
  const text = JSON.stringify(server.logLines());
  assert.not.match(text, TEST_TOKEN);
  assert.not.match(text, wrong);
});

requestLog('announces a generated token once, outside the log', async () => {
  const dataDir = await tempDir();
  const { logger, text } = memoryLogger();
  const announced: GeneratedToken[] = [];
  const config = loadConfig({ PORT: '0', REPORTS_DATA_DIR: dataDir });
  const first = await startServer(config, { logger, announceToken: (generated) => announced.push(generated) });
  await first.close();
  const token = announced[0]?.token;
  assert.ok(token, 'a token was announced');
  assert.not.match(text(), token);
  const second = await startServer(config, { logger, announceToken: (generated) => announced.push(generated) });
  await second.close();
  assert.is(announced.length, 1, 'announced only on the first start');
});

requestLog.run();
