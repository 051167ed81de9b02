// GET and conditional writes across instances whose read models lag as far as the service allows
// (test/helpers/lagging-instance.ts): a GET through an instance that has not folded a write still
// answers with it; a stale If-Match is 412 through either instance, whether the instance finds it
// stale before it writes (nothing written) or only the fold does (its event is void, and nothing
// changes); an If-Match the instance has not seen yet, but which is current, deletes; a create with
// If-None-Match: * of a report the other instance made first is 412 by the fold. The file log's twin:
// test/reports/two-instances.test.ts.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { cursorTotal } from '../../src/log/event-log.js';
import { kafkaEnv, uniqueTopic, withKafka } from '../helpers/kafka.js';
import { startLaggingInstance, type LaggingInstance } from '../helpers/lagging-instance.js';

const REPORTS = 8;

interface Answer {
  readonly status: number;
  readonly etag: string | null;
  readonly body: string;
}

async function send(
  instance: LaggingInstance,
  method: string,
  id: number,
  { name, headers = {} }: { name?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const response =
    method === 'POST'
      ? await instance.request('/reports', { method, json: JSON.stringify({ id, name }), headers })
      : await instance.request(`/reports/${id}`, { method, headers });
  return { status: response.status, etag: response.headers.get('etag'), body: await response.text() };
}

/** Records in the topic, summed over partitions. */
async function records(instance: LaggingInstance): Promise<number> {
  return cursorTotal(await instance.log.head());
}

withKafka('conditional requests across instances', (brokers) => {
  const across = suite<{ a: LaggingInstance; b: LaggingInstance }>(
    'kafka: GET and If-Match through two instances whose read models lag',
  );

  across.before(async (context) => {
    const env = kafkaEnv(brokers, uniqueTopic('conditional'));
    context.a = await startLaggingInstance(env);
    context.b = await startLaggingInstance(env);
    context.a.hold();
    context.b.hold();
  });
  across.after(async ({ a, b }) => {
    await Promise.all([a?.close(), b?.close()]);
  });

  across(
    'a GET through B answers what A wrote before it: the report and its ETag, 404 once deleted, the new ETag once created again',
    async ({ a, b }) => {
      const ids = Array.from({ length: REPORTS }, (_, index) => 4_000_000 + index);
      await Promise.all(
        ids.map(async (id) => {
          assert.equal(await send(a, 'POST', id, { name: 'first' }), {
            status: 200,
            etag: null,
            body: '{"name":"first"}',
          });
          assert.equal(await send(b, 'GET', id), { status: 200, etag: '"1"', body: '{"name":"first"}' });
          assert.is((await send(a, 'DELETE', id)).status, 204);
          assert.equal((await send(b, 'GET', id)).status, 404);
          assert.is((await send(a, 'POST', id, { name: 'second' })).status, 200);
          assert.equal(await send(b, 'GET', id, { headers: { 'If-None-Match': '"1"' } }), {
            status: 200,
            etag: '"3"',
            body: '{"name":"second"}',
          });
          assert.equal(await send(b, 'HEAD', id), { status: 200, etag: '"3"', body: '' });
        }),
      );
    },
  );

  across(
    'a stale If-Match is 412 through either instance, and the report A made stays: B finds it stale only by the fold, whose void event changes nothing',
    async ({ a, b }) => {
      for (let index = 0; index < REPORTS; index += 1) {
        const id = 5_000_000 + index;
        assert.is((await send(a, 'POST', id, { name: 'first' })).status, 200);
        // B sees version 1, then A moves the report on to 3 without B folding it.
        assert.is((await send(b, 'GET', id)).etag, '"1"');
        assert.is((await send(a, 'DELETE', id)).status, 204);
        assert.is((await send(a, 'POST', id, { name: 'again' })).status, 200);

        const before = await records(a);
        const throughA = await send(a, 'DELETE', id, { headers: { 'If-Match': '"1"' } });
        assert.is(throughA.status, 412, throughA.body);
        assert.match(throughA.body, /If-Match/);
        assert.is(await records(a), before, 'A knew the version had moved on: nothing written');

        const voidBefore = b.projector.model.counts.voidEvents;
        const throughB = await send(b, 'DELETE', id, { headers: { 'If-Match': '"1"' } });
        assert.is(throughB.status, 412, throughB.body);
        assert.match(throughB.body, /If-Match/);
        // B's state still had version 1, so B wrote its delete naming it; the fold voided it.
        assert.is(await records(a), before + 1);
        assert.is(b.projector.model.counts.voidEvents, voidBefore + 1);
        assert.equal(await send(a, 'GET', id), { status: 200, etag: '"3"', body: '{"name":"again"}' });

        assert.is((await send(b, 'POST', id, { name: 'again', headers: { 'If-Match': '"1"' } })).status, 412);
        assert.is((await send(b, 'DELETE', id, { headers: { 'If-Match': '"3"' } })).status, 204);
      }
    },
  );

  across(
    'an If-Match that B has not seen but is current deletes through B: B catches up before it answers 412',
    async ({ a, b }) => {
      for (let index = 0; index < REPORTS; index += 1) {
        const id = 6_000_000 + index;
        assert.is((await send(a, 'POST', id, { name: 'unseen' })).status, 200);
        assert.is((await send(a, 'DELETE', id)).status, 204);
        assert.is((await send(a, 'POST', id, { name: 'unseen again' })).status, 200);
        const before = await records(a);
        assert.equal(await send(b, 'DELETE', id, { headers: { 'If-Match': '"3"' } }), {
          status: 204,
          etag: null,
          body: '',
        });
        assert.is(await records(a), before + 1);
        assert.is((await send(a, 'GET', id)).status, 404);
      }
    },
  );

  across(
    "a create with If-None-Match: * through B, which has not folded A's create, is 412: its event (expectedversion 0) is void and A's report stays",
    async ({ a, b }) => {
      for (let index = 0; index < REPORTS; index += 1) {
        const id = 7_000_000 + index;
        assert.is((await send(a, 'POST', id, { name: 'from A' })).status, 200);
        const before = await records(a);
        const voidBefore = b.projector.model.counts.voidEvents;
        const throughB = await send(b, 'POST', id, { name: 'from B', headers: { 'If-None-Match': '*' } });
        assert.is(throughB.status, 412, throughB.body);
        assert.match(throughB.body, /If-None-Match/);
        // B's state had no report, so B wrote its create; the fold voided it.
        assert.is(await records(a), before + 1);
        assert.is(b.projector.model.counts.voidEvents, voidBefore + 1);
        assert.equal(await send(a, 'GET', id), { status: 200, etag: '"1"', body: '{"name":"from A"}' });
        assert.equal(await send(b, 'GET', id), { status: 200, etag: '"1"', body: '{"name":"from A"}' });
      }
    },
  );

  across.run();
});
