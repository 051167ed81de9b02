// The fetch gate: while a broker's fetch connection is not known to be up, its fetches go one at a
// time until one succeeds (kafkajs would open a socket for each and close only the last); then all
// at once; after a failure, one at a time again. A stand-in broker counts the fetches in flight
// (the real broker's sockets are counted in test/kafka/key-store.test.ts).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Broker, Cluster } from 'kafkajs';
import { fetchGated } from '../../src/log/kafka/fetch-gate.js';

function standIn(failing: readonly number[] = []) {
  let inFlight = 0;
  let most = 0;
  let calls = 0;
  const events: string[] = [];
  const broker = {
    name: 'stand-in',
    fetch: async () => {
      calls += 1;
      const call = calls;
      const fails = failing.includes(call);
      inFlight += 1;
      most = Math.max(most, inFlight);
      events.push(`start ${call}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
      events.push(`end ${call}`);
      inFlight -= 1;
      if (fails) throw new Error('connection lost');
      return { responses: [] };
    },
  };
  const cluster = { findBroker: () => Promise.resolve(broker), other: () => 'passed through' };
  return { cluster: fetchGated(cluster as unknown as Cluster), most: () => most, events, reset: () => (most = 0) };
}

const fetch = (broker: Broker) => broker.fetch({ maxWaitTime: 0, topics: [] });
const gate = suite('fetchGated');

gate('the first fetch to a broker goes alone, the others once it succeeded, together', async () => {
  const { cluster, most, events, reset } = standIn();
  const broker = await cluster.findBroker({ nodeId: '1' });
  await Promise.all([fetch(broker), fetch(broker), fetch(broker)]);
  assert.equal(events.slice(0, 2), ['start 1', 'end 1']);
  assert.is(most(), 2);
  reset();
  await Promise.all([fetch(broker), fetch(broker), fetch(broker)]);
  assert.is(most(), 3);
  assert.is(await cluster.findBroker({ nodeId: '1' }), broker, 'one gated broker per broker');
  assert.is((cluster as unknown as { other: () => string }).other(), 'passed through');
});

gate('after a failed fetch the next one goes alone again', async () => {
  const { cluster, events } = standIn([1]);
  const broker = await cluster.findBroker({ nodeId: '1' });
  await fetch(broker).catch(() => undefined);
  const results = await Promise.allSettled([fetch(broker), fetch(broker), fetch(broker)]);
  assert.equal(
    results.map((result) => result.status),
    ['fulfilled', 'fulfilled', 'fulfilled'],
  );
  assert.equal(events.slice(0, 4), ['start 1', 'end 1', 'start 2', 'end 2']);
});

gate('a fetch that fails once connected makes the next ones wait for one to succeed', async () => {
  const { cluster, events } = standIn([2]);
  const broker = await cluster.findBroker({ nodeId: '1' });
  await fetch(broker);
  assert.is(
    await fetch(broker).then(
      () => 'fulfilled',
      (error: Error) => error.message,
    ),
    'connection lost',
  );
  await Promise.all([fetch(broker), fetch(broker)]);
  assert.equal(events.slice(4, 6), ['start 3', 'end 3']);
});

gate.run();
