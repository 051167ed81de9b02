// Idempotency-Key on POST and DELETE: the same key with the same request gets the first answer
// again (a retried DELETE is 204, not 404); the same key with another request gets 422.
import * as assert from 'uvu/assert';
import { distinctive, logHead, reportBody, serverSuite, type StartServer } from '../requests.js';
import { expectError, expectNoContent, expectReport } from '../responses.js';
import type { TestServer } from '../../helpers/server.js';

const post = (server: TestServer, id: string, name: string, key?: string, tag?: string) =>
  server.request('/reports', {
    method: 'POST',
    json: reportBody(id, name, tag),
    headers: key === undefined ? {} : { 'Idempotency-Key': key },
  });
const remove = (server: TestServer, id: string, key?: string) =>
  server.request(`/reports/${id}`, { method: 'DELETE', headers: key === undefined ? {} : { 'Idempotency-Key': key } });

export function idempotencyContract(logName: string, start: StartServer, nextId: () => string): void {
  const keys = serverSuite(`${logName}: Idempotency-Key`, start);

  keys('a retried create with the same key answers the first report and appends nothing', async ({ server }) => {
    const [id, key] = [nextId(), distinctive('key')];
    await expectReport(await post(server, id, 'first', key, 't'), { name: 'first', tag: 't' });
    const before = await logHead(server);
    await expectReport(await post(server, id, 'first', key, 't'), { name: 'first', tag: 't' });
    assert.is(await logHead(server), before);
  });

  keys('the same key with a different create answers 422', async ({ server }) => {
    const [id, key] = [nextId(), distinctive('key')];
    await expectReport(await post(server, id, 'first', key), { name: 'first' });
    await expectError(await post(server, id, 'second', key), 422, /Idempotency-Key/);
    await expectError(await post(server, nextId(), 'first', key), 422, /Idempotency-Key/);
  });

  keys('a retried delete with the same key answers 204, not 404', async ({ server }) => {
    const [id, key] = [nextId(), distinctive('key')];
    await expectReport(await post(server, id, 'doomed'), { name: 'doomed' });
    await expectNoContent(await remove(server, id, key));
    const before = await logHead(server);
    await expectNoContent(await remove(server, id, key));
    assert.is(await logHead(server), before);
    await expectError(await remove(server, id), 404);
  });

  keys('a key used for a delete answers 422 for a create or another id', async ({ server }) => {
    const [id, key] = [nextId(), distinctive('key')];
    await expectReport(await post(server, id, 'doomed'), { name: 'doomed' });
    await expectNoContent(await remove(server, id, key));
    await expectError(await post(server, id, 'doomed', key), 422);
    await expectError(await remove(server, nextId(), key), 422);
  });

  keys(
    "an id deleted with a key can be created again without one; the old key's retry is told the report was deleted since",
    async ({ server }) => {
      const [id, key] = [nextId(), distinctive('key')];
      await expectReport(await post(server, id, 'before', key), { name: 'before' });
      await expectNoContent(await remove(server, id, distinctive('key')));
      await expectReport(await post(server, id, 'after'), { name: 'after' });
      // The first key's report was deleted, its content erased: its retry is told so, and nothing is
      // written or brought back.
      const before = await logHead(server);
      await expectError(await post(server, id, 'before', key), 409, /created report .* which has been deleted since/);
      assert.is(await logHead(server), before);
    },
  );

  keys('concurrent retries with one key give one append and the same answer', async ({ server }) => {
    const [id, key] = [nextId(), distinctive('key')];
    const before = await logHead(server);
    const responses = await Promise.all(Array.from({ length: 10 }, () => post(server, id, 'once', key)));
    for (const response of responses) await expectReport(response, { name: 'once' });
    assert.is(await logHead(server), before + 1);
  });

  keys('one key raced on two ids gives one 200 and one 422', async ({ server }) => {
    const key = distinctive('key');
    const responses = await Promise.all([post(server, nextId(), 'a', key), post(server, nextId(), 'b', key)]);
    assert.equal(responses.map((r) => r.status).sort(), [200, 422]);
    await Promise.all(responses.map((r) => r.arrayBuffer()));
  });

  for (const [label, bad] of [
    ['that is empty', ''],
    ['longer than 255 characters', 'k'.repeat(256)],
    ['with a space', 'a key'],
    ['with a non-ASCII character', 'clé'],
  ] as const) {
    keys(`returns 400 naming Idempotency-Key for a key ${label}`, async ({ server }) => {
      const response = await server.request('/reports', {
        method: 'POST',
        json: reportBody(nextId(), 'x'),
        headers: { 'Idempotency-Key': bad },
      });
      await expectError(response, 400, /Idempotency-Key/);
    });
  }

  keys.run();
}
