import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KeyedQueue } from '../../src/reports/keyed-queue.js';
import { deferred, rejection, withTimeout } from '../helpers/async.js';

const keyed = suite('KeyedQueue');

keyed('runs tasks of one key one after another, in the order given', async () => {
  const queue = new KeyedQueue();
  const trace: string[] = [];
  const gates = [deferred(), deferred(), deferred()];
  const runs = gates.map((gate, i) =>
    queue.run('k', async () => {
      trace.push(`start ${i}`);
      await gate.promise;
      trace.push(`end ${i}`);
      return i;
    }),
  );
  // Release the gates in reverse: a queue that let tasks overlap would finish 2 before 0.
  gates[2]?.resolve();
  gates[1]?.resolve();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(trace, ['start 0']);
  gates[0]?.resolve();
  assert.equal(await Promise.all(runs), [0, 1, 2]);
  assert.equal(trace, ['start 0', 'end 0', 'start 1', 'end 1', 'start 2', 'end 2']);
});

keyed('does not let a slow task of one key hold up another key', async () => {
  const queue = new KeyedQueue();
  const slowGate = deferred();
  let slowDone = false;
  const slow = queue.run('slow', async () => {
    await slowGate.promise;
    slowDone = true;
  });
  const fast = await withTimeout(
    queue.run('fast', () => Promise.resolve('fast done')),
    5000,
    'the task of another key',
  );
  assert.is(fast, 'fast done');
  assert.is(slowDone, false);
  slowGate.resolve();
  await slow;
});

keyed('runs the next task of a key after the previous one failed', async () => {
  const queue = new KeyedQueue();
  const failing = queue.run('k', () => Promise.reject(new Error('boom')));
  const next = queue.run('k', () => Promise.resolve('ran'));
  const error = await rejection(failing);
  assert.instance(error, Error);
  assert.is((error as Error).message, 'boom');
  assert.is(await next, 'ran');
});

keyed('forgets a key once its queue is empty', async () => {
  const queue = new KeyedQueue();
  await Promise.all([
    queue.run('a', () => Promise.resolve(1)),
    queue.run('b', () => Promise.resolve(2)),
    queue.run('a', () => Promise.resolve(3)),
  ]);
  await new Promise((resolve) => setImmediate(resolve));
  assert.is(queue.size, 0);
});

keyed('keeps a key while a task is still queued behind the finished one', async () => {
  const queue = new KeyedQueue();
  const gate = deferred();
  const first = queue.run('k', () => Promise.resolve(1));
  const second = queue.run('k', () => gate.promise);
  await first;
  await new Promise((resolve) => setImmediate(resolve));
  assert.is(queue.size, 1);
  gate.resolve();
  await second;
});

keyed('runs a task with two keys after the earlier tasks of both, and before later ones of either', async () => {
  const queue = new KeyedQueue();
  const trace: string[] = [];
  const [a, b] = [deferred(), deferred()];
  const first = queue.run('a', async () => {
    await a.promise;
    trace.push('a');
  });
  const second = queue.run('b', async () => {
    await b.promise;
    trace.push('b');
  });
  const both = queue.run(['a', 'b'], () => Promise.resolve(trace.push('a+b')));
  const later = queue.run('b', () => Promise.resolve(trace.push('later b')));
  b.resolve();
  await second;
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(trace, ['b'], 'the two-key task must wait for the task on a');
  a.resolve();
  await Promise.all([first, both, later]);
  assert.equal(trace, ['b', 'a', 'a+b', 'later b']);
});

keyed.run();
