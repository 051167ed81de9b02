// Two service instances on one topic: each folds the whole topic itself, so a report created
// through one is known to the other, and racing creates agree on one winner.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { caughtUp, startKafkaServer, uniqueTopic, withKafka } from '../helpers/kafka.js';
import type { TestServer } from '../helpers/server.js';
import { openedReport } from '../helpers/opened.js';

const json = (id: string, name: string) => JSON.stringify({ id: Number(id), name }).replace(/"id":\d+/, `"id":${id}`);

withKafka('several instances', (brokers) => {
  const instances = suite<{ a: TestServer; b: TestServer }>('kafka: two instances on one topic');
  let nextId = 7_000_000_000_000 + Math.floor(Math.random() * 1_000_000);
  const id = () => String(nextId++);

  instances.before(async (context) => {
    const topic = uniqueTopic('multi');
    context.a = await startKafkaServer(brokers, {}, topic);
    context.b = await startKafkaServer(brokers, {}, topic);
  });
  instances.after(async ({ a, b }) => {
    await Promise.all([a?.dispose(), b?.dispose()]);
  });

  instances('a report created through one instance conflicts with a different body on the other', async ({ a, b }) => {
    const report = id();
    assert.is((await a.request('/reports', { method: 'POST', json: json(report, 'from a') })).status, 200);
    await caughtUp(b);
    const conflict = await b.request('/reports', { method: 'POST', json: json(report, 'from b') });
    assert.is(conflict.status, 409);
    const retry = await b.request('/reports', { method: 'POST', json: json(report, 'from a') });
    assert.is(retry.status, 200);
    assert.equal(await retry.json(), { name: 'from a' });
  });

  instances('a report created through one instance is deleted through the other', async ({ a, b }) => {
    const report = id();
    assert.is((await a.request('/reports', { method: 'POST', json: json(report, 'doomed') })).status, 200);
    await caughtUp(b);
    assert.is((await b.request(`/reports/${report}`, { method: 'DELETE' })).status, 204);
    await caughtUp(a);
    assert.is((await a.request(`/reports/${report}`, { method: 'DELETE' })).status, 404);
  });

  instances(
    'racing creates of one id across both instances give exactly one 200, and both agree on the winner',
    async ({ a, b }) => {
      for (let round = 0; round < 5; round += 1) {
        const report = id();
        const attempts = Array.from({ length: 10 }, (_, i) => ({ server: i % 2 === 0 ? a : b, name: `racer ${i}` }));
        const statuses = await Promise.all(
          attempts.map(async ({ server, name }) => ({
            name,
            status: (await server.request('/reports', { method: 'POST', json: json(report, name) })).status,
          })),
        );
        const winners = statuses.filter(({ status }) => status === 200);
        assert.is(winners.length, 1, `round ${round}: ${JSON.stringify(statuses)}`);
        assert.is(statuses.filter(({ status }) => status === 409).length, attempts.length - 1);
        await Promise.all([caughtUp(a), caughtUp(b)]);
        assert.equal(await openedReport(a.projector.model.reports, a.keys, report), { name: winners[0]?.name });
        assert.equal(
          await openedReport(b.projector.model.reports, b.keys, report),
          await openedReport(a.projector.model.reports, a.keys, report),
        );
      }
    },
  );

  instances('racing deletes of one id across both instances give exactly one 204', async ({ a, b }) => {
    const report = id();
    assert.is((await a.request('/reports', { method: 'POST', json: json(report, 'contested') })).status, 200);
    await caughtUp(b);
    const statuses = await Promise.all(
      [a, b, a, b].map(async (server) => (await server.request(`/reports/${report}`, { method: 'DELETE' })).status),
    );
    assert.is(statuses.filter((status) => status === 204).length, 1, JSON.stringify(statuses));
    assert.is(statuses.filter((status) => status === 404).length, 3);
  });

  instances.run();
});
