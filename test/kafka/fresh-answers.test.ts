// Answers that write nothing (404 to a DELETE, 200 or 409 to a create that appends nothing, every
// answer to a GET) come from state that has seen every write made before the request arrived, on
// any instance.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { caughtUp, startKafkaServer, uniqueTopic, withKafka } from '../helpers/kafka.js';
import type { TestServer } from '../helpers/server.js';

const CONCURRENCY = 50;
const json = (id: number, name: string) => JSON.stringify({ id, name });

async function inParallel(count: number, run: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await run(next++);
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

withKafka('fresh answers', (brokers) => {
  const fresh = suite<{ a: TestServer; b: TestServer }>('kafka: answers that write nothing come from fresh state');

  fresh.before(async (context) => {
    const topic = uniqueTopic('fresh');
    context.a = await startKafkaServer(brokers, {}, topic);
    context.b = await startKafkaServer(brokers, {}, topic);
  });
  fresh.after(async ({ a, b }) => {
    await Promise.all([a?.dispose(), b?.dispose()]);
  });

  fresh('1,000 creates on A, each followed at once by a delete on B: no delete answers 404', async ({ a, b }) => {
    const statuses = new Map<number, number>();
    await inParallel(1000, async (index) => {
      const id = 1_000_000 + index;
      assert.is((await a.request('/reports', { method: 'POST', json: json(id, 'made on a') })).status, 200);
      const { status } = await b.request(`/reports/${id}`, { method: 'DELETE' });
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    });
    assert.equal([...statuses], [[204, 1000]]);
  });

  fresh(
    'a delete on A followed at once by an identical create on B: the report exists afterwards',
    async ({ a, b }) => {
      const ids = Array.from({ length: 300 }, (_, index) => 2_000_000 + index);
      await inParallel(ids.length, async (index) => {
        assert.is(
          (await a.request('/reports', { method: 'POST', json: json(ids[index] as number, 'again') })).status,
          200,
        );
      });
      await caughtUp(b);
      await inParallel(ids.length, async (index) => {
        const id = ids[index] as number;
        assert.is((await a.request(`/reports/${id}`, { method: 'DELETE' })).status, 204);
        assert.is((await b.request('/reports', { method: 'POST', json: json(id, 'again') })).status, 200);
      });
      await caughtUp(a);
      const missing = ids.filter((id) => !a.projector.model.reports.has(String(id)));
      assert.equal(missing, []);
    },
  );

  fresh(
    'a create, then a delete, on A, each followed at once by a GET on B: 200 with the report and ETag "1", then 404',
    async ({ a, b }) => {
      const statuses = new Map<string, number>();
      await inParallel(300, async (index) => {
        const id = 3_000_000 + index;
        assert.is((await a.request('/reports', { method: 'POST', json: json(id, `read ${id}`) })).status, 200);
        const got = await b.request(`/reports/${id}`);
        const body =
          got.status === 200 ? ((await got.json()) as { name: string }) : (await got.arrayBuffer(), undefined);
        const created = `${got.status} ${got.headers.get('etag') ?? ''} ${body?.name === `read ${id}` ? 'same body' : 'other body'}`;
        statuses.set(created, (statuses.get(created) ?? 0) + 1);
        assert.is((await a.request(`/reports/${id}`, { method: 'DELETE' })).status, 204);
        const gone = await b.request(`/reports/${id}`);
        await gone.arrayBuffer();
        statuses.set(`${gone.status}`, (statuses.get(`${gone.status}`) ?? 0) + 1);
      });
      assert.equal([...statuses].sort(), [
        ['200 "1" same body', 300],
        ['404', 300],
      ]);
    },
  );

  fresh.run();
});
