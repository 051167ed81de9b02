// An event of another producer may name a key id no key store holds (the topic contract allows ids
// of up to 32 base64url characters; keys are at most 16 bytes). When the fold voids such a create,
// every instance asks for its key's destruction in the background; that request must not fail: it
// is retried every second, with every erasure left to the background batched with it, until a
// restart.
import kafkajs from 'kafkajs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeEvent } from '../../projections/codec.js';
import type { ReportCreated } from '../../projections/events.js';
import { caughtUp, startKafkaServer, uniqueTopic, withKafka } from '../helpers/kafka.js';
import { created } from '../helpers/events.js';

async function pendingErasures(request: (path: string) => Promise<Response>): Promise<number> {
  const text = await (await request('/metrics')).text();
  const line = text.split('\n').find((l) => l.startsWith('reports_erasures_pending '));
  if (line === undefined) throw new Error('/metrics has no reports_erasures_pending');
  return Number(line.split(' ')[1]);
}

withKafka('foreign key ids', (brokers) => {
  const foreign = suite('kafka: a key id no key store holds, in an event of another producer');

  foreign('its void create is erased in the background without a refusal, and nothing is left waiting', async () => {
    const topic = uniqueTopic('foreign-key');
    const server = await startKafkaServer(brokers, { REPORTS_TOPIC_PARTITIONS: '1' }, topic);
    const kafka = new kafkajs.Kafka({
      clientId: 'report-store-tests-foreign',
      brokers: brokers.split(','),
      logLevel: kafkajs.logLevel.NOTHING,
    });
    const producer = kafka.producer();
    await producer.connect();
    try {
      const first = await server.request('/reports', { method: 'POST', json: { id: 5, name: 'kept' } });
      assert.is(first.status, 200);
      // A create of the same id with a 24-character key id (18 bytes): the fold voids it (the report exists).
      const plain = created('5', 'x');
      const event: ReportCreated = {
        ...plain,
        data: { id: '5', sealed: { key: 'A'.repeat(24), box: Buffer.alloc(24, 1).toString('base64') } },
      };
      await producer.send({ topic, messages: [{ key: '5', value: encodeEvent(event), partition: 0 }] });
      await caughtUp(server);
      const deadline = Date.now() + 10_000;
      let pending = await pendingErasures(server.request);
      while (pending > 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        pending = await pendingErasures(server.request);
      }
      assert.is(pending, 0, 'every erasure confirmed within 10 s');
      assert.not.ok(
        server.logLines().some((line) => String(line['msg']).includes('still does not confirm the destruction')),
        'no background erasure was refused',
      );
      const kept = await server.request('/reports/5');
      assert.is(kept.status, 200);
      assert.is(((await kept.json()) as { name: string }).name, 'kept');
    } finally {
      await producer.disconnect();
      await server.dispose();
    }
  });

  foreign.run();
});
