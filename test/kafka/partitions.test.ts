// A partition-count change under the history: no instance acknowledges a write, /readyz names the
// cause, one error line says how to repartition, the process stays up; verify lists every record
// outside its key's partition.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { lines, reports } from '../helpers/cli.js';
import { kafkaEnv, startKafkaServer, uniqueTopic, withAdmin, withKafka } from '../helpers/kafka.js';
import type { TestServer } from '../helpers/server.js';

const RECORDS = 40;

async function eventually(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function refusesWrites(server: TestServer, id: number): Promise<void> {
  const write = await server.request('/reports', {
    method: 'POST',
    json: JSON.stringify({ id, name: 'after the change' }),
  });
  assert.is(write.status, 503);
  assert.match(((await write.json()) as { message: string }).message, /partition count|belongs to partition/);
  const ready = await server.request('/readyz');
  assert.is(ready.status, 503);
  assert.match(((await ready.json()) as { message: string }).message, /partition/);
  assert.is((await server.request('/healthz')).status, 200);
}

withKafka('partition count', (brokers) => {
  const partitions = suite<{ topic: string; a: TestServer }>('kafka: the partition count changed under the history');

  partitions.before(async (context) => {
    context.topic = uniqueTopic('repartitioned');
    context.a = await startKafkaServer(brokers, { REPORTS_TOPIC_PARTITIONS: '3' }, context.topic);
    for (let id = 1; id <= RECORDS; id += 1) {
      assert.is(
        (await context.a.request('/reports', { method: 'POST', json: JSON.stringify({ id, name: `report ${id}` }) }))
          .status,
        200,
      );
    }
    await withAdmin(brokers, (admin) =>
      admin.createPartitions({ topicPartitions: [{ topic: context.topic, count: 6 }] }),
    );
  });
  partitions.after(async ({ a }) => {
    await a?.dispose();
  });

  partitions(
    'a running instance sees the new count, refuses writes and says why and how to repartition',
    async ({ a }) => {
      await eventually('the running instance refuses writes', () => !a.log.health().available);
      await refusesWrites(a, 1000);
      const lines = a
        .logLines()
        .filter((line) => line['level'] === 50 && String(line['msg']).includes('to repartition'));
      assert.is(lines.length, 1);
    },
  );

  partitions(
    'an instance started on the changed topic finds records outside their partition and refuses writes',
    async ({ topic }) => {
      const b = await startKafkaServer(brokers, {}, topic);
      try {
        await refusesWrites(b, 1001);
      } finally {
        await b.dispose();
      }
    },
  );

  partitions("reports verify lists every record outside its key's partition and exits 1", async ({ topic }) => {
    const { code, stderr } = await reports(['verify'], { env: kafkaEnv(brokers, topic) });
    assert.is(code, 1);
    const misplaced = stderr.split('\n').filter((line) => line.startsWith('misplaced '));
    assert.ok(misplaced.length > 0 && misplaced.length < RECORDS, `${misplaced.length} misplaced`);
  });

  partitions(
    'repartitioning: reports migrate --to-topic copies the history to a topic with the new count, digests equal; the service works on it',
    async ({ topic }) => {
      const fresh = uniqueTopic('repartitioned-6');
      const env = kafkaEnv(brokers, topic, { REPORTS_TOPIC_PARTITIONS: '6' });
      const first = await reports(['migrate', '--to-topic', fresh], { env });
      assert.is(first.code, 0, first.stderr);
      const digest = (label: string) =>
        lines(first.stdout)
          .find((line) => line.startsWith(label))
          ?.split(':')
          .slice(1)
          .join(':')
          .trim();
      assert.is(digest(`topic ${topic} digest`), digest(`topic ${fresh} digest`));
      assert.ok(lines(first.stdout).includes('digests match'));
      assert.is(
        (await withAdmin(brokers, (admin) => admin.fetchTopicMetadata({ topics: [fresh] }))).topics[0]?.partitions
          .length,
        6,
      );
      const again = await reports(['migrate', '--to-topic', fresh], { env });
      assert.match(again.stdout, /copied now:\s+0/);
      assert.is((await reports(['verify'], { env: kafkaEnv(brokers, fresh) })).code, 0);
      const server = await startKafkaServer(brokers, {}, fresh);
      try {
        assert.is(server.projector.model.reports.size, RECORDS);
        assert.is((await server.request('/readyz')).status, 200);
        assert.is(
          (await server.request('/reports', { method: 'POST', json: '{"id": 2000, "name": "after repartitioning"}' }))
            .status,
          200,
        );
      } finally {
        await server.dispose();
      }
    },
  );

  partitions.run();
});
