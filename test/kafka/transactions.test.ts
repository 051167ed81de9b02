// Records the consumer never delivers (transaction markers, aborted transactional records) must not
// stall the projection: its cursor passes them, running and restarted instances become ready, and
// only committed records are folded (consumers read with read_committed isolation).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import kafkajs from 'kafkajs';
import { encodeEvent } from '../../projections/codec.js';
import { loadConfig, type KafkaConfig } from '../../src/config.js';
import type { LogGap, LogRecord } from '../../src/log/event-log.js';
import { openKafkaLog } from '../../src/log/kafka/kafka-log.js';
import { collect, withTimeout } from '../helpers/async.js';
import { memoryLogger } from '../helpers/server.js';
import { created } from '../helpers/events.js';
import { kafkaEnv, startKafkaServer, uniqueTopic, withAdmin, withKafka } from '../helpers/kafka.js';
import { followRecords, readRecords } from '../../src/log/record-batches.js';
import { openedReport } from '../helpers/opened.js';

async function eventually(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Commits one created event (id 77) and aborts another (id 78), both from a transactional producer, and waits for the markers. */
async function commitOneAbortOne(brokers: string, topic: string): Promise<void> {
  const kafka = new kafkajs.Kafka({
    clientId: 'report-store-tests-tx',
    brokers: brokers.split(','),
    logLevel: kafkajs.logLevel.NOTHING,
  });
  const producer = kafka.producer({ transactionalId: `tx-${topic}`, idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  try {
    const committed = await producer.transaction();
    await committed.send({
      topic,
      messages: [{ key: '77', value: encodeEvent(created('77', 'committed')), partition: 0 }],
    });
    await committed.commit();
    const aborted = await producer.transaction();
    await aborted.send({
      topic,
      messages: [{ key: '78', value: encodeEvent(created('78', 'aborted')), partition: 0 }],
    });
    await aborted.abort();
  } finally {
    await producer.disconnect();
  }
  // Offsets: 0 the committed record, 1 its commit marker, 2 the aborted record, 3 its abort marker.
  // The coordinator writes the markers after EndTxn has answered, so the head reaches 4 a moment later.
  await eventually('both transaction markers are in the log', async () => {
    const head = await withAdmin(brokers, (admin) => admin.fetchTopicOffsets(topic));
    return head.map(({ high }) => high).join() === '4';
  });
}

withKafka('transactions', (brokers) => {
  const transactions = suite('kafka: transactional records of another producer');

  transactions(
    'running and restarted instances pass transaction markers and aborted records, become ready and fold only the committed record',
    async () => {
      const topic = uniqueTopic('tx');
      const running = await startKafkaServer(brokers, { REPORTS_TOPIC_PARTITIONS: '1' }, topic);
      try {
        await commitOneAbortOne(brokers, topic);
        await eventually(
          'the running instance passed every offset',
          () => running.projector.progress().cursor.get(0) === 4,
        );
        assert.equal(await openedReport(running.projector.model.reports, running.keys, '77'), { name: 'committed' });
        assert.is(await openedReport(running.projector.model.reports, running.keys, '78'), undefined);
        assert.is((await running.request('/readyz')).status, 200);

        const restarted = await withTimeout(
          startKafkaServer(brokers, { REPORTS_TOPIC_PARTITIONS: '1' }, topic),
          20_000,
          'a restarted instance to catch up',
        );
        try {
          assert.equal(await openedReport(restarted.projector.model.reports, restarted.keys, '77'), {
            name: 'committed',
          });
          assert.is(await openedReport(restarted.projector.model.reports, restarted.keys, '78'), undefined);
          assert.is((await restarted.request('/readyz')).status, 200);
          assert.is(
            (await restarted.request('/reports', { method: 'POST', json: '{"id": 79, "name": "after"}' })).status,
            200,
          );
        } finally {
          await restarted.dispose();
        }
      } finally {
        await running.dispose();
      }
    },
  );

  transactions(
    'a read of a topic with transaction markers ends at the head and yields only committed records; a new follower starts at its cursor, not at 0',
    async () => {
      const topic = uniqueTopic('tx-read');
      const server = await startKafkaServer(brokers, { REPORTS_TOPIC_PARTITIONS: '1' }, topic);
      await server.dispose();
      await commitOneAbortOne(brokers, topic);
      const log = await openKafkaLog({
        config: loadConfig(kafkaEnv(brokers, topic)).kafka as KafkaConfig,
        logger: memoryLogger().logger,
        writeTimeoutMs: 5000,
      });
      try {
        const gaps: LogGap[] = [];
        const records = await withTimeout(
          collect(readRecords(log, new Map(), { onGap: (gap) => gaps.push(gap) })),
          15_000,
          'the read to end',
        );
        assert.equal(
          records.map((record) => [record.key, record.position.offset]),
          [['77', 0]],
        );
        assert.equal(gaps.at(-1), { partition: 0, next: 4 });
        await log.append([
          { key: '80', value: encodeEvent(created('80', 'after')) },
          { key: '81', value: encodeEvent(created('81', 'after')) },
        ]);
        // A follower started again (a restart, a new consumer group) from the cursor after offset 4.
        const stop = new AbortController();
        let first: LogRecord | undefined;
        for await (const record of followRecords(log, new Map([[0, 5]]), { signal: stop.signal })) {
          first = record;
          stop.abort();
        }
        assert.equal([first?.key, first?.position.offset], ['81', 5]);
      } finally {
        await log.close();
      }
    },
  );

  transactions.run();
});
