// Writes as Kafka messages: keys, tombstones, roll records; split where max.message.bytes would
// refuse a batch; the offsets of each partition's messages from the broker's answer.
import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeKeyValue, ROLL_KEY } from '../../src/keys/key-record.js';
import { keyIdText } from '../../src/keys/key-store.js';
import {
  messagesOf,
  offsetsOf,
  putWrite,
  requestsOf,
  UnwrittenKeysError,
  type KeyMessage,
} from '../../src/keys/key-writes.js';

const writes = suite('key writes');
const partitionOf = (idText: string) => idText.length % 3;

writes('a put is a key record per key, encoded when it is asked for', () => {
  const key = { id: randomBytes(16), secret: randomBytes(32), contentDigest: randomBytes(32) };
  const expected = encodeKeyValue(key);
  const write = putWrite([key], (k) => keyIdText(k.id));
  key.secret.fill(0);
  assert.equal(messagesOf(write, partitionOf), [
    { key: keyIdText(key.id), value: expected, partition: partitionOf(keyIdText(key.id)) },
  ]);
});

writes('a destroy is a tombstone per id, a roll a tombstone of the roll key per partition', () => {
  assert.equal(messagesOf({ kind: 'destroy', idTexts: ['AAAA', 'BB'] }, partitionOf), [
    { key: 'AAAA', value: null, partition: 1 },
    { key: 'BB', value: null, partition: 2 },
  ]);
  assert.equal(messagesOf({ kind: 'roll', partitions: [0, 2] }, partitionOf), [
    { key: ROLL_KEY, value: null, partition: 0 },
    { key: ROLL_KEY, value: null, partition: 2 },
  ]);
});

writes('messages go in one request unless max.message.bytes would refuse its batch', () => {
  const messages: KeyMessage[] = Array.from({ length: 10_000 }, (_, i) => ({
    key: String(i),
    value: null,
    partition: 0,
  }));
  assert.is(requestsOf(messages, 1_048_588).length, 2);
  assert.is(requestsOf(messages.slice(0, 6000), 1_048_588).length, 1);
  assert.equal(
    requestsOf(messages.slice(0, 3), 10).map((request) => request.length),
    [1, 1, 1],
  );
});

writes("a partition's offsets count on from its base offset", () => {
  const of = (partition: number, count: number): KeyMessage[] =>
    Array.from({ length: count }, (_, i) => ({ key: String(i), value: null, partition }));
  const byPartition = new Map([
    [0, of(0, 3)],
    [1, of(1, 1)],
  ]);
  const answer = [
    { topicName: 't', partition: 0, errorCode: 0, baseOffset: '10' },
    { topicName: 't', partition: 1, errorCode: 0, baseOffset: '4' },
  ];
  assert.equal(
    offsetsOf(byPartition, answer),
    new Map([
      [0, [10, 11, 12]],
      [1, [4]],
    ]),
  );
});

writes(
  'a partition the answer gives no offset for, or -1, is not taken as written: it gets an error, the others their offsets',
  () => {
    const byPartition = new Map<number, KeyMessage[]>([
      [0, [{ key: 'a', value: null, partition: 0 }]],
      [1, [{ key: 'b', value: null, partition: 1 }]],
    ]);
    const unwritten = (offsets: number[] | Error | undefined, partition: number) =>
      offsets instanceof UnwrittenKeysError && offsets.partition === partition;
    const missing = offsetsOf(byPartition, [{ topicName: 't', partition: 0, errorCode: 0, baseOffset: '10' }]);
    assert.equal(missing.get(0), [10]);
    assert.ok(unwritten(missing.get(1), 1), 'a partition missing from the answer');
    const minusOne = offsetsOf(byPartition, [
      { topicName: 't', partition: 0, errorCode: 0, baseOffset: '10' },
      { topicName: 't', partition: 1, errorCode: 0, baseOffset: '-1' },
    ]);
    assert.ok(unwritten(minusOne.get(1), 1), 'a partition answered -1');
    const empty = offsetsOf(byPartition, []);
    assert.ok(unwritten(empty.get(0), 0) && unwritten(empty.get(1), 1), 'an empty answer');
  },
);

writes.run();
