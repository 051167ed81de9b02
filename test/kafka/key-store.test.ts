// The Kafka key store on a real broker: keys put through one instance are read by another on the
// same key topic once it has caught up; a destroy leaves them unreadable on both; writes waiting
// together share one produce request; close leaves nothing running; no log line carries a secret
// or a digest. (Timeouts and the cap, on a paused broker: key-store-paused.test.ts.)
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import kafkajs from 'kafkajs';
import { PARTITIONED_ID_BYTES } from '../../src/keys/kafka-key-ids.js';
import { keyIdText, type ContentKey } from '../../src/keys/key-store.js';
import { LogUnavailableError } from '../../src/log/event-log.js';
import { partitionOfKey } from '../../src/log/kafka/key-partition.js';
import { digestOf, openTestKeyStore, type TestKeyStore } from '../helpers/kafka-keys.js';
import { uniqueTopic, withAdmin, withKafka } from '../helpers/kafka.js';
import { activeResources, untilNoMoreThan } from '../helpers/resources.js';

const deleteTopic = (brokers: string, topic: string) =>
  withAdmin(brokers, (admin) => admin.deleteTopics({ topics: [topic] }));

withKafka('key store', (brokers) => {
  const shared = suite<{ topic: string; a: TestKeyStore; b: TestKeyStore }>(
    'kafka: the key store, two instances on one key topic',
  );

  shared.before.each(async (context) => {
    context.topic = uniqueTopic('keys');
    context.a = await openTestKeyStore(brokers, context.topic);
    context.b = await openTestKeyStore(brokers, context.topic);
  });
  shared.after.each(async ({ topic, a, b }) => {
    await a?.store.close();
    await b?.store.close();
    await deleteTopic(brokers, topic);
  });

  shared(
    'a key put through one instance is read by the other, which catches up with its partition for it',
    async ({ a, b }) => {
      const key = a.store.mint(digestOf('Q3 revenue'));
      assert.is(key.id.length, PARTITIONED_ID_BYTES);
      await a.store.put([key]);
      assert.equal(await a.store.get(key.id), key, 'read-your-writes on the writer');
      // The other follows the topic in the background, and may or may not have read the key by now:
      // either way its get answers it (catching up with the key's partition when it has not).
      assert.equal(await b.store.get(key.id), key);
      assert.is(await b.store.get(Buffer.alloc(16, 7)), undefined, 'a key never put');
    },
  );

  shared('a destroyed key is undefined on both instances, and on one opened after', async ({ topic, a, b }) => {
    const kept = a.store.mint(digestOf('kept'));
    const destroyed = a.store.mint(digestOf('destroyed'));
    await a.store.put([kept, destroyed]);
    assert.equal((await b.store.lookup()).get(destroyed.id), destroyed);
    await a.store.destroy([destroyed.id]);
    assert.is(await a.store.get(destroyed.id), undefined, 'gone on the writer when destroy resolves');
    const lookup = await b.store.lookup();
    assert.is(lookup.get(destroyed.id), undefined, 'gone on the other once it caught up');
    assert.equal(lookup.get(kept.id), kept);
    assert.is(await b.store.get(destroyed.id), undefined);
    assert.is(a.store.stats().erasures, 1);
    const c = await openTestKeyStore(brokers, topic);
    assert.is(await c.store.get(destroyed.id), undefined);
    assert.equal(await c.store.get(kept.id), kept);
    assert.is(c.store.stats().keys, 1);
    await c.store.close();
  });

  shared(
    'a destroy naming ids no key store can hold (an event of another producer may) destroys the rest and refuses nothing',
    async ({ a, b }) => {
      const key = a.store.mint(digestOf('Q4 revenue'));
      await a.store.put([key]);
      const before = a.store.stats().erasures;
      // What a 1-character and a 24-character key id of the topic contract decode to: 0 and 18 bytes.
      await a.store.destroy([Buffer.alloc(0), Buffer.alloc(18, 3), key.id]);
      assert.is(await a.store.get(key.id), undefined);
      assert.is((await b.store.lookup()).get(key.id), undefined, 'its tombstone reached the other instance');
      assert.is(a.store.stats().erasures - before, 1, 'one tombstone: the others were never put');
      await a.store.destroy([Buffer.alloc(20, 1)]);
    },
  );

  shared('keys waiting together go out in one produce request', async ({ a, b }) => {
    const keys = Array.from({ length: 500 }, (_, i) => a.store.mint(digestOf(`report ${i}`)));
    const before = a.store.stats().produceRequests;
    const started = performance.now();
    await Promise.all(keys.map((key) => a.store.put([key])));
    const elapsedMs = performance.now() - started;
    const requests = a.store.stats().produceRequests - before;
    // The first put flushes alone; the 499 that arrived meanwhile share the next request.
    assert.ok(requests <= 3, `${requests} produce requests for 500 puts`);
    const lookup = await b.store.lookup();
    assert.ok(keys.every((key) => lookup.get(key.id)?.secret.equals(key.secret)));
    process.stdout.write(`  [500 concurrent puts: ${requests} produce requests, ${elapsedMs.toFixed(0)} ms]\n`);
  });

  shared(
    'a put or destroy of nothing writes nothing, a malformed key is refused before anything is written, and a destroy of an id no store holds writes nothing',
    async ({ a }) => {
      const before = a.store.stats().produceRequests;
      await a.store.put([]);
      await a.store.destroy([]);
      assert.is(a.store.stats().produceRequests, before);
      const key = a.store.mint(digestOf('x'));
      assert.instance(
        await a.store.put([{ ...key, secret: key.secret.subarray(0, 16) }]).then(
          () => undefined,
          (error: unknown) => error,
        ),
        RangeError,
      );
      // Never put (a put refuses it), so there is nothing to destroy: resolved, nothing sent.
      await a.store.destroy([Buffer.alloc(17)]);
      assert.is(a.store.stats().produceRequests, before);
      assert.throws(
        () => a.store.mint(Buffer.alloc(20)),
        (error: unknown) => error instanceof RangeError,
      );
    },
  );

  shared.run();

  const stuck = suite('kafka: the key store, closed');

  stuck('a closed store refuses every call', async () => {
    const topic = uniqueTopic('keys-closed');
    const { store } = await openTestKeyStore(brokers, topic);
    await store.close();
    await store.close();
    for (const call of [
      () => store.put([]),
      () => store.destroy([]),
      () => store.get(Buffer.alloc(16)),
      () => store.lookup(),
    ]) {
      assert.instance(
        await call().then(
          () => undefined,
          (error: unknown) => error,
        ),
        LogUnavailableError,
      );
    }
    await deleteTopic(brokers, topic);
  });

  stuck.run();

  const hygiene = suite('kafka: the key store leaves nothing behind');

  hygiene("a key's write group is the partition its id names: its report's partition", async () => {
    const topic = uniqueTopic('keys-groups');
    const a = await openTestKeyStore(brokers, topic, { REPORTS_TOPIC_PARTITIONS: '3' });
    try {
      const ids = Array.from({ length: 30 }, (_, i) => String(1000 + i));
      const groups = ids.map((id) => a.store.writeGroupOf?.(a.store.mint(digestOf(id), { partitionKey: id }).id));
      assert.equal(
        groups,
        ids.map((id) => partitionOfKey(id, 3)),
      );
      assert.equal(new Set(groups).size, 3, 'the ids spread over the three partitions');
    } finally {
      await a.store.close();
      await deleteTopic(brokers, topic);
    }
  });

  hygiene('close leaves no socket, timer or fetch loop behind', async () => {
    const before = activeResources();
    const topic = uniqueTopic('keys-close');
    const a = await openTestKeyStore(brokers, topic, { REPORTS_TOPIC_PARTITIONS: '3' });
    const b = await openTestKeyStore(brokers, topic, { REPORTS_TOPIC_PARTITIONS: '3' });
    const keys = Array.from({ length: 30 }, (_, i) => a.store.mint(digestOf(`close ${i}`)));
    await a.store.put(keys);
    await b.store.lookup();
    // A destroy arms the roll timer (segment-rolls.ts); a miss reads a partition's head.
    await a.store.destroy([(keys[0] as ContentKey).id]);
    assert.is(await b.store.get(Buffer.alloc(16, 1)), undefined);
    await a.store.close();
    await b.store.close();
    await deleteTopic(brokers, topic);
    await untilNoMoreThan(before);
  });

  hygiene(
    'no log line carries a secret or a digest, and a record that is not a key is skipped naming only its partition and offset',
    async () => {
      const topic = uniqueTopic('keys-logs');
      const a = await openTestKeyStore(brokers, topic);
      const keys = Array.from({ length: 10 }, (_, i) => a.store.mint(digestOf(`logged ${i}`)));
      await a.store.put(keys);
      await a.store.destroy(keys.slice(0, 5).map((key) => key.id));
      // A record this version cannot read, under a key id, written by someone else.
      const foreign = Buffer.alloc(16, 9);
      const kafka = new kafkajs.Kafka({
        clientId: 'key-store-tests',
        brokers: [brokers],
        logLevel: kafkajs.logLevel.NOTHING,
      });
      const producer = kafka.producer();
      await producer.connect();
      await producer.send({
        topic,
        messages: [
          {
            key: keyIdText(foreign),
            value: Buffer.from([2, ...(keys[9]?.secret ?? [])]),
            partition: partitionOfKey(keyIdText(foreign), 3),
          },
        ],
      });
      await producer.disconnect();
      assert.is(await a.store.get(foreign), undefined);
      const b = await openTestKeyStore(brokers, topic);
      await a.store.close();
      await b.store.close();
      const text = a.logText() + b.logText();
      assert.match(text, /skipped a record of the key topic that is not a key this version reads/);
      assert.match(text, /opened the Kafka key store/);
      for (const key of keys) {
        for (const bytes of [key.secret, key.contentDigest]) {
          for (const encoding of ['hex', 'base64', 'base64url'] as const)
            assert.not.ok(text.includes(bytes.toString(encoding)), `a ${encoding} secret or digest in the log`);
        }
      }
      await deleteTopic(brokers, topic);
    },
  );

  hygiene.run();
});
