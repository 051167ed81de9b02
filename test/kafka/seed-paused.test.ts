// A start that finds no broker answering waits for one (KAFKA_START_TIMEOUT_MS) instead of exiting:
// the only seed broker paused (SIGSTOP: connections open, nothing answers; kafkajs gave up with
// "Broker not connected" and the start failed), or a seed list whose first brokers are down. One
// line says it waits; the start goes on once a broker answers, and gives up with the reason after
// the time-out.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { freePorts, removeOwnBroker, startOwnBroker, type KafkaBroker } from '../helpers/kafka-broker.js';
import { runServerProcess, startChildServer, type LogLine } from '../helpers/child-server.js';
import { kafkaEnv, uniqueTopic, withKafka } from '../helpers/kafka.js';

const WAITING = /^no broker of KAFKA_BROKERS answers yet for the event topic/;
const isWaiting = (line: LogLine) => WAITING.test(String(line['msg']));

withKafka('seed broker paused at start', () => {
  const seed = suite<{ broker: KafkaBroker }>('kafka: a start with no broker answering');
  seed.before(async (context) => {
    context.broker = await startOwnBroker('seed-paused');
  });
  seed.after(async ({ broker }) => {
    broker?.resume();
    await removeOwnBroker(broker);
  });

  seed(
    'with its only seed broker paused, a start says once that it waits, and starts once the broker answers',
    async ({ broker }) => {
      broker.pause();
      let resumed = false;
      const lines: LogLine[] = [];
      let sawWaiting: () => void = () => undefined;
      const waiting = new Promise<void>((resolve) => (sawWaiting = resolve));
      const env = kafkaEnv(broker.brokers, uniqueTopic('seed-paused'), { KAFKA_START_TIMEOUT_MS: '120000' });
      const starting = startChildServer(env, {
        startTimeoutMs: 150_000,
        onLine: (line) => {
          lines.push(line);
          if (isWaiting(line)) sawWaiting();
        },
      });
      const server = await (async () => {
        try {
          await waiting;
          // Still waiting a few seconds later (no exit, no second line), then the broker comes back.
          await new Promise((resolve) => setTimeout(resolve, 5000));
          broker.resume();
          resumed = true;
          return await starting;
        } finally {
          if (!resumed) broker.resume();
        }
      })();
      try {
        await server.waitReady(60_000);
        assert.is(lines.filter(isWaiting).length, 1, 'one line says the start waits, however long');
        assert.ok(
          lines.some((line) => String(line['msg']).startsWith('Kafka answers: opened the event topic')),
          'a line says Kafka answered',
        );
        assert.is(
          (
            await server.request('/reports', {
              method: 'POST',
              json: JSON.stringify({ id: 1, name: 'after the wait' }),
            })
          ).status,
          200,
        );
      } finally {
        server.kill('SIGKILL');
      }
    },
  );

  seed('gives up after KAFKA_START_TIMEOUT_MS, naming it and the reason', async ({ broker }) => {
    broker.pause();
    try {
      const started = performance.now();
      const exit = await runServerProcess(
        kafkaEnv(broker.brokers, uniqueTopic('seed-gives-up'), { KAFKA_START_TIMEOUT_MS: '2000' }),
        { timeoutMs: 120_000 },
      );
      assert.is(exit.code, 1);
      assert.match(
        exit.stderr,
        /cannot use Kafka at .* \(KAFKA_BROKERS\): .* \(no broker answered within KAFKA_START_TIMEOUT_MS, 2000 ms\)/,
      );
      assert.ok(performance.now() - started < 90_000, 'gave up in time');
    } finally {
      broker.resume();
    }
  });

  seed('a seed list whose first broker is down starts on the one that answers', async ({ broker }) => {
    const [closed] = await freePorts(1);
    const env = kafkaEnv(`127.0.0.1:${closed},${broker.brokers}`, uniqueTopic('seed-down'), {
      KAFKA_START_TIMEOUT_MS: '60000',
    });
    const server = await startChildServer(env, { startTimeoutMs: 90_000 });
    try {
      await server.waitReady(60_000);
      assert.is(
        (await server.request('/reports', { method: 'POST', json: JSON.stringify({ id: 2, name: 'one seed down' }) }))
          .status,
        200,
      );
    } finally {
      server.kill('SIGKILL');
    }
  });

  seed.run();
});
