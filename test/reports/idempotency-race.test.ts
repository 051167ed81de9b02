// Two requests that carry one Idempotency-Key at the same moment are decided one after the other:
// exactly one writes an event, the other gets the first answer or 422 with nothing written.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startKafkaServer, withKafka } from '../helpers/kafka.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { deleteReport, distinctive, idSource, logHead, postReport, reportBody } from '../http/requests.js';

const nextId = idSource();
const PAIRS = 100;

function postKeyed(server: TestServer, id: string, key: string): Promise<Response> {
  return server.request('/reports', {
    method: 'POST',
    json: reportBody(id, 'raced'),
    headers: { 'Idempotency-Key': key },
  });
}

function deleteKeyed(server: TestServer, id: string, key: string): Promise<Response> {
  return server.request(`/reports/${id}`, { method: 'DELETE', headers: { 'Idempotency-Key': key } });
}

async function statuses(responses: Response[]): Promise<number[]> {
  await Promise.all(responses.map((response) => response.arrayBuffer()));
  return responses.map((response) => response.status).sort();
}

function raceSuite(logName: string, startServer: () => Promise<TestServer>): void {
  const race = suite(`${logName}: Idempotency-Key races on one instance`);

  race(
    'of 100 pairs of creates sharing a key but not an id, each writes one event and the 422 id does not exist',
    async () => {
      const server = await startServer();
      try {
        const before = await logHead(server);
        const pairs = Array.from({ length: PAIRS }, () => ({
          key: distinctive('race'),
          ids: [nextId(), nextId()] as const,
        }));
        const answers = await Promise.all(
          pairs.map(async ({ key, ids }) => Promise.all(ids.map((id) => postKeyed(server, id, key)))),
        );
        assert.is(await logHead(server), before + PAIRS, 'exactly one event per pair');
        for (const [i, pair] of answers.entries()) {
          assert.equal(await statuses(pair), [200, 422]);
          const loser = pairs[i]?.ids[pair[0]?.status === 422 ? 0 : 1] ?? '';
          const gone = await deleteReport(server, loser);
          assert.is(gone.status, 404, `report ${loser} answered 422 but exists`);
          await gone.arrayBuffer();
        }
      } finally {
        await server.dispose();
      }
    },
  );

  race(
    'of 100 pairs of deletes sharing a key but not an id, each writes one event and the 422 id still exists',
    async () => {
      const server = await startServer();
      try {
        const pairs = Array.from({ length: PAIRS }, () => ({
          key: distinctive('race'),
          ids: [nextId(), nextId()] as const,
        }));
        for (const { ids } of pairs) for (const id of ids) await (await postReport(server, id, 'raced')).arrayBuffer();
        const before = await logHead(server);
        const answers = await Promise.all(
          pairs.map(async ({ key, ids }) => Promise.all(ids.map((id) => deleteKeyed(server, id, key)))),
        );
        assert.is(await logHead(server), before + PAIRS, 'exactly one event per pair');
        for (const [i, pair] of answers.entries()) {
          assert.equal(await statuses(pair), [204, 422]);
          const loser = pairs[i]?.ids[pair[0]?.status === 422 ? 0 : 1] ?? '';
          const again = await postReport(server, loser, 'other name');
          assert.is(again.status, 409, `report ${loser} answered 422 but was deleted`);
          await again.arrayBuffer();
        }
      } finally {
        await server.dispose();
      }
    },
  );

  race('answers two identical keyed creates sent at once with the same 200, writing one event', async () => {
    const server = await startServer();
    try {
      const [id, key] = [nextId(), distinctive('same')];
      const before = await logHead(server);
      assert.equal(
        await statuses(await Promise.all([postKeyed(server, id, key), postKeyed(server, id, key)])),
        [200, 200],
      );
      assert.is(await logHead(server), before + 1);
    } finally {
      await server.dispose();
    }
  });

  race.run();
}

raceSuite('file', () => startTestServer());
withKafka('Idempotency-Key races', (brokers) => raceSuite('kafka', () => startKafkaServer(brokers)));
