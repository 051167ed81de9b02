import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from './helpers/server.js';

const smoke = suite<{ server?: TestServer }>('smoke');
smoke.before(async (context) => {
  context.server = await startTestServer();
});
smoke.after(async ({ server }) => {
  await server?.dispose();
});
smoke('creates a report and answers it back', async ({ server }) => {
  const response = await server!.request('/reports', { method: 'POST', json: '{"id": 9007199254740993, "name": "n"}' });
  assert.is(response.status, 200);
  assert.equal(await response.json(), { name: 'n' });
});
smoke.run();
