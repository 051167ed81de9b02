import { EventEmitter } from 'node:events';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BrokerReachability } from '../../../src/log/kafka/brokers.js';
import { memoryLogger } from '../../helpers/server.js';

const reach = suite('BrokerReachability');

reach(
  'warns once when a broker becomes unreachable, however often it fails, and says once when it answers again',
  () => {
    const { logger, lines } = memoryLogger();
    const brokers = new BrokerReachability(logger);
    for (let i = 0; i < 600; i += 1) brokers.failed('127.0.0.1:9092', 'Connection error: connect ECONNREFUSED');
    brokers.answered('127.0.0.1:9092');
    brokers.answered('127.0.0.1:9092');
    const said = lines().map(({ level, msg, broker }) => ({ level, msg, broker }));
    assert.equal(said, [
      { level: 40, msg: 'a Kafka broker is unreachable', broker: '127.0.0.1:9092' },
      { level: 30, msg: 'the Kafka broker answers again', broker: '127.0.0.1:9092' },
    ]);
    assert.is(brokers.outages, 1);
  },
);

reach('counts each outage of each broker', () => {
  const brokers = new BrokerReachability(memoryLogger().logger);
  brokers.failed('a:1', 'x');
  brokers.failed('b:1', 'x');
  brokers.answered('a:1');
  brokers.failed('a:1', 'x');
  assert.is(brokers.outages, 3);
});

reach('follows a client through its request and request-timeout events', () => {
  const { logger, lines } = memoryLogger();
  const brokers = new BrokerReachability(logger);
  const emitter = new EventEmitter();
  const client = {
    events: { REQUEST: 'producer.network.request', REQUEST_TIMEOUT: 'producer.network.request_timeout' },
    on: (event: string, listener: (event: { payload: { broker: string } }) => void) => emitter.on(event, listener),
  };
  brokers.watch(client);
  emitter.emit('producer.network.request_timeout', { payload: { broker: 'c:1' } });
  assert.is(brokers.outages, 1);
  emitter.emit('producer.network.request', { payload: { broker: 'c:1' } });
  assert.equal(
    lines().map(({ msg }) => msg),
    ['a Kafka broker is unreachable', 'the Kafka broker answers again'],
  );
});

reach('asks the unreachable brokers again, one round at a time, and marks those that answer', async () => {
  const brokers = new BrokerReachability(memoryLogger().logger);
  brokers.failed('up:1', 'x');
  brokers.failed('down:1', 'x');
  const asked: string[] = [];
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const round = brokers.recheck(async (broker) => {
    asked.push(broker);
    await gate;
    if (broker === 'down:1') throw new Error('still down');
  });
  await brokers.recheck(() => Promise.reject(new Error('a second round must not start')));
  release();
  await round;
  assert.equal(asked.sort(), ['down:1', 'up:1']);
  brokers.failed('up:1', 'x');
  assert.is(
    brokers.outages,
    3,
    'up:1 was marked reachable, so failing again is a new outage; down:1 still counts once',
  );
});

reach.run();
