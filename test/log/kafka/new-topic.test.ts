// whileTopicIsNew and createTopicsSettled: a just-created topic's first moments, when a loaded broker
// still answers that it does not host the topic, are waited out; any other error is not.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import kafkajs, { type Admin } from 'kafkajs';
import { createTopicsSettled, whileTopicIsNew } from '../../../src/log/kafka/topic.js';

const unknownTopic = () =>
  new kafkajs.KafkaJSProtocolError(
    Object.assign(new Error('This server does not host this topic-partition'), {
      type: 'UNKNOWN_TOPIC_OR_PARTITION',
      code: 3,
      retriable: true,
    }),
  );

/** Throws each of `errors` in turn, then answers 'described'; counts the calls. */
function failingFirst(errors: readonly Error[]): { ask: () => Promise<string>; calls: () => number } {
  let calls = 0;
  return {
    ask: () => {
      calls += 1;
      const error = errors[calls - 1];
      return error === undefined ? Promise.resolve('described') : Promise.reject(error);
    },
    calls: () => calls,
  };
}

const test = suite('whileTopicIsNew');

test('asks again while the broker does not know the topic yet, then answers', async () => {
  const { ask, calls } = failingFirst([unknownTopic(), unknownTopic()]);
  assert.is(await whileTopicIsNew(ask), 'described');
  assert.is(calls(), 3);
});

test("asks again when kafkajs's own retries gave up on it (the error is then the cause)", async () => {
  const gaveUp = new kafkajs.KafkaJSNumberOfRetriesExceeded(unknownTopic(), { retryCount: 5, retryTime: 300 });
  const { ask, calls } = failingFirst([gaveUp]);
  assert.is(await whileTopicIsNew(ask), 'described');
  assert.is(calls(), 2);
});

test('any other error is thrown at once', async () => {
  const denied = new kafkajs.KafkaJSProtocolError(
    Object.assign(new Error('Not authorized to access topics'), { type: 'TOPIC_AUTHORIZATION_FAILED', code: 29 }),
  );
  const { ask, calls } = failingFirst([denied]);
  await whileTopicIsNew(ask).then(
    () => assert.unreachable('answered'),
    (error: unknown) => assert.is(error, denied),
  );
  assert.is(calls(), 1);
});

test('gives up after its time-out, with the last error', async () => {
  const { ask } = failingFirst(Array.from({ length: 10 }, unknownTopic));
  const started = performance.now();
  await whileTopicIsNew(ask, 300).then(
    () => assert.unreachable('answered'),
    (error: unknown) => assert.instance(error, kafkajs.KafkaJSProtocolError),
  );
  assert.ok(performance.now() - started >= 300, 'gave up before its time-out');
});

test.run();

/** An admin whose createTopics fails with `createError` (or succeeds), and whose offsets are served after `unservedAsks` asks. */
function fakeAdmin(createError: Error | undefined, unservedAsks: number): { admin: Admin; offsetAsks: () => number } {
  let asks = 0;
  const admin = {
    createTopics: () => (createError === undefined ? Promise.resolve(true) : Promise.reject(createError)),
    fetchTopicOffsets: () => {
      asks += 1;
      return asks > unservedAsks ? Promise.resolve([]) : Promise.reject(unknownTopic());
    },
  };
  return { admin: admin as unknown as Admin, offsetAsks: () => asks };
}

const create = suite('createTopicsSettled');

create(
  'a creation kafkajs failed on "does not host this topic-partition" is waited out until offsets are served',
  async () => {
    const { admin, offsetAsks } = fakeAdmin(unknownTopic(), 2);
    await createTopicsSettled(admin, { topics: [{ topic: 't' }] });
    assert.is(offsetAsks(), 3);
  },
);

create('any other failure of the creation is thrown, and no offsets are asked', async () => {
  const denied = new Error('Topic authorization failed');
  const { admin, offsetAsks } = fakeAdmin(denied, 0);
  await createTopicsSettled(admin, { topics: [{ topic: 't' }] }).then(
    () => assert.unreachable('created'),
    (error: unknown) => assert.is(error, denied),
  );
  assert.is(offsetAsks(), 0);
});

create('a topic whose offsets are never served fails after the time-out', async () => {
  const { admin } = fakeAdmin(undefined, Number.POSITIVE_INFINITY);
  await createTopicsSettled(admin, { topics: [{ topic: 't' }], timeoutMs: 300 }).then(
    () => assert.unreachable('created'),
    (error: unknown) => assert.instance(error, kafkajs.KafkaJSProtocolError),
  );
});

create.run();
