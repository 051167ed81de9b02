// The key store's writes in one lane per partition of the key topic: a partition whose produce
// request never answers (its leader paused) holds only its own puts and destroys, with a cap of
// its own on the writes waiting; lanes of one leader share a request; offsets come back in order.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import kafkajs, { type ProducerRecord, type RecordMetadata } from 'kafkajs';
import { Deadlines } from '../../src/deadlines.js';
import { KeyLanes, type KeyLanesOptions } from '../../src/keys/key-lanes.js';
import type { KeyMessage } from '../../src/keys/key-writes.js';
import { AppendTimeoutError, LogOverloadedError, LogUnavailableError } from '../../src/log/event-log.js';
import { KafkaRefusedError } from '../../src/log/kafka/errors.js';
import { rejection } from '../helpers/async.js';

const put = (partition: number, key = `k${partition}`): KeyMessage => ({ key, value: Buffer.alloc(65, 1), partition });
const tombstone = (partition: number, key = `k${partition}`): KeyMessage => ({ key, value: null, partition });

/** A broker that numbers each partition's records from 0 and never answers a request holding a `stuck` partition. */
function fakeBroker(stuck: ReadonlySet<number> = new Set()) {
  const requests: number[][] = [];
  const next = new Map<number, number>();
  const send = (record: ProducerRecord): Promise<RecordMetadata[]> => {
    const partitions = [...new Set(record.messages.map((message) => message.partition as number))].sort();
    requests.push(partitions);
    if (partitions.some((partition) => stuck.has(partition))) return new Promise(() => undefined);
    return Promise.resolve(
      partitions.map((partition) => {
        const base = next.get(partition) ?? 0;
        next.set(partition, base + record.messages.filter((message) => message.partition === partition).length);
        return { topicName: record.topic, partition, errorCode: 0, baseOffset: String(base) };
      }),
    );
  };
  return { requests, send };
}

function lanesOf(send: KeyLanesOptions['send'], options: Partial<KeyLanesOptions> = {}): KeyLanes {
  // Each partition led by a broker of its own unless told.
  return new KeyLanes({
    send,
    topic: 'r.keys',
    partitions: 3,
    produceTimeoutMs: 1000,
    maxMessageBytes: 1_048_588,
    leaderOf: (partition) => partition,
    deadlines: new Deadlines(),
    ...options,
  });
}

const lanes = suite('KeyLanes');

lanes(
  "a partition whose produce request never answers holds only its own writes: the other partitions' puts and destroys go on",
  async () => {
    const { send } = fakeBroker(new Set([0]));
    const keys = lanesOf(send);
    const stuck = [keys.write([put(0)], 100), keys.write([tombstone(0, 'old')], 100)];
    assert.equal(await keys.write([put(1)], 100), [0]);
    assert.equal(await keys.write([tombstone(1)], 100), [1]);
    assert.equal(await keys.write([put(2), put(2, 'k2b')], 100), [0, 1]);
    assert.equal(await keys.write([tombstone(2)], 100), [2]);
    for (const write of stuck) assert.instance(await rejection(write), AppendTimeoutError);
  },
);

lanes("caps the writes waiting in each lane, so a stuck partition does not take the others' room", async () => {
  const { send } = fakeBroker(new Set([0]));
  const keys = lanesOf(send, { maxPendingPerLane: 2 });
  // The first is in the stuck request; two more wait; the fourth is refused at once.
  const waiting = [0, 1, 2].map((i) => keys.write([put(0, `k${i}`)], 100));
  assert.instance(await rejection(keys.write([put(0, 'k3')], 100)), LogOverloadedError);
  assert.equal(await keys.write([put(1)], 100), [0]);
  for (const write of waiting) assert.instance(await rejection(write), AppendTimeoutError);
});

lanes(
  'lanes of one leader that flush together share a request; a write over partitions gets its offsets in its order',
  async () => {
    const { requests, send } = fakeBroker();
    const keys = lanesOf(send, { leaderOf: () => 1 });
    const answers = await Promise.all([keys.write([put(0), put(1)]), keys.write([put(2)])]);
    assert.equal(requests, [[0, 1, 2]]);
    assert.equal(answers, [[0, 0], [0]]);
    assert.equal(await keys.write([put(2, 'a'), put(0, 'b'), put(2, 'c')]), [1, 1, 2]);
    assert.equal(await keys.write([]), []);
  },
);

lanes("a lane's writes go in as many requests as max.message.bytes asks", async () => {
  const { requests, send } = fakeBroker();
  const keys = lanesOf(send, { maxMessageBytes: 400 });
  assert.equal(await keys.write([0, 1, 2, 3, 4].map((i) => put(1, `k${i}`))), [0, 1, 2, 3, 4]);
  assert.equal(requests, [[1], [1], [1]]);
});

lanes(
  'a broker out of reach rejects with LogUnavailableError naming the key topic, a refusal with KafkaRefusedError',
  async () => {
    const unreachable = lanesOf(() =>
      Promise.reject(new kafkajs.KafkaJSConnectionError('Connection error: ECONNREFUSED')),
    );
    const error = await rejection(unreachable.write([put(0)]));
    assert.instance(error, LogUnavailableError);
    assert.match(String(error), /the key topic r\.keys is unavailable/);
    const refusing = lanesOf(() => Promise.reject(new kafkajs.KafkaJSNonRetriableError('too large')));
    assert.instance(await rejection(refusing.write([put(0)])), KafkaRefusedError);
  },
);

lanes.run();
