// The start's wait for a broker (start-retry.ts), on a fake clock: an outage is tried again with one
// line until the time-out, a refusal is not, and the start goes on as soon as an attempt succeeds.
import kafkajs from 'kafkajs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { describeStartError } from '../../../src/log/kafka/client.js';
import { openWhenKafkaAnswers } from '../../../src/log/kafka/start-retry.js';
import { memoryLogger } from '../../helpers/server.js';

const config = { brokers: ['127.0.0.1:9'], topic: 't' } as unknown as Parameters<typeof describeStartError>[1];
const outage = () => describeStartError(new kafkajs.KafkaJSConnectionError('Broker not connected'), config);
const refusal = () =>
  describeStartError(new kafkajs.KafkaJSError('Topic authorization failed', { retriable: false }), config);

function fakeClock() {
  let nowMs = 0;
  const pauses: number[] = [];
  return {
    now: () => nowMs,
    sleep: (ms: number) => {
      pauses.push(ms);
      nowMs += ms;
      return Promise.resolve();
    },
    pauses,
    advance: (ms: number) => void (nowMs += ms),
  };
}

const retry = suite('openWhenKafkaAnswers');

retry('tries an outage again with growing pauses and one line, and opens once Kafka answers', async () => {
  const clock = fakeClock();
  const { logger, lines } = memoryLogger();
  let attempts = 0;
  const opened = await openWhenKafkaAnswers(
    () => {
      attempts += 1;
      return attempts < 5 ? Promise.reject(outage()) : Promise.resolve('log');
    },
    { timeoutMs: 60_000, logger, brokers: ['127.0.0.1:9'], what: 'the event topic t', ...clock },
  );
  assert.is(opened, 'log');
  assert.equal(clock.pauses, [500, 1000, 2000, 4000]);
  assert.is(
    lines().filter((line) => String(line['msg']).startsWith('no broker of KAFKA_BROKERS answers yet')).length,
    1,
  );
  assert.ok(
    lines().some((line) => line['msg'] === 'Kafka answers: opened the event topic t' && line['attempts'] === 5),
  );
});

retry('says it waits when the first attempt hangs unanswered (a paused broker), then that Kafka answers', async () => {
  const { logger, lines } = memoryLogger();
  let answer: (value: string) => void = () => undefined;
  const opening = openWhenKafkaAnswers(() => new Promise<string>((resolve) => (answer = resolve)), {
    timeoutMs: 60_000,
    logger,
    brokers: ['127.0.0.1:9'],
    what: 'the key topic k',
    slowAttemptMs: 20,
  });
  const waiting = () =>
    lines().filter((line) => String(line['msg']).startsWith('no broker of KAFKA_BROKERS answers yet'));
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.is(waiting().length, 0, 'not before the attempt has taken slowAttemptMs');
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.is(waiting().length, 1);
  assert.is(waiting()[0]?.['reason'], 'no answer within 20 ms');
  answer('log');
  assert.is(await opening, 'log');
  assert.is(waiting().length, 1, 'said once');
  assert.ok(lines().some((line) => line['msg'] === 'Kafka answers: opened the key topic k' && line['attempts'] === 1));
});

retry('says nothing of waiting when the first attempt answers in time', async () => {
  const { logger, lines } = memoryLogger();
  const opened = await openWhenKafkaAnswers(
    () => new Promise<string>((resolve) => setTimeout(() => resolve('log'), 5)),
    { timeoutMs: 60_000, logger, brokers: [], what: 'x', slowAttemptMs: 200 },
  );
  assert.is(opened, 'log');
  await new Promise((resolve) => setTimeout(resolve, 250));
  assert.equal(lines(), [], 'no line: the timer was cleared with the answer');
});

retry('gives up once KAFKA_START_TIMEOUT_MS has passed, naming it', async () => {
  const clock = fakeClock();
  const error = await openWhenKafkaAnswers(() => Promise.reject(outage()), {
    timeoutMs: 10_000,
    logger: memoryLogger().logger,
    brokers: [],
    what: 'x',
    ...clock,
  }).catch((caught: unknown) => caught);
  assert.instance(error, Error);
  assert.match(
    (error as Error).message,
    /Broker not connected \(no broker answered within KAFKA_START_TIMEOUT_MS, 10000 ms\)$/,
  );
  assert.is(
    clock.pauses.reduce((sum, ms) => sum + ms, 0),
    10_000,
    'the last pause ends at the time-out',
  );
});

retry('does not wait out a refusal: it stops the start at once', async () => {
  const clock = fakeClock();
  let attempts = 0;
  const failure = refusal();
  const error = await openWhenKafkaAnswers(
    () => {
      attempts += 1;
      return Promise.reject(failure);
    },
    { timeoutMs: 60_000, logger: memoryLogger().logger, brokers: [], what: 'x', ...clock },
  ).catch((caught: unknown) => caught);
  assert.is(error, failure);
  assert.is(attempts, 1);
});

retry('with KAFKA_START_TIMEOUT_MS=0 tries once', async () => {
  const clock = fakeClock();
  let attempts = 0;
  await openWhenKafkaAnswers(
    () => {
      attempts += 1;
      return Promise.reject(outage());
    },
    { timeoutMs: 0, logger: memoryLogger().logger, brokers: [], what: 'x', ...clock },
  ).catch(() => undefined);
  assert.is(attempts, 1);
});

retry.run();
