// `latest(key)` reads the head of the key's partition from that partition's leader alone (a paused
// leader of another partition must not hold it): the head it gives is the partition's high watermark.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { kafkaEnv, startKafkaServer, uniqueTopic, withAdmin, withKafka } from '../helpers/kafka.js';
import { memoryLogger, type TestServer } from '../helpers/server.js';
import { loadConfig } from '../../src/config.js';
import { openKafkaLog } from '../../src/log/kafka/kafka-log.js';
import { hasKeyedHeads } from '../../src/log/capabilities.js';
import type { EventLog } from '../../src/log/event-log.js';

/** The log's KeyedHeads capability (Kafka has it), or undefined. */
const keyed = (log: EventLog) => (hasKeyedHeads(log) ? log : undefined);

withKafka('partition heads', (brokers) => {
  const heads = suite<{ topic: string; server: TestServer }>('kafka: the head of one partition');

  heads.before(async (context) => {
    context.topic = uniqueTopic('heads');
    context.server = await startKafkaServer(brokers, { REPORTS_TOPIC_PARTITIONS: '3' }, context.topic);
    for (let id = 1; id <= 30; id += 1) {
      assert.is(
        (
          await context.server.request('/reports', {
            method: 'POST',
            json: JSON.stringify({ id, name: `report ${id}` }),
          })
        ).status,
        200,
      );
    }
  });
  heads.after(async ({ server }) => {
    await server?.dispose();
  });

  heads(
    "latest(key) is the key's partition at its high watermark, and only that partition",
    async ({ topic, server }) => {
      const highs = new Map(
        (await withAdmin(brokers, (admin) => admin.fetchTopicOffsets(topic))).map(({ partition, high }) => [
          partition,
          Number(high),
        ]),
      );
      const seen = new Set<number>();
      for (let id = 1; id <= 30; id += 1) {
        const latest = keyed(server.log)?.latest(String(id));
        assert.ok(latest, 'the Kafka log has latest');
        const cursor = await latest;
        assert.is(cursor.size, 1);
        const [[partition, head]] = [...cursor] as [[number, number]];
        assert.is(partition, keyed(server.log)?.partitionFor(String(id)));
        assert.is(head, highs.get(partition));
        seen.add(partition);
      }
      assert.is(seen.size, 3, 'the ids span every partition');
    },
  );

  heads('a head read after a write includes it', async ({ server }) => {
    const id = '31';
    const before = [...((await keyed(server.log)?.latest(id)) ?? new Map<number, number>()).values()][0] ?? -1;
    assert.is(
      (await server.request('/reports', { method: 'POST', json: JSON.stringify({ id: 31, name: 'one more' }) })).status,
      200,
    );
    const after = [...((await keyed(server.log)?.latest(id)) ?? new Map<number, number>()).values()][0] ?? -1;
    assert.is(after, before + 1);
  });

  heads("the log's head is every partition at its high watermark, read from the leaders", async ({ topic, server }) => {
    const highs = new Map(
      (await withAdmin(brokers, (admin) => admin.fetchTopicOffsets(topic))).map(({ partition, high }) => [
        partition,
        Number(high),
      ]),
    );
    assert.equal(new Map(await server.log.head()), highs);
    assert.is(highs.size, 3);
  });

  heads('a closed log reads no head: it neither answers nor connects again', async ({ topic }) => {
    const { kafka } = loadConfig(kafkaEnv(brokers, topic));
    const log = await openKafkaLog({ config: kafka!, logger: memoryLogger().logger, writeTimeoutMs: 10_000 });
    const open = await log.head();
    assert.is(open.size, 3);
    await log.close();
    const afterClose = await log.head().then(
      () => 'answered',
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    assert.match(afterClose, /closed/);
    const latest = await keyed(log)
      ?.latest('1')
      .then(
        () => 'answered',
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      );
    assert.match(latest ?? '', /closed/);
  });

  heads.run();
});
